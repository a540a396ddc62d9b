import { vendorErrorCode } from '../../../domain/secretScrubbing.js';
import type { VendorOptions } from '../../../domain/vendorOptions.js';
import type { Logger } from '../../../logger.js';
import type { GuardedConnections } from '../../../net/guardedConnections.js';
import type { AudioChunk, SynthesizeOptions, TextToSpeech } from '../types.js';
import { SocketWarmer, streamReplyOverSocket, webSocketBase } from './replySocket.js';

export interface DeepgramTextToSpeechOptions {
  apiKey: string;
  /** `wss://api.deepgram.com` when absent; a self-hosted or test endpoint otherwise. */
  baseUrl?: string | null;
  /** The Aura voice model when the agent names none; default `aura-2-thalia-en`. */
  model?: string;
  /** The agent's options (`speed`, `mip_opt_out`), sent as query parameters of the socket. */
  vendorOptions?: VendorOptions;
  /** The address guard of every socket (an account's base URL); absent: none. */
  connections?: GuardedConnections;
  logger?: Logger;
}

/**
 * Deepgram Aura text-to-speech over its streaming WebSocket (`/v1/speak`), with `ws`: the SDK's
 * socket parses every frame as JSON, and Aura's audio arrives as binary frames, which it cannot
 * pass on (docs/decisions.md). The socket asks for `encoding=mulaw&sample_rate=8000` — the
 * telephone's format — the text goes as `{"type":"Speak"}` then `{"type":"Flush"}`, audio frames are
 * yielded as they arrive and `Flushed` ends the reply; a barge-in sends `{"type":"Clear"}` and
 * closes. In Aura the voice is the model (`aura-2-thalia-en`, `aura-2-orion-en`…).
 */
export class DeepgramTextToSpeech implements TextToSpeech {
  readonly #headers: Record<string, string>;
  readonly #warmer: SocketWarmer;

  constructor(private readonly options: DeepgramTextToSpeechOptions) {
    this.#headers = { Authorization: `Token ${options.apiKey}` };
    this.#warmer = new SocketWarmer(this.#headers, options.connections);
  }

  #urlOf(voice: string | undefined): string {
    const query = new URLSearchParams({
      model: voice ?? this.options.model ?? 'aura-2-thalia-en',
      encoding: 'mulaw',
      sample_rate: '8000',
    });
    for (const [name, value] of Object.entries(this.options.vendorOptions ?? {}))
      query.set(name, String(value));
    return `${webSocketBase(this.options.baseUrl, 'wss://api.deepgram.com')}/v1/speak?${query}`;
  }

  /** Opens the next reply's socket now (one per reply: barge-in closes it). */
  prepare(options: { voice?: string } = {}): void {
    this.#warmer.warm(this.#urlOf(options.voice));
  }

  synthesize(text: string, options: SynthesizeOptions = {}): AsyncIterable<AudioChunk> {
    return streamReplyOverSocket({
      provider: 'deepgram-aura',
      url: this.#urlOf(options.voice),
      headers: this.#headers,
      warmer: this.#warmer,
      connections: this.options.connections,
      binaryAudio: true,
      signal: options.signal,
      openingMessages: [{ type: 'Speak', text: text.trim() }, { type: 'Flush' }],
      cancelMessage: { type: 'Clear' },
      readMessage: (message) => {
        if (message.type === 'Flushed') return { kind: 'end' };
        if (message.type === 'Warning')
          this.options.logger?.warn(
            { code: vendorErrorCode(message.code, [this.options.apiKey]) },
            'deepgram aura warning',
          );
        if (message.type === 'Error' || message.err_code !== undefined)
          return {
            kind: 'error',
            // The code only: err_msg/description are the vendor's free text.
            message: vendorErrorCode(message.err_code ?? message.code, [this.options.apiKey]) ?? 'error',
          };
        return { kind: 'ignore' };
      },
    });
  }

  async close(): Promise<void> {
    // Each reply's socket closes with it; a spare opened ahead closes here.
    this.#warmer.close();
  }
}
