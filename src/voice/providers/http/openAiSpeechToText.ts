import type { VendorOptions } from '../../../domain/vendorOptions.js';
import type { Logger } from '../../../logger.js';
import { encodeWav } from '../audio/wav.js';
import { ProviderError } from '../providerError.js';
import { matchPhrase } from '../stt/phraseGrammar.js';
import {
  type FinalTranscript,
  type PartialTranscript,
  type SpeechToText,
  type SpeechToTextSession,
  type SpeechToTextSessionOptions,
  telephoneSampleRateHz,
} from '../types.js';
import { type OpenAiCompatibleEndpoint, postJsonToProvider } from './openAiHttp.js';

export interface OpenAiSpeechToTextOptions {
  endpoint: OpenAiCompatibleEndpoint;
  /** e.g. `whisper-1`, `gpt-4o-transcribe`, or a self-hosted server's model name. */
  model: string;
  /** ISO-639-1 language of the callee, e.g. `en`; improves accuracy and latency when known. */
  language?: string;
  /** Longest utterance kept; audio beyond it is dropped. Default 60 000 ms. */
  maxUtteranceMs?: number;
  /** The agent's options (`prompt`, `temperature`), sent as form fields. */
  vendorOptions?: VendorOptions;
  logger?: Logger;
}

const providerName = 'openai-transcription';

/**
 * Speech-to-text through `POST {baseUrl}/audio/transcriptions`. Not streaming: the utterance is
 * buffered and sent as an 8 kHz WAV on `finish()`. Expected phrases are passed as the prompt,
 * which biases the model toward them without restricting it.
 */
export class OpenAiSpeechToText implements SpeechToText {
  readonly #options: OpenAiSpeechToTextOptions;

  constructor(options: OpenAiSpeechToTextOptions) {
    this.#options = options;
  }

  async startSession(options: SpeechToTextSessionOptions = {}): Promise<SpeechToTextSession> {
    return new OpenAiTranscriptionSession(this.#options, options);
  }

  async close(): Promise<void> {
    // Nothing held between requests.
  }
}

class OpenAiTranscriptionSession implements SpeechToTextSession {
  readonly #options: OpenAiSpeechToTextOptions;
  readonly #phrases: string[];
  readonly #abort = new AbortController();
  readonly #chunks: Int16Array[] = [];
  readonly #maxSampleCount: number;
  #sampleCount = 0;
  #state: 'listening' | 'finishing' | 'closed' = 'listening';

  constructor(options: OpenAiSpeechToTextOptions, sessionOptions: SpeechToTextSessionOptions) {
    this.#options = options;
    this.#phrases = sessionOptions.phrases ?? [];
    this.#maxSampleCount = ((options.maxUtteranceMs ?? 60_000) * telephoneSampleRateHz) / 1000;
    sessionOptions.signal?.addEventListener('abort', () => this.#abort.abort(sessionOptions.signal?.reason), {
      once: true,
    });
  }

  pushAudio(samples: Int16Array): void {
    if (this.#state !== 'listening') return;
    const room = this.#maxSampleCount - this.#sampleCount;
    if (room <= 0) return;
    const kept = samples.length <= room ? samples.slice() : samples.slice(0, room);
    this.#chunks.push(kept);
    this.#sampleCount += kept.length;
  }

  onPartial(_listener: (partial: PartialTranscript) => void): void {
    // This endpoint returns one result per upload: there are no partials.
  }

  async finish(): Promise<FinalTranscript> {
    if (this.#state !== 'listening')
      throw new ProviderError(providerName, 'session already finished or closed');
    this.#state = 'finishing';
    const samples = new Int16Array(this.#sampleCount);
    let offset = 0;
    for (const chunk of this.#chunks) {
      samples.set(chunk, offset);
      offset += chunk.length;
    }
    this.#chunks.length = 0;
    const form = new FormData();
    form.append(
      'file',
      new Blob([encodeWav(samples, telephoneSampleRateHz)], { type: 'audio/wav' }),
      'utterance.wav',
    );
    form.append('model', this.#options.model);
    form.append('response_format', 'json');
    if (this.#options.language) form.append('language', this.#options.language);
    const { prompt, ...vendorFields } = this.#options.vendorOptions ?? {};
    const expected = this.#phrases.length > 0 ? `Expected answers: ${this.#phrases.join('; ')}.` : '';
    const fullPrompt = [prompt, expected].filter(Boolean).join(' ');
    if (fullPrompt) form.append('prompt', fullPrompt);
    for (const [name, value] of Object.entries(vendorFields)) form.append(name, String(value));
    const answer = await postJsonToProvider({
      providerName,
      endpoint: this.#options.endpoint,
      path: '/audio/transcriptions',
      body: form,
      signal: this.#abort.signal,
    });
    const text = (answer as { text?: unknown }).text;
    if (typeof text !== 'string') throw new ProviderError(providerName, 'answer has no text');
    const trimmed = text.trim();
    const matchedPhrase = matchPhrase(trimmed, this.#phrases);
    this.#options.logger?.debug(
      { audioMs: samples.length / 8, matched: matchedPhrase !== undefined },
      'transcribed',
    );
    return matchedPhrase === undefined ? { text: trimmed } : { text: trimmed, matchedPhrase };
  }

  close(): void {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    this.#chunks.length = 0;
    this.#abort.abort(new ProviderError(providerName, 'session closed'));
  }
}
