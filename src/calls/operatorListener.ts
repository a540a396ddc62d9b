import type { Logger } from '../logger.js';
import type { RtpSession } from '../telephony/rtp/index.js';
import { concatSamples } from '../voice/providers/audio/samples.js';
import type { SpeechToText, SpeechToTextSession } from '../voice/providers/index.js';
import { normalizePhrase } from '../voice/providers/stt/phraseGrammar.js';

/**
 * Phrases that decline a warm transfer when the person who answered says them. Recognised against
 * a grammar that also holds what a person who takes the call says (`neutralPhrases`), so "hello"
 * or "yes" is heard as itself and not as the nearest decline; and only a whole utterance that is
 * one of these declines ("no problem" is not "no"). "I can take it" is in the neutral grammar: on an
 * 8 kHz line the recogniser hears "can" and "can't" alike, and a refusal that is taken as a yes only
 * bridges the callee to someone who can say so again, while a yes taken as a refusal drops a caller
 * the person would have taken — so the phrases that decline start with something unmistakable
 * ("no, I can't take it", "sorry, I can't take it") or are a plain "no" / "decline".
 */
export const declinePhrases = [
  'no',
  'no thanks',
  'no thank you',
  'decline',
  'i decline',
  'no sorry',
  "no i can't take it",
  "no i can't take the call",
  "sorry i can't take it",
  "sorry i can't take the call",
  'no not now',
  "sorry i'm busy",
  "no i'm busy",
] as const;

const neutralPhrases = [
  'hello',
  'hi',
  'hello this is',
  'yes',
  'yeah',
  'speaking',
  'okay',
  'sure',
  'go ahead',
  'put them through',
  'i can take it',
  'who is it',
] as const;

/** How the leg's audio is cut into utterances: 20 ms frames, by energy. */
const utterance = {
  /** RMS of a 20 ms frame above which it is voiced (about -36 dBFS). */
  voicedRms: 500,
  /** Voiced frames in a row that start an utterance (60 ms: a click is not speech). */
  startFrames: 3,
  /** Quiet frames in a row that end it (500 ms: the pause between words is shorter). */
  endFrames: 25,
  /** Frames kept before the start, so the first syllable reaches the recogniser. */
  preRollFrames: 10,
  /** An utterance is cut here: the recogniser's memory, and a bound on how long a decline waits. */
  maxMs: 5_000,
} as const;

/** How long a finished utterance may take to be recognised before it is taken as not a decline. */
const recognitionTimeoutMs = 3_000;

export type OperatorDecline = { phrase: string };

/**
 * Listens to the person who answered a warm transfer (the target's leg): when they first spoke
 * and finished (`wait_for_operator`), and — given a recogniser — whether an utterance of theirs was
 * a clear decline phrase (`decline_by_voice`). Energy cuts the leg into utterances; each is
 * recognised with the phrase grammar of `declinePhrases` and `neutralPhrases`.
 */
export class OperatorListener {
  /** Set once a decline phrase was recognised. */
  declined: OperatorDecline | null = null;
  private voicedRun = 0;
  private quietRun = 0;
  private frames: Int16Array[] = [];
  private speaking = false;
  private spokenMs = 0;
  private session: Promise<SpeechToTextSession | null> | null = null;
  /** Utterances started and not yet judged (recognised, or ended without a recogniser). */
  private pending = 0;
  private readonly waiters = new Set<() => void>();
  private utterancesJudged = 0;
  private declineListeners: Array<(decline: OperatorDecline) => void> = [];

  constructor(
    private readonly rtp: RtpSession,
    private readonly stt: SpeechToText | null,
    private readonly logger: Logger,
  ) {
    rtp.on('audio', this.onAudio);
  }

  /** Called once, the moment a decline phrase is recognised. */
  onDecline(listener: (decline: OperatorDecline) => void): void {
    this.declineListeners.push(listener);
  }

