import { randomUUID } from 'node:crypto';
import { vendorErrorCode } from '../../../domain/secretScrubbing.js';
import type { VendorOptions } from '../../../domain/vendorOptions.js';
import type { Logger } from '../../../logger.js';
import type { GuardedConnections } from '../../../net/guardedConnections.js';
import type { AudioChunk, SynthesizeOptions, TextToSpeech } from '../types.js';
import { SocketWarmer, streamReplyOverSocket, webSocketBase } from './replySocket.js';

export interface CartesiaTextToSpeechOptions {
  apiKey: string;
  /** `wss://api.cartesia.ai` when absent. */
  baseUrl?: string | null;
  /** Default `sonic-3`. */
  modelId?: string;
  /** A Cartesia voice id, when the agent names none. */
  defaultVoiceId?: string;
  /** ISO 639-1, e.g. `en`. */
  language?: string;
  /**
   * The agent's options: `speed`, `volume`, `emotion` go in the request's `generation_config`;
   * `max_buffer_delay_ms` and `pronunciation_dict_id` are fields of the request itself.
   */
  vendorOptions?: VendorOptions;
  /** The address guard of every socket (an account's base URL); absent: none. */
  connections?: GuardedConnections;
  logger?: Logger;
}

const generationConfigNames = new Set(['speed', 'volume', 'emotion']);

/** The agent's options as fields of a generation request. */
function requestFields(vendorOptions: VendorOptions): Record<string, unknown> {
  const entries = Object.entries(vendorOptions);
  const generationConfig = Object.fromEntries(entries.filter(([name]) => generationConfigNames.has(name)));
  return {
    ...Object.fromEntries(entries.filter(([name]) => !generationConfigNames.has(name))),
    ...(Object.keys(generationConfig).length > 0 ? { generation_config: generationConfig } : {}),
  };
}

/** The API version the messages below follow (Cartesia's TTS WebSocket reference, 2026-03-01). */
export const cartesiaVersion = '2026-03-01';
const defaultVoiceId = 'a0e99841-438c-4a64-b679-ae501e7d6091';

/**
 * Cartesia text-to-speech over its WebSocket (`/tts/websocket`) with `ws`: the SDK forces `wss://`
 * and throws a refused upgrade where no listener can catch it (see docs/decisions.md). One
 * generation request per reply with its own `context_id`, audio asked as raw `pcm_mulaw` at 8 kHz —
 * the telephone's format — yielded chunk by chunk until `done`; an abort sends the documented
 * cancel for the context and closes the socket.
 */
export class CartesiaTextToSpeech implements TextToSpeech {
  readonly #url: string;
  readonly #headers: Record<string, string>;
  readonly #warmer: SocketWarmer;

  constructor(private readonly options: CartesiaTextToSpeechOptions) {
    this.#url = `${webSocketBase(options.baseUrl, 'wss://api.cartesia.ai')}/tts/websocket`;
    this.#headers = { Authorization: `Bearer ${options.apiKey}`, 'Cartesia-Version': cartesiaVersion };
    this.#warmer = new SocketWarmer(this.#headers, options.connections);
  }

  /** Opens the next reply's socket now (one per reply: an abort closes it). */
  prepare(): void {
    this.#warmer.warm(this.#url);
  }

  synthesize(text: string, options: SynthesizeOptions = {}): AsyncIterable<AudioChunk> {
    const contextId = randomUUID();
    return streamReplyOverSocket({
      provider: 'cartesia',
      url: this.#url,
      headers: this.#headers,
      warmer: this.#warmer,
      connections: this.options.connections,
      signal: options.signal,
      openingMessages: [
        {
          ...requestFields(this.options.vendorOptions ?? {}),
          model_id: this.options.modelId ?? 'sonic-3',
          transcript: text.trim(),
          voice: { mode: 'id', id: options.voice ?? this.options.defaultVoiceId ?? defaultVoiceId },
          ...(this.options.language ? { language: this.options.language } : {}),
          context_id: contextId,
          output_format: { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 8000 },
          continue: false,
        },
      ],
      cancelMessage: { context_id: contextId, cancel: true },
      readMessage: (message) => {
        if (message.context_id !== undefined && message.context_id !== contextId) return { kind: 'ignore' };
        if (message.type === 'error') {
          // The status and code only: the title and message are the vendor's free text.
          const what = vendorErrorCode(message.error_code, [this.options.apiKey]) ?? 'error';
          const status = typeof message.status_code === 'number' ? message.status_code : undefined;
          return { kind: 'error', message: what, ...(status ? { status } : {}) };
        }
        const last = message.type === 'done' || message.done === true;
        if (message.type === 'chunk')
          return { kind: 'audio', mulawBase64: typeof message.data === 'string' ? message.data : '', last };
        return last ? { kind: 'end' } : { kind: 'ignore' };
      },
    });
  }

  async close(): Promise<void> {
    // Each reply's socket closes with it; a spare opened ahead closes here.
    this.#warmer.close();
  }
}
