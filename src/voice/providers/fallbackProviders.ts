import type { UsageMeter } from '../../domain/usage.js';
import { abortReason, failureKindOf, ProviderError, type ProviderFailureKind } from './providerError.js';
import {
  type AudioChunk,
  type FinalTranscript,
  type PartialTranscript,
  type SpeechToText,
  type SpeechToTextSession,
  type SpeechToTextSessionOptions,
  type SynthesizeOptions,
  type TextToSpeech,
  telephoneSampleRateHz,
} from './types.js';

/** A vendor that said nothing in time: skipped for the next choice, never reconnected to. */
export class VendorTimeoutError extends ProviderError {
  constructor(provider: string, message: string, kind: 'timeout' | 'stall' = 'timeout') {
    super(provider, message, { kind });
  }
}

/**
 * Worth one more stream to the same vendor: a connection that dropped or broke (no HTTP status, not
 * a timeout). A refusal (401, 403, 400…) or a vendor that hangs goes to the next choice instead.
 */
function worthReconnecting(error: unknown): boolean {
  return (
    error instanceof ProviderError &&
    !(error instanceof VendorTimeoutError) &&
    error.providerStatus === undefined
  );
}

/**
 * A call's providers for one stage, in the order the agent chose them: a vendor that refuses,
 * errors or says nothing in time is skipped for the next. Each failure is reported (stage,
 * provider, status — never a credential) so the call record can say which vendor failed.
 */

export type VoiceStage = 'stt' | 'tts' | 'llm' | 'realtime';

/**
 * Every choice of a stage that holds a vendor has failed: the call cannot go on (the conversation
 * apologises and ends it `provider_error`). A stage of the offline engine alone throws the
 * engine's own error instead, which costs one turn, as before.
 */
export class StageExhaustedError extends ProviderError {
  constructor(
    readonly stage: VoiceStage,
    last: unknown,
  ) {
    super(
      last instanceof ProviderError ? last.provider : stage,
      `every ${stage} provider failed; the last: ${last instanceof Error ? last.message : String(last)}`,
      {
        ...(last instanceof ProviderError && last.providerStatus !== undefined
          ? { providerStatus: last.providerStatus }
          : {}),
        cause: last,
      },
    );
    this.name = 'StageExhaustedError';
  }
}

export interface ProviderFailure {
  stage: VoiceStage;
  provider: string;
  /** The vendor's HTTP or close status when it gave one. */
  status: number | null;
  /** What went wrong (refused, timeout, stall, garbage, error_frame, closed…). */
  kind: ProviderFailureKind;
  reason: string;
  /** Milliseconds since the failure list was created (the call's start). */
  atMs: number;
}

/**
 * A call's provider failures: every failure of every stage — before the first audio or in the middle
 * of a sentence, during ringing or mid-call, and the one that kept a call from being dialled — is
 * written here and only here, so this is the one place that decides what of a vendor's message is
 * kept.
 */
export class ProviderFailureLog {
  readonly failures: ProviderFailure[] = [];
  readonly #startedAtMs = performance.now();

  note(stage: VoiceStage, provider: string, error: unknown): void {
    const status = error instanceof ProviderError ? (error.providerStatus ?? null) : null;
    const reason = error instanceof Error ? error.message : String(error);
    this.failures.push({
      stage,
      provider,
      status,
      kind: failureKindOf(error),
      reason: reason.slice(0, 300),
      atMs: Math.round(performance.now() - this.#startedAtMs),
    });
  }
}

export interface TtsChoiceInUse {
  /** The provider's name as the agent's settings give it (`elevenlabs`, `flite`…). */
  provider: string;
  tts: TextToSpeech;
  voice?: string;
  /** For the usage report (and its price). */
  model?: string;
  /** A vendor's first audio must arrive within this; none for the offline engine (its own limits). */
  firstAudioTimeoutMs?: number;
  /** Once it has spoken, a vendor may not go quiet mid-sentence for longer than this; none offline. */
  chunkGapTimeoutMs?: number;
}

/**
 * Text-to-speech over an ordered list of providers, with one liveness rule: a provider that fails
 * (refuses, errors, sends garbage, closes), gives no audio within its `firstAudioTimeoutMs`, or goes
 * quiet for longer than its `chunkGapTimeoutMs` after it started, is abandoned for the next — before
 * its first chunk or in the middle of the sentence. The next one says the sentence again from its
 * start (the callee hears the cut-off words once more rather than a sentence that resumes mid-word
 * in another voice). Only the time spent waiting for the vendor counts: a caller that holds the
 * audio back (the callee is talking) does not make the vendor late. Every failure is noted. When
 * every provider failed, the last error is thrown (a StageExhaustedError when a vendor was among
 * them).
 */
export class FallbackTextToSpeech implements TextToSpeech {
  constructor(
    private readonly choices: TtsChoiceInUse[],
    private readonly failures: ProviderFailureLog,
    /** Counts the characters each provider spoke, for the call's usage and cost. */
    private readonly usage: UsageMeter | null = null,
  ) {
    if (choices.length === 0) throw new Error('FallbackTextToSpeech needs at least one provider');
  }