  /**
   * Resolves `spoke` once the person has said something and stopped (and, with a recogniser, it was
   * judged: a first "no" declines before any brief), or `silent` after `timeoutMs` of nothing.
   */
  async firstUtterance(timeoutMs: number): Promise<'spoke' | 'silent'> {
    const deadline = Date.now() + timeoutMs;
    while (this.utterancesJudged === 0) {
      const leftMs = this.pending > 0 ? utterance.maxMs + recognitionTimeoutMs : deadline - Date.now();
      if (leftMs <= 0 || !(await this.change(leftMs))) return this.utterancesJudged > 0 ? 'spoke' : 'silent';
    }
    return 'spoke';
  }

  /**
   * After the brief: waits up to `graceMs` for the person to start speaking, and for whatever they
   * started saying to be judged; resolves with the decline, or null.
   */
  async settle(graceMs: number): Promise<OperatorDecline | null> {
    const deadline = Date.now() + graceMs;
    while (!this.declined) {
      const leftMs =
        this.pending > 0 ? utterance.maxMs + recognitionTimeoutMs : Math.max(0, deadline - Date.now());
      if (leftMs === 0 || !(await this.change(leftMs))) break;
    }
    return this.declined;
  }

  stop(): void {
    this.rtp.off('audio', this.onAudio);
    void this.session?.then((session) => session?.close());
    this.session = null;
    this.wake();
  }

  /** True when something changed (an utterance began or was judged) within `ms`. */
  private change(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(done);
        resolve(false);
      }, ms);
      this.waiters.add(done);
    });
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  private readonly onAudio = (samples: Int16Array): void => {
    const voiced = rms(samples) >= utterance.voicedRms;
    if (!this.speaking) {
      this.frames.push(samples.slice());
      if (this.frames.length > utterance.preRollFrames) this.frames.shift();
      this.voicedRun = voiced ? this.voicedRun + 1 : 0;
      if (this.voicedRun >= utterance.startFrames) this.begin();
      return;
    }
    this.spokenMs += (samples.length / 8000) * 1000;
    this.quietRun = voiced ? 0 : this.quietRun + 1;
    if (this.stt) void this.session?.then((session) => session?.pushAudio(samples));
    if (this.quietRun >= utterance.endFrames || this.spokenMs >= utterance.maxMs) this.end();
  };

  private begin(): void {
    this.speaking = true;
    this.spokenMs = 0;
    this.quietRun = 0;
    this.pending++;
    const preRoll = concatSamples(this.frames);
    this.frames = [];
    if (this.stt) {
      this.session = this.stt
        .startSession({ phrases: [...declinePhrases, ...neutralPhrases] })
        .then((session) => {
          session.pushAudio(preRoll);
          return session;
        })
        .catch((error: unknown) => {
          this.logger.warn({ err: error }, 'the transfer target could not be listened to');
          return null;
        });
    }
    this.wake();
  }

  private end(): void {
    this.speaking = false;
    this.voicedRun = 0;
    const session = this.session;
    this.session = null;
    void this.judge(session).finally(() => {
      this.pending--;
      this.utterancesJudged++;
      this.wake();
    });
  }

  private async judge(session: Promise<SpeechToTextSession | null> | null): Promise<void> {
    const opened = await session;
    if (!opened) return;
    try {
      const result = await Promise.race([
        opened.finish(),
        new Promise<null>((resolve) => setTimeout(() => resolve(null), recognitionTimeoutMs).unref()),
      ]);
      if (!result || result.unclear) return;
      const said = normalizePhrase(result.matchedPhrase ?? result.text);
      const decline = declinePhrases.find((phrase) => normalizePhrase(phrase) === said);
      this.logger.info({ declined: decline !== undefined }, 'the transfer target spoke');
      if (!decline || this.declined) return;
      this.declined = { phrase: decline };
      for (const listener of this.declineListeners) listener(this.declined);
    } catch (error) {
      this.logger.warn({ err: error }, 'what the transfer target said could not be recognised');
    } finally {
      opened.close();
    }
  }
}

function rms(samples: Int16Array): number {
  let sum = 0;
  for (const sample of samples) sum += sample * sample;
  return samples.length === 0 ? 0 : Math.sqrt(sum / samples.length);
}
