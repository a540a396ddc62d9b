import type { Logger } from '../logger.js';
import {
  type AnsweringDecision,
  AnsweringMachineDetector,
  type AnsweringMachineTiming,
} from './answeringMachineDetector.js';
import { BeepDetector } from './beepDetector.js';

/** What the agent does about answering machines (settings.voicemail, the message rendered). */
export interface VoicemailPolicy {
  action: 'leave_message' | 'hang_up';
  message: string | null;
  /** The agent says nothing until the detector has decided (else it speaks at once). */
  waitForDecision: boolean;
  /**
   * `early`: a machine decided from the greeting is acted on at once; `beep`: only a beep is (for
   * agents that go through phone menus, whose prompts are recordings too). Both report the decision.
   */
  detection: 'early' | 'beep';
  /** First words that run on this long without a pause are a recording (ms). */
  machineSpeechMs: number;
}

/** With wait_for_decision: the agent speaks after this long even if no decision came. */
export const decisionWaitMaxMs = 5_000;
/**
 * With wait_for_decision: a line silent this long from the answer gets the greeting (the detector
 * goes on listening). A recorded greeting has begun by then; a person who waits for the caller
 * heard 3 s of silence when the agent waited for the detector's `silence` decision.
 */
const silentStartGreetMs = 1_500;
/** After a machine is decided without a beep, the greeting is over once it is quiet this long. */
const greetingOverSilenceMs = 1_500;
/** A greeting that never ends: the message is left this long after the decision anyway. */
const greetingWaitMaxMs = 30_000;
/** Beeps are listened for this long into the call (a machine answers at the start). */
const beepListenMs = 60_000;

type Stage =
  /** Still deciding, or a person (or unknown) answered: the conversation goes on. */
  | 'conversation'
  /** A machine: waiting for its beep or the end of its greeting. */
  | 'awaiting_beep'
  /** The beep is sounding: the message starts when it stops. */
  | 'beep_sounding'
  /** The message is being left, or the agent hung up. */
  | 'done';

/**
 * A call's answering-machine handling: the early decision (src/voice/answeringMachineDetector.ts)
 * and what follows it. On a machine the agent stops talking, then hangs up or leaves the message
 * once the beep has ended (or, with no beep, once the greeting has gone quiet), so the recording
 * holds all of it. The agent's `leave_voicemail` does the same without a decision.
 */
export class AnsweringMachineHandling {
  private readonly detector: AnsweringMachineDetector;
  private readonly beeps = new BeepDetector();
  private stage: Stage = 'conversation';
  private quietSinceMs = -1;
  private awaitingSinceMs = 0;
  private message: string | null;

  constructor(
    private readonly options: {
      policy: VoicemailPolicy;
      logger: Logger;
      /** The decision, once (and again when a later beep corrects it). */
      onDecision: (decision: AnsweringDecision) => void;
      /** A machine: stop whatever the agent is saying. */
      silenceAgent: () => void;
      /** Leave this message, then hang up (`voicemail`). */
      leaveMessage: (message: string) => void;
      /** Hang up at once (`voicemail`). */
      hangUp: () => void;
      timing?: Partial<AnsweringMachineTiming>;
    },
  ) {
    this.detector = new AnsweringMachineDetector({
      greetingMachineMs: options.policy.machineSpeechMs,
      ...options.timing,
    });
    this.message = options.policy.message;
  }

  /** A machine answered: the agent no longer converses (what it hears answers nothing). */
  get machine(): boolean {
    return this.stage !== 'conversation';
  }

  get decision(): AnsweringDecision | null {
    return this.detector.decision;
  }

