import WebSocket from 'ws';
import type { Logger } from '../../../logger.js';
import { decodeG711 } from '../../../telephony/rtp/g711.js';
import { abortReason, ProviderError } from '../providerError.js';
import type { AudioChunk, SynthesizeOptions, TextToSpeech } from '../types.js';
import { AudioReplyQueue } from './audioReplyQueue.js';

export interface ElevenLabsTextToSpeechOptions {
  apiKey: string;
  /** `wss://api.elevenlabs.io` when absent; a test or proxy endpoint otherwise (ws, wss, http, https). */
  baseUrl?: string | null;
  /** Default `eleven_flash_v2_5`, the low-latency model. */
  modelId?: string;
  /** The voice when the agent names none (an ElevenLabs voice id). */
  defaultVoiceId?: string;
  /** ISO 639-1, e.g. `en`; sent as `language_code`. */
  language?: string;
  logger?: Logger;
}

const providerName = 'elevenlabs';
/** "Rachel", one of ElevenLabs' premade voices. */
const premadeVoiceId = '21m00Tcm4TlvDq8ikWAM';

/** A message of the stream-input socket, as ElevenLabs documents it (the fields we read). */
interface StreamOutput {
  audio?: string | null;
  isFinal?: boolean | null;
  error?: string;
  message?: string;
}

function webSocketBase(baseUrl: string | null | undefined): string {
  const base = (baseUrl ?? 'wss://api.elevenlabs.io').replace(/\/+$/, '');
  return base.replace(/^http(s?):/, 'ws$1:');
}

/**
 * ElevenLabs text-to-speech over its `stream-input` WebSocket (the Node SDK has no client for it,
 * so `ws` speaks the documented protocol): the socket asks for `output_format=ulaw_8000` — 8 kHz
 * μ-law, the telephone's own format, so nothing is resampled — the text goes in after the
 * documented opening `" "` and is flushed, `""` ends the input, and audio chunks are yielded as
 * they arrive until `isFinal`. One socket per reply keeps barge-in simple: aborting closes it.
 */
export class ElevenLabsTextToSpeech implements TextToSpeech {
  constructor(private readonly options: ElevenLabsTextToSpeechOptions) {}

  async *synthesize(text: string, options: SynthesizeOptions = {}): AsyncIterable<AudioChunk> {
    const voiceId = options.voice ?? this.options.defaultVoiceId ?? premadeVoiceId;
    const query = new URLSearchParams({
      model_id: this.options.modelId ?? 'eleven_flash_v2_5',
      output_format: 'ulaw_8000',
      ...(this.options.language ? { language_code: this.options.language } : {}),
    });
    const url = `${webSocketBase(this.options.baseUrl)}/v1/text-to-speech/${encodeURIComponent(voiceId)}/stream-input?${query}`;
    const signal = options.signal;
    if (signal?.aborted) throw abortReason(signal);

    const reply = new AudioReplyQueue();
    const fail = (error: unknown) => reply.fail(error);

    const socket = new WebSocket(url, { headers: { 'xi-api-key': this.options.apiKey } });
    const onAbort = () => {
      fail(signal ? abortReason(signal) : new Error('aborted'));
      socket.terminate();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.on('unexpected-response', (_request, response) => {
      fail(
        new ProviderError(providerName, `the socket was refused (HTTP ${response.statusCode})`, {
          ...(response.statusCode ? { providerStatus: response.statusCode } : {}),
        }),
      );
      socket.terminate();
    });
    socket.on('error', (error) =>
      fail(new ProviderError(providerName, `socket error: ${error.message.slice(0, 200)}`)),
    );
    socket.on('open', () => {
      socket.send(JSON.stringify({ text: ' ' }));
      socket.send(JSON.stringify({ text: `${text.trim()} `, flush: true }));
      socket.send(JSON.stringify({ text: '' }));
    });
    socket.on('message', (data, isBinary) => {
      let message: StreamOutput;
      try {
        if (isBinary) throw new Error('binary frame');
        message = JSON.parse(String(data)) as StreamOutput;
      } catch {
        fail(new ProviderError(providerName, 'sent a frame that is not a JSON message'));
        socket.terminate();
        return;
      }
      if (message.error || (message.message && !message.audio)) {
        fail(
          new ProviderError(
            providerName,
            `${message.error ?? 'error'}: ${(message.message ?? '').slice(0, 200)}`,
          ),
        );
        socket.close();
        return;
      }
      if (typeof message.audio === 'string' && message.audio.length > 0) {
        const bytes = Buffer.from(message.audio, 'base64');
        if (bytes.length === 0) {
          fail(new ProviderError(providerName, 'sent audio that does not decode'));
          socket.terminate();
          return;
        }
        reply.push({ samples: decodeG711('PCMU', new Uint8Array(bytes)), sampleRateHz: 8000 });
      }
      if (message.isFinal === true) {
        reply.finish();
        socket.close(1000);
      }
    });
    socket.on('close', (code, reason) => {
      if (!reply.finished)
        fail(
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
