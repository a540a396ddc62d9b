import type { VendorOptions } from '../../../domain/vendorOptions.js';
import type { Logger } from '../../../logger.js';
import { createResampler, resample } from '../audio/resampler.js';
import { decodeWav, int16FromLittleEndianBytes } from '../audio/wav.js';
import { ProviderError } from '../providerError.js';
import {
  type AudioChunk,
  type SynthesizeOptions,
  type TextToSpeech,
  telephoneSampleRateHz,
} from '../types.js';
import { type OpenAiCompatibleEndpoint, postToProvider, readBodyPieces } from './openAiHttp.js';

export interface OpenAiTextToSpeechOptions {
  endpoint: OpenAiCompatibleEndpoint;
  /** e.g. `tts-1`, `gpt-4o-mini-tts`, or whatever a self-hosted server calls its model. */
  model: string;
  /** Default `alloy`. */
  defaultVoice?: string;
  /**
   * `pcm` (default) streams raw 16-bit little-endian mono, converted to 8 kHz as it arrives;
   * `wav` is read whole and converted from whatever rate its header states.
   */
  responseFormat?: 'pcm' | 'wav';
  /** Rate of `pcm` answers, which carry no header. OpenAI sends 24 000 Hz (the default). */
  pcmSampleRateHz?: number;
  /** The agent's options (`speed`, `instructions`), sent as fields of the request body. */
  vendorOptions?: VendorOptions;
  logger?: Logger;
}

const providerName = 'openai-speech';

/** Text-to-speech through `POST {baseUrl}/audio/speech`; yields 8 kHz mono PCM. */
export class OpenAiTextToSpeech implements TextToSpeech {
  readonly #options: OpenAiTextToSpeechOptions;

  constructor(options: OpenAiTextToSpeechOptions) {
    this.#options = options;
  }

  async *synthesize(text: string, options: SynthesizeOptions = {}): AsyncIterable<AudioChunk> {
    if (text.trim() === '') return;
    const responseFormat = this.#options.responseFormat ?? 'pcm';
    const providerResponse = await postToProvider({
      providerName,
      endpoint: this.#options.endpoint,
      path: '/audio/speech',
      body: JSON.stringify({
        ...this.#options.vendorOptions,
        model: this.#options.model,
        input: text,
        voice: options.voice ?? this.#options.defaultVoice ?? 'alloy',
        response_format: responseFormat,
      }),
      signal: options.signal,
    });

    if (responseFormat === 'wav') {
      const parts: Uint8Array[] = [];
      for await (const piece of readBodyPieces(providerResponse)) parts.push(piece);
      let audio: ReturnType<typeof decodeWav>;
      try {
        audio = decodeWav(Buffer.concat(parts));
      } catch (error) {
        throw new ProviderError(providerName, `answered with unreadable audio: ${(error as Error).message}`);
      }
      yield {
        samples: resample(audio.samples, audio.sampleRateHz, telephoneSampleRateHz),
        sampleRateHz: telephoneSampleRateHz,
      };
      return;
    }

    const resampler = createResampler({
      inputSampleRateHz: this.#options.pcmSampleRateHz ?? 24_000,
      outputSampleRateHz: telephoneSampleRateHz,
    });
    // A network piece may end in the middle of a sample; its first byte waits for the next piece.
    let carriedByte: number | undefined;
    for await (const piece of readBodyPieces(providerResponse)) {
      let bytes = piece;
      if (carriedByte !== undefined) {
        bytes = new Uint8Array(piece.length + 1);
        bytes[0] = carriedByte;
        bytes.set(piece, 1);
        carriedByte = undefined;
      }
      if (bytes.length % 2 === 1) {
        carriedByte = bytes[bytes.length - 1];
        bytes = bytes.subarray(0, bytes.length - 1);
      }
      const samples = resampler.push(int16FromLittleEndianBytes(bytes));
      if (samples.length > 0) yield { samples, sampleRateHz: telephoneSampleRateHz };
    }
    const tail = resampler.flush();
    if (tail.length > 0) yield { samples: tail, sampleRateHz: telephoneSampleRateHz };
    this.#options.logger?.debug({ model: this.#options.model }, 'speech stream finished');
  }

  async close(): Promise<void> {
    // Nothing held between requests.
  }
}