  /**
   * One callee frame (20 ms) ending at `atMs`; `isSpeech` gives the voice activity detector's
   * verdict, asked for only while it matters (deciding, or waiting out a greeting): once a person is
   * decided, a frame costs at most the beep check of the first minute.
   */
  pushFrame(frame: Int16Array, isSpeech: () => boolean, atMs: number): void {
    if (this.stage === 'done') return;
    const beep = atMs < beepListenMs && this.beeps.push(frame);
    if (this.stage === 'beep_sounding') {
      if (!this.beeps.toneOn) this.leave();
      return;
    }
    if (beep) {
      if (this.stage === 'awaiting_beep') this.stage = 'beep_sounding';
      else {
        const corrected = this.detector.noteBeep(atMs);
        // A machine decided but not acted on (`detection: beep`): its beep is acted on.
        if (corrected) this.decided(corrected);
        else this.actOnMachine(atMs, true);
      }
      return;
    }
    if (this.stage === 'awaiting_beep') {
      if (isSpeech()) this.quietSinceMs = -1;
      else if (this.quietSinceMs < 0) this.quietSinceMs = atMs;
      const quietMs = this.quietSinceMs < 0 ? 0 : atMs - this.quietSinceMs;
      if (quietMs >= greetingOverSilenceMs || atMs - this.awaitingSinceMs >= greetingWaitMaxMs) {
        this.options.logger.info({ quietMs }, 'the greeting is over without a beep: leaving the message');
        this.leave();
      }
      return;
    }
    if (!this.detector.decision) this.decided(this.detector.pushFrame(isSpeech(), atMs));
  }

  /** A short sound over the agent that did not interrupt it (the conversation's judgement). */
  noteBackchannel(atMs: number): void {
    if (this.stage === 'conversation') this.decided(this.detector.noteBackchannel(atMs));
  }

  /** What the recogniser has heard so far of the callee's words. */
  noteWords(text: string, atMs: number): void {
    if (this.stage === 'conversation') this.decided(this.detector.noteWords(text, atMs));
  }

  /** The callee's words were recognised as a turn: a person, unless already decided otherwise. */
  noteReply(atMs: number): void {
    if (this.stage === 'conversation') this.decided(this.detector.noteReply(atMs));
  }

  /**
   * The agent asked to leave a voicemail (`leave_voicemail`): the agent's message, else the one
   * the model gave; with neither the agent hangs up. The call reports a machine.
   */
  leaveVoicemail(atMs: number, spokenMessage?: string): void {
    if (this.stage !== 'conversation') return;
    this.message = this.options.policy.message ?? spokenMessage ?? null;
    this.awaitMachine(atMs, true);
    this.decided(this.detector.noteAgentVerdict(atMs));
  }

  /**
   * With wait_for_decision: nobody has said anything yet this long after the answer. A recording
   * starts at once; a person who picked up and waits for the caller should not wait long.
   */
  silentSoFar(atMs: number): boolean {
    return this.detector.decision === null && !this.detector.heardSpeech && atMs >= silentStartGreetMs;
  }

  private decided(decision: AnsweringDecision | null): void {
    if (!decision) return;
    this.options.logger.info(
      {
        answeredBy: decision.answeredBy,
        confidence: decision.confidence,
        decisionMs: decision.decisionMs,
        reason: decision.reason,
      },
      'answering party decided',
    );
    this.options.onDecision(decision);
    if (decision.answeredBy !== 'machine') return;
    if (this.options.policy.detection === 'early' || decision.reason === 'beep')
      this.actOnMachine(decision.decisionMs, decision.reason === 'beep');
  }

  private actOnMachine(atMs: number, beepSounding: boolean): void {
    if (this.stage !== 'conversation') return;
    this.awaitMachine(atMs, this.options.policy.action === 'leave_message', beepSounding);
  }

  private awaitMachine(atMs: number, leaveMessage: boolean, beepSounding = false): void {
    this.options.silenceAgent();
    if (!leaveMessage || !this.message) {
      this.stage = 'done';
      this.options.hangUp();
      return;
    }
    this.stage = beepSounding ? 'beep_sounding' : 'awaiting_beep';
    this.awaitingSinceMs = atMs;
    this.quietSinceMs = -1;
  }

  private leave(): void {
    this.stage = 'done';
    const message = this.message;
    if (message) this.options.leaveMessage(message);
    else this.options.hangUp();
  }
}
