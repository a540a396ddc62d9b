import type { TranscriptEntry } from '../domain/records.js';
import type { Logger } from '../logger.js';
import {
  firstAudibleIndex,
  lastAudibleIndex,
  type PlaybackResult,
  type RtpSession,
} from '../telephony/rtp/index.js';
import { readAhead } from './actionsAhead.js';
import { heardPart } from './conversationResult.js';
import { concatSamples } from './providers/audio/samples.js';
import type { TextToSpeech } from './providers/index.js';
import { untilAborted } from './untilAborted.js';

/** A sentence of the agent's as the callee heard it. */
export interface SpokenLine {
  text: string;
  /** The words the callee heard (all of `text` unless cut). */
  said: string;
  interrupted: boolean;
}

export interface QueueOptions {
  tts?: TextToSpeech;
  voice?: string | undefined;
  /** Drop the voice's leading silence (the first sentence of a reply: the callee waits for it). */
  trimLeadingSilence?: boolean;
  /** Called when the voice's first audio of this sentence arrives. */
  onFirstAudio?: () => void;
  /** Synthesise now, play once this settles (a reply generated ahead of the callee's final words). */
  gate?: Promise<void> | undefined;
  /** `text` is a first clause; this is the rest of its sentence, voiced after it as one line. */
  rest?: Promise<string> | undefined;
}

/** Samples kept before the first audible one when leading silence is trimmed (10 ms). */
const trimKeepSamples = 80;
/** The voice's silence kept after a sentence (a natural pause before the next one): 120 ms. */
const sentencePauseSamples = 960;
/** The pause kept where a first clause voiced alone meets the rest of its sentence: 80 ms. */
const clausePauseSamples = 640;

/**
 * The audio of one passage synthesised ahead: what has arrived so far, and the rest as it comes.
 * Chunks are kept until taken; a failure is thrown after the chunks that came before it.
 */
class AheadAudio {
  readonly chunks: Int16Array[] = [];
  failure: { error: unknown } | null = null;
  finished = false;
  #wake: (() => void) | null = null;

  push(samples: Int16Array): void {
    this.chunks.push(samples);
    this.#notify();
  }

  end(failure?: { error: unknown }): void {
    if (failure) this.failure = failure;
    this.finished = true;
    this.#notify();
  }

  /** Every chunk in order — those already here at once, the later ones as they arrive. */
  async *drain(): AsyncIterable<Int16Array> {
    for (;;) {
      const chunk = this.chunks.shift();
      if (chunk) {
        yield chunk;
        continue;
      }
      if (this.failure) throw this.failure.error;
      if (this.finished) return;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }

  #notify(): void {
    this.#wake?.();
    this.#wake = null;
  }
}

/**
 * Speech synthesised before it is needed — the greeting, while the phone rings — so that when the
 * agent says it its audio is queued at once, whatever the voice's first-byte time. It streams: the
 * agent plays what has arrived and the rest as it arrives, never waiting for the whole passage (a
 * voice that speaks at the pace of speech would otherwise keep the callee waiting for all of it).
 */
export class SpeechPrefetch {
  private readonly ahead = new Map<string, AheadAudio>();
  private readonly controller = new AbortController();

  constructor(
    private readonly tts: TextToSpeech,
    private readonly voice: string | undefined,
    private readonly logger: Logger,
  ) {}

  prefetch(text: string): void {
    if (this.ahead.has(text)) return;
    const audio = new AheadAudio();
    this.ahead.set(text, audio);
    void (async () => {
      const { signal } = this.controller;
      for await (const chunk of this.tts.synthesize(text, {
        signal,
        ...(this.voice ? { voice: this.voice } : {}),
      }))
        audio.push(chunk.samples);
      audio.end();
    })().catch((error: unknown) => {
      if (!this.controller.signal.aborted)
        this.logger.warn({ err: error }, 'the greeting could not be synthesised ahead');
      audio.end({ error });
    });
  }

