import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import type { Logger } from '../../../logger.js';
import { decodeG711 } from '../../../telephony/rtp/g711.js';
import { abortReason, ProviderError } from '../providerError.js';
import type { AudioChunk, SynthesizeOptions, TextToSpeech } from '../types.js';
import { AudioReplyQueue } from './audioReplyQueue.js';

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
  logger?: Logger;
}

const providerName = 'cartesia';
/** The API version the messages below follow (Cartesia's TTS WebSocket reference, 2026-03-01). */
export const cartesiaVersion = '2026-03-01';
const defaultVoiceId = 'a0e99841-438c-4a64-b679-ae501e7d6091';

/** A response of the TTS socket, as Cartesia documents it (the fields we read). */
interface CartesiaResponse {
  type?: string;
  data?: string;
  done?: boolean;
  context_id?: string;
  status_code?: number;
  error?: string;
  error_code?: string;
  title?: string;
  message?: string;
}

/**
 * Cartesia text-to-speech over its WebSocket (`/tts/websocket`) with `ws`: the SDK forces `wss://`
 * and throws a refused upgrade where no listener can catch it (see docs/decisions.md). One
 * generation request per reply with its own `context_id`, audio asked as raw `pcm_mulaw` at 8 kHz —
 * the telephone's format — yielded chunk by chunk until `done`; an abort sends the documented
 * cancel for the context and closes the socket.
 */
export class CartesiaTextToSpeech implements TextToSpeech {
  constructor(private readonly options: CartesiaTextToSpeechOptions) {}

  async *synthesize(text: string, options: SynthesizeOptions = {}): AsyncIterable<AudioChunk> {
    const signal = options.signal;
    if (signal?.aborted) throw abortReason(signal);
    const base = (this.options.baseUrl ?? 'wss://api.cartesia.ai')
      .replace(/\/+$/, '')
      .replace(/^http(s?):/, 'ws$1:');
    const contextId = randomUUID();
    const reply = new AudioReplyQueue();
    const socket = new WebSocket(`${base}/tts/websocket`, {
      headers: { Authorization: `Bearer ${this.options.apiKey}`, 'Cartesia-Version': cartesiaVersion },
    });
    const onAbort = () => {
      reply.fail(signal ? abortReason(signal) : new Error('aborted'));
      if (socket.readyState === WebSocket.OPEN)
        socket.send(JSON.stringify({ context_id: contextId, cancel: true }));
      socket.terminate();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.on('unexpected-response', (_request, response) => {
      reply.fail(
        new ProviderError(providerName, `the socket was refused (HTTP ${response.statusCode})`, {
          ...(response.statusCode ? { providerStatus: response.statusCode } : {}),
        }),
      );
      socket.terminate();
    });
    socket.on('error', (error) =>
      reply.fail(new ProviderError(providerName, `socket error: ${error.message.slice(0, 200)}`)),
    );
    socket.on('open', () => {
      socket.send(
        JSON.stringify({
          model_id: this.options.modelId ?? 'sonic-3',
          transcript: text.trim(),
          voice: { mode: 'id', id: options.voice ?? this.options.defaultVoiceId ?? defaultVoiceId },
          ...(this.options.language ? { language: this.options.language } : {}),
          context_id: contextId,
          output_format: { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 8000 },
          continue: false,
        }),
      );
    });
    socket.on('message', (data, isBinary) => {
      let response: CartesiaResponse;
      try {
        if (isBinary) throw new Error('binary frame');
        response = JSON.parse(String(data)) as CartesiaResponse;
      } catch {
        reply.fail(new ProviderError(providerName, 'sent a frame that is not a JSON message'));
        socket.terminate();
        return;
      }
      if (response.context_id !== undefined && response.context_id !== contextId) return;
      if (response.type === 'error') {
        const what = response.error_code ?? response.title ?? 'error';
        const detail = response.message ?? response.error ?? '';
        reply.fail(
          new ProviderError(providerName, `${what}: ${detail.slice(0, 200)}`, {
            ...(response.status_code ? { providerStatus: response.status_code } : {}),
          }),
        );
        socket.close();
        return;
      }
      if (response.type === 'chunk') {
        const bytes =
          typeof response.data === 'string' ? Buffer.from(response.data, 'base64') : Buffer.alloc(0);
        if (bytes.length === 0) {
          reply.fail(new ProviderError(providerName, 'sent a chunk without audio'));
          socket.terminate();
          return;
        }
        reply.push({ samples: decodeG711('PCMU', new Uint8Array(bytes)), sampleRateHz: 8000 });
      }
      if (response.type === 'done' || response.done === true) {
        reply.finish();
        socket.close(1000);
      }
    });
    socket.on('close', (code, reason) => {
      if (!reply.finished)
        reply.fail(
          new ProviderError(
            providerName,
            `the socket closed before the end of the audio (${code} ${String(reason) || 'no reason'})`,
          ),
        );
    });
    try {
      yield* reply.drain();
    } finally {
      signal?.removeEventListener('abort', onAbort);
      if (socket.readyState === WebSocket.CONNECTING || socket.readyState === WebSocket.OPEN)
        socket.terminate();
    }
  }

  async close(): Promise<void> {
    // One socket per reply, closed with it.
  }
}
