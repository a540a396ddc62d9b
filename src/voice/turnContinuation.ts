import type { TranscriptEntry } from '../domain/records.js';
import type { RtpSession } from '../telephony/rtp/index.js';
import type { AgentSpeaker } from './agentSpeaker.js';
import type { CalleeUtterance } from './calleeUtterance.js';
import type { PreemptiveReplies } from './preemptiveReplies.js';
import type { TurnTimeline } from './turnTimeline.js';

/**
 * A pause inside one answer ("yes … that works") is one turn: when the callee speaks again soon
 * after their turn ended (within the longest end-of-turn wait) and none of the agent's reply to it
 * has been heard yet, the reply is taken back unheard (see PreemptiveReplies.takeBackLatest) and
 * the new speech continues the turn — one transcript line, one reply, to all the words. Speech
 * right after such a turn holds the reply back from its first frame, before it is long enough to
 * be a turn of its own. Brains that cannot take a reply back (the script brain) keep two turns.
 */
export class TurnContinuation {
  private lastTurn: { utterance: CalleeUtterance; speechEndMs: number } | null = null;
  /** New speech is held back: the callee may be going on with their latest turn. */
  private held = false;

  constructor(
    private readonly options: {
      timeline: TurnTimeline;
      turnReplies: PreemptiveReplies;
      speaker: AgentSpeaker;
      rtp: RtpSession;
      /** The longest end-of-turn wait: speech later than this after a turn is a turn of its own. */
      maxWaitMs: number;
      /** The call's transcript (a continued turn's first line gives way to the whole turn's). */
      transcript: TranscriptEntry[];
    },
  ) {}

  /** A callee turn ended and is being answered (null: one that will not be, e.g. the opening). */
  turnEnded(utterance: CalleeUtterance | null, speechEndMs: number): void {
    this.lastTurn = utterance ? { utterance, speechEndMs } : null;
  }

  /**
   * A frame between callee turns (`speech`: the VAD's verdict). Speech right after a turn whose
   * reply has not been heard: the reply waits until it is known whether the callee goes on.
   */
  frameBetweenTurns(speech: boolean, machine: boolean): void {
    if (speech && this.lastTurn && !machine && !this.options.timeline.latestReplyHeard()) {
      this.held = true;
      this.options.speaker.holdNewSpeech();
    } else if (this.held && !speech) {
      this.held = false;
      this.options.speaker.releaseHold();
    }
  }

  /**
   * Speech started at `speechStartMs`: the turn it goes on with (its reply taken back), or null.
   * `overlapped` then says whether the new speech is over the agent (see speechStarted).
   */
  continuedTurn(speechStartMs: number, machine: boolean): CalleeUtterance | null {
    const { timeline, turnReplies, rtp, speaker, maxWaitMs } = this.options;
    const last = this.lastTurn;
    if (!last || machine || timeline.latestReplyHeard()) return null;
    if (speechStartMs - last.speechEndMs > maxWaitMs) return null;
    if (!turnReplies.takeBackLatest()) return null;
    this.lastTurn = null;
    rtp.clear();
    speaker.releaseHold();
    timeline.reopenLatest();
    last.utterance.superseded = true;
    return last.utterance;
  }

  /** The new speech is (or is not) over the agent: a hold of ours ends unless it is. */
  speechStarted(overlapped: boolean): void {
    if (this.held && !overlapped) this.options.speaker.releaseHold();
    this.held = false;
  }

  /**
   * The words of a turn the callee went on with, then `text`; that turn's line in the transcript
   * (written if its final came first) gives way to the line of the whole turn.
   */
  async joinContinued(before: CalleeUtterance, text: string): Promise<string> {
    const earlier = await before.heardText;
    const startMs = Math.round(before.speechStartMs);
    const { transcript } = this.options;
    const index = transcript.findIndex(
      (line) => line.role === 'callee' && line.start_ms === startMs && !line.event,
    );
    if (index >= 0) transcript.splice(index, 1);
    return [earlier, text].filter(Boolean).join(' ');
  }
}
