import { vendorErrorCode } from '../../../domain/secretScrubbing.js';
import type { VendorOptions } from '../../../domain/vendorOptions.js';
import type { Logger } from '../../../logger.js';
import type { GuardedConnections } from '../../../net/guardedConnections.js';
import type { AudioChunk, SynthesizeOptions, TextToSpeech } from '../types.js';
import { SocketWarmer, streamReplyOverSocket, webSocketBase } from './replySocket.js';

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
  /**
   * The agent's options: `enable_logging`, `auto_mode`… go in the socket's query; `stability`,
   * `similarity_boost`, `style`, `use_speaker_boost`, `speed` in the first message's `voice_settings`;
   * `chunk_length_schedule` ("120,160,250,290") in its `generation_config`.
   */
  vendorOptions?: VendorOptions;
  /** The address guard of every socket (an account's base URL); absent: none. */
  connections?: GuardedConnections;
  logger?: Logger;
}

const voiceSettingNames = new Set(['stability', 'similarity_boost', 'style', 'use_speaker_boost', 'speed']);

/** The first message of a reply: `" "`, with the agent's voice settings and generation config. */
function openingMessage(vendorOptions: VendorOptions): Record<string, unknown> {
  const voiceSettings = Object.fromEntries(
    Object.entries(vendorOptions).filter(([name]) => voiceSettingNames.has(name)),
  );
  const schedule = vendorOptions.chunk_length_schedule;
  return {
    text: ' ',
    ...(Object.keys(voiceSettings).length > 0 ? { voice_settings: voiceSettings } : {}),
    ...(typeof schedule === 'string'
      ? { generation_config: { chunk_length_schedule: schedule.split(',').map(Number) } }
      : {}),
  };
}

/** "Rachel", one of ElevenLabs' premade voices. */
const premadeVoiceId = '21m00Tcm4TlvDq8ikWAM';

/**
 * ElevenLabs text-to-speech over its `stream-input` WebSocket (the Node SDK has no client for it,
 * so `ws` speaks the documented protocol): the socket asks for `output_format=ulaw_8000` — 8 kHz
 * μ-law, the telephone's own format, so nothing is resampled — the text goes in after the
 * documented opening `" "` and is flushed, `""` ends the input, and audio chunks are yielded as
 * they arrive until `isFinal`. One socket per reply keeps barge-in simple: aborting closes it.
 */
export class ElevenLabsTextToSpeech implements TextToSpeech {
  readonly #warmer: SocketWarmer;

  constructor(private readonly options: ElevenLabsTextToSpeechOptions) {
    this.#warmer = new SocketWarmer({ 'xi-api-key': options.apiKey }, options.connections);
  }

  /** The socket of a voice (the voice is in its path, the audio format in its query). */
  #urlOf(voice: string | undefined): string {
    const voiceId = voice ?? this.options.defaultVoiceId ?? premadeVoiceId;
    const query = new URLSearchParams({
      model_id: this.options.modelId ?? 'eleven_flash_v2_5',
      output_format: 'ulaw_8000',
      ...(this.options.language ? { language_code: this.options.language } : {}),
    });
    for (const [name, value] of Object.entries(this.options.vendorOptions ?? {}))
      if (!voiceSettingNames.has(name) && name !== 'chunk_length_schedule') query.set(name, String(value));
    const base = webSocketBase(this.options.baseUrl, 'wss://api.elevenlabs.io');
    return `${base}/v1/text-to-speech/${encodeURIComponent(voiceId)}/stream-input?${query}`;
  }

  /** Opens the next reply's socket now (one per reply: barge-in closes it). */
  prepare(options: { voice?: string } = {}): void {
    this.#warmer.warm(this.#urlOf(options.voice));
  }

  synthesize(text: string, options: SynthesizeOptions = {}): AsyncIterable<AudioChunk> {
    return streamReplyOverSocket({
      provider: 'elevenlabs',
      url: this.#urlOf(options.voice),
      headers: { 'xi-api-key': this.options.apiKey },
      warmer: this.#warmer,
      connections: this.options.connections,
      signal: options.signal,
      openingMessages: [
        openingMessage(this.options.vendorOptions ?? {}),
        { text: `${text.trim()} `, flush: true },
        { text: '' },
      ],
      readMessage: (message) => {
        if (typeof message.error === 'string' || (typeof message.message === 'string' && !message.audio))
          // The code only: the message is the vendor's free text (it may echo the key).
          return { kind: 'error', message: vendorErrorCode(message.error, [this.options.apiKey]) ?? 'error' };
        const last = message.isFinal === true;
        if (typeof message.audio === 'string' && message.audio.length > 0)
          return { kind: 'audio', mulawBase64: message.audio, last };
        return last ? { kind: 'end' } : { kind: 'ignore' };
      },
    });
  }

  async close(): Promise<void> {
    // Each reply's socket closes with it; a spare opened ahead closes here.
    this.#warmer.close();
  }
}