  /** Replies start at this choice: the ones before it failed earlier in the call. */
  #first = 0;

  async *synthesize(text: string, options: SynthesizeOptions = {}): AsyncIterable<AudioChunk> {
    let lastError: unknown;
    for (let index = this.#first; index < this.choices.length; index++) {
      const choice = this.choices[index] as TtsChoiceInUse;
      if (options.signal?.aborted) throw abortReason(options.signal);
      const attempt = new AbortController();
      const onAbort = () => attempt.abort(options.signal ? abortReason(options.signal) : undefined);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      let late: VendorTimeoutError | null = null;
      let timer: NodeJS.Timeout | undefined;
      const expectAudioWithin = (limitMs: number | undefined, failure: () => VendorTimeoutError) => {
        if (limitMs === undefined) return;
        timer = setTimeout(() => {
          late = failure();
          attempt.abort(late);
        }, limitMs);
      };
      let yielded = false;
      let over = false;
      const iterator = choice.tts
        .synthesize(text, { signal: attempt.signal, ...(choice.voice ? { voice: choice.voice } : {}) })
        [Symbol.asyncIterator]();
      try {
        for (;;) {
          if (yielded)
            expectAudioWithin(
              choice.chunkGapTimeoutMs,
              () =>
                new VendorTimeoutError(
                  choice.provider,
                  `went quiet for ${choice.chunkGapTimeoutMs} ms in the middle of a sentence`,
                  'stall',
                ),
            );
          else
            expectAudioWithin(
              choice.firstAudioTimeoutMs,
              () =>
                new VendorTimeoutError(choice.provider, `no audio within ${choice.firstAudioTimeoutMs} ms`),
            );
          const next = await iterator.next();
          clearTimeout(timer);
          if (late) throw late;
          if (next.done) {
            over = true;
            return;
          }
          if (!yielded) {
            // The vendor has the text (and bills it) once it speaks, barge-in or not.
            this.usage?.add('tts', choice.provider, choice.model ?? null, 'characters', text.trim().length);
          }
          yielded = true;
          yield next.value;
        }
      } catch (error) {
        if (options.signal?.aborted) throw error;
        const failure = late ?? error;
        this.failures.note('tts', choice.provider, failure);
        lastError = failure;
        over = true;
        // The next replies go to the next choice at once; the last one is always tried again.
        if (index < this.choices.length - 1 && this.#first <= index) this.#first = index + 1;
      } finally {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        if (!over) {
          // The caller stopped early (a barge-in, the end of the call): the vendor stops too.
          attempt.abort(options.signal ? abortReason(options.signal) : undefined);
          void iterator.return?.()?.catch(() => undefined);
        }
      }
    }
    const holdsVendor = this.choices.some((choice) => choice.firstAudioTimeoutMs !== undefined);
    throw holdsVendor ? new StageExhaustedError('tts', lastError) : lastError;
  }

  /** Warms the choice replies start at (the others are only for its failures). */
  prepare(options: { voice?: string } = {}): void {
    const choice = this.choices[this.#first] as TtsChoiceInUse;
    choice.tts.prepare?.({ ...options, ...(choice.voice ? { voice: choice.voice } : {}) });
  }

  async close(): Promise<void> {
    // The providers are the process's, shared by calls; the voice stack closes them.
  }
}

export interface SttChoiceInUse {
  provider: string;
  stt: SpeechToText;
  /** For the usage report (and its price). */
  model?: string;
  /** A vendor's final transcript must arrive this soon after `finish()`; none for the offline engine. */
  finalTimeoutMs?: number;
}

/**
 * Speech-to-text over an ordered list of providers. The utterance's audio is kept (seconds of
 * 8 kHz audio: small) so that when a provider fails, or has no final result within
 * its `finalTimeoutMs` of `finish()`, the next one is given the same audio from the start. Once a
 * provider has failed, later utterances of the call start with the next one.
 */
export class FallbackSpeechToText implements SpeechToText {
  #current = 0;

  constructor(
    private readonly choices: SttChoiceInUse[],
    private readonly failures: ProviderFailureLog,
    /** Counts the seconds of audio each provider recognised, for the call's usage and cost. */
    private readonly usage: UsageMeter | null = null,
  ) {
    if (choices.length === 0) throw new Error('FallbackSpeechToText needs at least one provider');
  }

  noteAudio(index: number, seconds: number): void {
    const choice = this.choiceAt(index);
    this.usage?.add('stt', choice.provider, choice.model ?? null, 'audio_seconds', seconds);
  }

  /**
   * The provider to try after `failedIndex` failed, -1 when none is left for this utterance. Later
   * utterances start past a failed provider, but never past the last one (it is tried again).
   */
  skipPast(failedIndex: number): number {
    const next = failedIndex + 1;
    if (next >= this.choices.length) return -1;
    if (this.#current < next) this.#current = next;
    return next;
  }

  /** True when a vendor is among the choices (see StageExhaustedError). */
  get holdsVendor(): boolean {
    return this.choices.some((choice) => choice.finalTimeoutMs !== undefined);
  }

  get currentIndex(): number {
    return this.#current;
  }

  choiceAt(index: number): SttChoiceInUse {
    return this.choices[index] as SttChoiceInUse;
  }

  noteFailure(index: number, error: unknown): void {
    this.failures.note('stt', this.choiceAt(index).provider, error);
  }

  async startSession(options: SpeechToTextSessionOptions = {}): Promise<SpeechToTextSession> {
    const session = new FallbackSession(this, options);
    await session.open();
    return session;
  }

  async close(): Promise<void> {
    // The providers are the process's; the voice stack closes them.
  }
}

class FallbackSession implements SpeechToTextSession {
  readonly #audio: Int16Array[] = [];
  readonly #partialListeners: ((partial: PartialTranscript) => void)[] = [];
  readonly #endOfSpeechListeners: (() => void)[] = [];
  #index = -1;
  #session: SpeechToTextSession | null = null;
  #closed = false;
  #reconnected = false;

  constructor(
    private readonly owner: FallbackSpeechToText,
    private readonly options: SpeechToTextSessionOptions,
  ) {}

  /** Opens a session on the current provider, moving on past any that refuse. */
  async open(startAt = this.owner.currentIndex): Promise<void> {
    let index = startAt < 0 ? -1 : startAt;
    let lastError: unknown;
    while (index >= 0) {
      const choice = this.owner.choiceAt(index);
      try {
        const session = await choice.stt.startSession(this.options);
        if (this.#closed) {
          session.close();
          return;
        }
        session.onPartial((partial) => {
          for (const listener of this.#partialListeners) listener(partial);
        });
        session.onEndOfSpeech?.(() => {
          for (const listener of this.#endOfSpeechListeners) listener();
        });
        for (const samples of this.#audio) session.pushAudio(samples);
        this.#index = index;
        this.#session = session;
        return;
      } catch (error) {
        this.owner.noteFailure(index, error);
        lastError = error;
        index = this.owner.skipPast(index);
      }
    }
    throw this.owner.holdsVendor ? new StageExhaustedError('stt', lastError) : lastError;
  }

  pushAudio(samples: Int16Array): void {
    if (this.#closed) return;
    this.#audio.push(samples);
    this.#session?.pushAudio(samples);
  }

  onPartial(listener: (partial: PartialTranscript) => void): void {
    this.#partialListeners.push(listener);
  }

  onEndOfSpeech(listener: () => void): void {
    this.#endOfSpeechListeners.push(listener);
  }

  async finish(): Promise<FinalTranscript> {
    for (;;) {
      const session = this.#session;
      if (!session) throw new ProviderError('stt', 'no speech-to-text session is open');
      try {
        const { provider, finalTimeoutMs } = this.owner.choiceAt(this.#index);
        const final =
          finalTimeoutMs === undefined
            ? await session.finish()
            : await withTimeout(
                session.finish(),
                finalTimeoutMs,
                () => new VendorTimeoutError(provider, `no final transcript within ${finalTimeoutMs} ms`),
              );
        const samples = this.#audio.reduce((sum, part) => sum + part.length, 0);
        this.owner.noteAudio(this.#index, samples / telephoneSampleRateHz);
        return final;
      } catch (error) {
        session.close();
        this.#session = null;
        if (this.#closed) throw error;
        this.owner.noteFailure(this.#index, error);
        if (!this.#reconnected && worthReconnecting(error)) {
          // A dropped stream: one new stream to the same vendor hears the whole utterance again.
          this.#reconnected = true;
          await this.open(this.#index);
          continue;
        }
        const next = this.owner.skipPast(this.#index);
        if (next < 0) throw this.owner.holdsVendor ? new StageExhaustedError('stt', error) : error;
        // The next provider hears the whole utterance again.
        await this.open(next);
      }
    }
  }

  close(): void {
    this.#closed = true;
    this.#session?.close();
    this.#session = null;
    this.#audio.length = 0;
  }
}

async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, timeoutError: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(timeoutError()), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
