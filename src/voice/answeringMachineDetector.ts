import type { AnsweredBy } from '../domain/callStatus.js';

/** Who answered, how sure the detector is (0–1), when it knew (ms from the answer) and why. */
export interface AnsweringDecision {
  answeredBy: AnsweredBy;
  confidence: number;
  decisionMs: number;
  reason: AnsweringReason;
}

export type AnsweringReason =
  /** A steady tone of a recorder (src/voice/beepDetector.ts). */
  | 'beep'
  /** The recogniser heard what only a recorded greeting says ("leave a message"…). */
  | 'greeting_words'
  /** The first words ran on, without a pause a person leaves for an answer, past the limit. */
  | 'long_greeting'
  /** A short first utterance followed by a pause: a person waiting for the caller. */
  | 'short_greeting'
  /** A short sound over the agent that let it go on ("uh huh"): a listener. */
  | 'backchannel'
  /** Nothing was said in the first seconds. */
  | 'silence'
  /** Undecided (or unknown after a silent start), the callee then answered the agent in words. */
  | 'reply'
  /** The agent itself judged it a recording (`leave_voicemail`). */
  | 'agent';

/** The thresholds, in ms of call time from the answer. */
export interface AnsweringMachineTiming {
  /** A greeting that has run this long (through short pauses) is a recording. */
  greetingMachineMs: number;
  /** A pause this long after the first words ends a person's greeting ("Hello?" … ). */
  personPauseMs: number;
  /** No speech until then: unknown (the agent goes ahead). */
  silenceMaxMs: number;
}

export const defaultAnsweringMachineTiming: AnsweringMachineTiming = {
  greetingMachineMs: 2_400,
  personPauseMs: 700,
  silenceMaxMs: 3_000,
};

/**
 * Phrases of recorded greetings. Matched on the recogniser's words (lower case, apostrophes kept),
 * so they are whole-word phrases a person answering a call does not say.
 */
const machinePhrases = [
  'leave a message',
  'leave your message',
  'leave me a message',
  'after the tone',
  'after the beep',
  'at the tone',
  'not available',
  'unavailable',
  "can't take your call",
  'cannot take your call',
  "can't come to the phone",
  'cannot come to the phone',
  'voicemail',
  'voice mail',
  'mailbox',
  'you have reached',
  "you've reached",
  'record your message',
];

/** True when the words hold a phrase only recorded greetings say. */
export function soundsLikeRecordedGreeting(text: string): boolean {
  const words = ` ${text
    .toLowerCase()
    .replace(/[^a-z' ]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()} `;
  return machinePhrases.some((phrase) => words.includes(` ${phrase} `));
}

/**
 * Decides early who answered an outbound call: a person, a machine, or unknown. It is fed the
 * callee's frames as the voice activity detector judged them (20 ms each, from the answer), the
 * beeps the beep detector heard and the recogniser's words, and decides once:
 *
 * - a beep, or words only a recording says → machine;
 * - first words that run on past `greetingMachineMs` (2.4 s by default, the agent's
 *   `machine_speech_ms`) without a pause of `personPauseMs` → machine
 *   (a recorded greeting is a monologue; a person says "Hello?" and waits);
 * - first words followed by that pause → person, surer the shorter the words were;
 * - a short sound over the agent that let it talk on (a backchannel) → person;
 * - nothing said by `silenceMaxMs` → unknown.
 *
 * The decision is reported with its confidence and the call time it took. Pure: no I/O, no clock.
 */
export class AnsweringMachineDetector {
  private readonly timing: AnsweringMachineTiming;
  private firstSpeechMs = -1;
  private lastSpeechEndMs = -1;
  private speaking = false;
  private decided: AnsweringDecision | null = null;

  constructor(timing: Partial<AnsweringMachineTiming> = {}) {
    this.timing = { ...defaultAnsweringMachineTiming, ...timing };
  }

  get decision(): AnsweringDecision | null {
    return this.decided;
  }

  /** Any speech heard since the answer. */
  get heardSpeech(): boolean {
    return this.firstSpeechMs >= 0;
  }

  /**
   * One frame's voice decision, ending at `atMs` (call time). Returns the decision when this frame
   * made it, else null.
   */
  pushFrame(isSpeech: boolean, atMs: number, frameMs = 20): AnsweringDecision | null {
    if (this.decided) return null;
    const { greetingMachineMs, personPauseMs, silenceMaxMs } = this.timing;
    if (isSpeech) {
      if (this.firstSpeechMs < 0) this.firstSpeechMs = atMs - frameMs;
      this.speaking = true;
      this.lastSpeechEndMs = atMs;
      if (atMs - this.firstSpeechMs >= greetingMachineMs)
        return this.decide('machine', 0.8, atMs, 'long_greeting');
      return null;
    }
    if (this.firstSpeechMs < 0) {
      return atMs >= silenceMaxMs ? this.decide('unknown', 0.5, atMs, 'silence') : null;
    }
    if (this.speaking && atMs - this.lastSpeechEndMs >= personPauseMs) {
      const greetingMs = this.lastSpeechEndMs - this.firstSpeechMs;
      // "Hello?" is surer than a longer opening, which a short recording could also be.
      const confidence = greetingMs <= 1_000 ? 0.9 : greetingMs <= 1_500 ? 0.8 : 0.65;
      return this.decide('human', confidence, atMs, 'short_greeting');
    }
    return null;
  }

  /** A beep at `atMs`: a recorder, whatever was decided before (a later beep corrects it). */
  noteBeep(atMs: number): AnsweringDecision | null {
    if (this.decided?.answeredBy === 'machine') return null;
    this.decided = null;
    return this.decide('machine', 0.97, atMs, 'beep');
  }

  /** The callee made a short sound over the agent and let it talk on: a person listening. */
  noteBackchannel(atMs: number): AnsweringDecision | null {
    if (this.decided) return null;
    return this.decide('human', 0.7, atMs, 'backchannel');
  }

  /**
   * The callee answered the agent in words: a person, when nothing better was decided (an unknown
   * from a silent start is corrected; a person or a machine decided from the audio stands).
   */
  noteReply(atMs: number): AnsweringDecision | null {
    if (this.decided && this.decided.answeredBy !== 'unknown') return null;
    return this.decide('human', 0.75, atMs, 'reply');
  }

  /** The agent judged the line a recording (`leave_voicemail`): the call reports a machine. */
  noteAgentVerdict(atMs: number): AnsweringDecision | null {
    if (this.decided?.answeredBy === 'machine') return null;
    return this.decide('machine', 0.8, atMs, 'agent');
  }

  /** The recogniser's words so far; a recorded greeting's phrase decides machine. */
  noteWords(text: string, atMs: number): AnsweringDecision | null {
    if (this.decided || !soundsLikeRecordedGreeting(text)) return null;
    return this.decide('machine', 0.9, atMs, 'greeting_words');
  }

  private decide(
    answeredBy: AnsweredBy,
    confidence: number,
    atMs: number,
    reason: AnsweringReason,
  ): AnsweringDecision {
    this.decided = { answeredBy, confidence, decisionMs: Math.round(atMs), reason };
    return this.decided;
  }
}

/** The early decision as the call's metrics report it (`metrics.answering_machine`). */
export function answeringMetrics(decision: AnsweringDecision | null): Record<string, unknown> | null {
  if (!decision) return null;
  return {
    answered_by: decision.answeredBy,
    confidence: decision.confidence,
    decision_ms: decision.decisionMs,
    reason: decision.reason,
  };
}