  /**
   * The audio of `text` synthesised ahead, once (null: none), as it arrives. A synthesis that
   * failed throws its error after the audio that came before it: the voice (and its fallbacks) was
   * tried already, and its failure noted, so it is not tried twice.
   */
  take(text: string, tts: TextToSpeech, voice: string | undefined): AsyncIterable<Int16Array> | null {
    if (tts !== this.tts || voice !== this.voice) return null;
    const audio = this.ahead.get(text);
    if (!audio) return null;
    this.ahead.delete(text);
    return audio.drain();
  }

  /** Stops what is still being synthesised ahead (the call ended, or never answered). */
  close(): void {
    this.controller.abort();
    this.ahead.clear();
  }
}

/**
 * The agent's mouth: synthesises sentences into the outgoing RTP queue, writes each line to the
 * transcript as the callee heard it (cut to the words played when interrupted), speaks what was
 * synthesised ahead (SpeechPrefetch) without waiting for the voice, and holds back new speech while the
 * callee may be taking the turn (the agent never starts talking over someone already speaking).
 */
export class AgentSpeaker {
  private hold: { released: Promise<void>; release: () => void } | null = null;
  /** Set by windDown: a sentence not yet playing never starts; one already playing plays out. */
  private windingDown = false;
  /** The sentences queued and not yet played (or cut). */
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly options: {
      rtp: RtpSession;
      tts: TextToSpeech;
      voice?: string | undefined;
      logger: Logger;
      nowMs: () => number;
      addLine: (line: TranscriptEntry) => void;
      prefetch?: SpeechPrefetch;
    },
  ) {}

  /** New speech waits (the callee is speaking and may be taking the turn); queued audio plays on. */
  holdNewSpeech(): void {
    if (this.hold) return;
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.hold = { released, release };
  }

  releaseHold(): void {
    const hold = this.hold;
    this.hold = null;
    hold?.release();
  }

  /**
   * The service is shutting down: the sentence being spoken plays to its end, none starts after it.
   * Resolves once nothing more will be played.
   */
  async windDown(): Promise<void> {
    this.windingDown = true;
    this.releaseHold();
    await Promise.all([...this.inFlight]);
  }

  /** Speaks `text` and waits until it has been played (or cut). */
  async say(text: string, signal: AbortSignal, options: QueueOptions = {}): Promise<SpokenLine> {
    return (await this.queue(text, signal, options)).played;
  }

  /**
   * Synthesises `text` into the outgoing queue; resolves once its audio is all queued, with a
   * promise of the line as played — written to the transcript then, cut to the words heard. (The
   * promise is wrapped: an async function's result would otherwise wait for it.)
   */
  queue(
    text: string,
    signal: AbortSignal,
    options: QueueOptions = {},
  ): Promise<{ played: Promise<SpokenLine> }> {
    const queued = this.queueSentence(text, signal, options);
    const settled: Promise<unknown> = queued.then(({ played }) => played).catch(() => undefined);
    this.inFlight.add(settled);
    void settled.then(() => this.inFlight.delete(settled));
    return queued;
  }

  private async queueSentence(
    text: string,
    signal: AbortSignal,
    options: QueueOptions,
  ): Promise<{ played: Promise<SpokenLine> }> {
    const { rtp } = this.options;
    const tts = options.tts ?? this.options.tts;
    const voice = options.tts ? options.voice : (options.voice ?? this.options.voice);
    let startMs: number | null = null;
    /** What of the line has audio queued: the clause alone until the rest's audio is. */
    let queuedText = text;
    const line = { whole: text };
    let trimming = options.trimLeadingSilence === true;
    let firstAudio = true;
    /** Quiet samples after the latest audible one: played only if more speech follows them. */
    let quietTail: Int16Array[] = [];
    const plays: Promise<PlaybackResult>[] = [];
    const play = async (samples: Int16Array): Promise<boolean> => {
      if (options.gate) await options.gate;
      // Nothing is playing and the callee is talking: wait to see whether they take the turn.
      while (this.hold && rtp.queuedMs === 0 && !signal.aborted) await this.hold.released;
      if (signal.aborted) return false;
      // Winding down: what is already playing finishes; a sentence not begun is not begun.
      if (this.windingDown && startMs === null) return false;
      startMs ??= this.options.nowMs() + rtp.queuedMs;
      plays.push(rtp.play(samples));
      return true;
    };
    try {
      for await (let { samples, text: chunkText } of this.chunksOf(
        text,
        options.rest,
        tts,
        voice,
        signal,
        line,
      )) {
        if (signal.aborted) break;
        if (chunkText !== queuedText) {
          // The rest of the sentence begins: the two syntheses join at the comma with a short pause.
          queuedText = chunkText;
          quietTail = [concatSamples(quietTail).subarray(0, clausePauseSamples)];
          trimming = true;
        }
        if (firstAudio) {
          firstAudio = false;
          options.onFirstAudio?.();
        }
        if (trimming) {
          const audible = firstAudibleIndex(samples);
          if (audible < 0) continue;
          samples = samples.subarray(Math.max(0, audible - trimKeepSamples));
          trimming = false;
        }
        const lastAudible = lastAudibleIndex(samples);
        if (lastAudible < 0) {
          quietTail.push(samples);
          continue;
        }
        for (const quiet of quietTail) if (!(await play(quiet))) break;
        quietTail = [];
        if (!(await play(samples.subarray(0, lastAudible + 1)))) break;
        if (lastAudible + 1 < samples.length) quietTail.push(samples.subarray(lastAudible + 1));
      }
      // The voice's trailing silence is cut to a short pause: the agent's turn ends with its words.
      const tail = concatSamples(quietTail).subarray(0, sentencePauseSamples);
      if (tail.length > 0 && !signal.aborted) await play(tail);
    } catch (error) {
      if (!signal.aborted) {
        // What was queued of the sentence still plays; the caller handles the failure.
        void this.lineOf(line.whole, queuedText, startMs, plays, signal);
        throw error;
      }
    }
    return { played: this.lineOf(line.whole, queuedText, startMs, plays, signal) };
  }

  /** The audio of `text`, then of the rest of its sentence (if any), each with the line it makes. */
  private async *chunksOf(
    text: string,
    rest: Promise<string> | undefined,
    tts: TextToSpeech,
    voice: string | undefined,
    signal: AbortSignal,
    line: { whole: string },
  ): AsyncIterable<{ samples: Int16Array; text: string }> {
    const ahead = this.options.prefetch?.take(text, tts, voice);
    const synthesize = async function* (words: string): AsyncIterable<Int16Array> {
      for await (const chunk of tts.synthesize(words, { signal, ...(voice ? { voice } : {}) }))
        yield chunk.samples;
    };
    // The rest is synthesised as soon as it is written, while the clause still plays.
    const restAudio = rest?.then((words) => {
      if (!words || signal.aborted) return null;
      line.whole = `${text} ${words}`;
      const iterator = readAhead(synthesize(words), () => {})[Symbol.asyncIterator]();
      const first = iterator.next();
      first.catch(() => {}); // awaited below unless the line is cut first
      return { iterator, first };
    });
    for await (const samples of ahead ?? synthesize(text)) yield { samples, text };
    const audio = restAudio ? await untilAborted(restAudio, signal) : null;
    if (!audio) return;
    try {
      for (let next = await audio.first; !next.done; next = await audio.iterator.next())
        yield { samples: next.value, text: line.whole };
    } finally {
      void audio.iterator.return?.(undefined);
    }
  }

  /** `text`: the whole line; `queuedText`: what of it had audio queued (a clause, or all of it). */
  private async lineOf(
    text: string,
    queuedText: string,
    startMs: number | null,
    plays: Promise<PlaybackResult>[],
    signal: AbortSignal,
  ): Promise<SpokenLine> {
    const results = await Promise.all(plays);
    const playedMs = results.reduce((sum, result) => sum + result.playedMs, 0);
    const durationMs = results.reduce((sum, result) => sum + result.durationMs, 0);
    const interrupted = signal.aborted || results.some((result) => result.interrupted);
    // Nothing queued (the voice failed first, or the reply was cut before it) is nothing said.
    const said =
      durationMs === 0 ? '' : interrupted ? heardPart(queuedText, playedMs / durationMs) : queuedText;
    const start = startMs ?? this.options.nowMs();
    if (said)
      this.options.addLine({
        role: 'agent',
        text: said,
        start_ms: Math.round(start),
        end_ms: Math.round(start + playedMs),
      });
    return { text, said, interrupted };
  }
}
