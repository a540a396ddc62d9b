import type { TurnTiming } from '../domain/turnTiming.js';
import { firstAudibleIndex } from '../telephony/rtp/audibleSamples.js';
import { percentile } from './conversationResult.js';

export type { TurnTiming } from '../domain/turnTiming.js';

/**
 * The latency waterfall of each callee turn: when the callee stopped speaking, and from there how
 * long until each stage of the reply — the end-of-turn decision, the recogniser's final, the
 * model's first token, the first sentence, the voice's first audio, the first RTP packet and the
 * first audible agent sample (what the callee hears). All times are on the call's clock (ms from
 * the answer, the recording's time axis); stage figures are ms after the callee's speech ended.
 */

export type TurnStage =
  | 'end_of_turn'
  | 'stt_final'
  | 'llm_first_token'
  | 'first_sentence'
  | 'tts_first_audio'
  | 'first_rtp'
  | 'first_audible';

interface OpenTurn {
  timing: TurnTiming;
  speechEndMs: number;
}

/** The reply stages a reply generated ahead of the turn's end (preemptive generation) can reach. */
type AheadStage = 'llm_first_token' | 'first_sentence' | 'tts_first_audio';

export class TurnTimeline {
  private readonly turns: OpenTurn[] = [];
  /** The agent's first audible sample after the answer (the greeting), call clock. */
  private greetingAudibleMs: number | null = null;
  private greetingFirstRtpMs: number | null = null;
  private greetingDone = false;
  /**
   * While a reply is generated ahead of the callee's turn (preemptive generation, before the
   * turn has ended): its stages, call clock, for the turn that is about to end; null otherwise.
   */
  private ahead: Partial<Record<AheadStage, number>> | null = null;

  /** A reply to the callee's words is being generated before their turn has ended. */
  replyAhead(): void {
    this.ahead = {};
  }

  /**
   * The reply generated ahead was dropped (the final transcript differed): its stages are
   * forgotten, so the reply that replaces it is timed on its own.
   */
  dropReplyAhead(): void {
    if (this.ahead) {
      this.ahead = {};
      return;
    }
    const open = this.turns.at(-1);
    if (!open || open.timing.first_audible_ms !== null) return;
    open.timing.llm_first_token_ms = null;
    open.timing.first_sentence_ms = null;
    open.timing.tts_first_audio_ms = null;
  }

  /** Whether the latest turn's reply was generated ahead and kept (`used`) or dropped. */
  preemptiveReply(outcome: 'used' | 'discarded'): void {
    const open = this.turns.at(-1);
    if (!open) return;
    // Once dropped, the turn says so even if a later attempt is kept: the callee waited for it.
    if (open.timing.preemptive_reply !== 'discarded') open.timing.preemptive_reply = outcome;
  }

  /** Some of the reply to the latest callee turn has been sent audibly (true too when no turn yet). */
  latestReplyHeard(): boolean {
    const open = this.turns.at(-1);
    return !open || open.timing.first_audible_ms !== null;
  }

  /**
   * The callee went on speaking before any of the reply to their latest turn was heard (a pause
   * inside one answer): that turn is no turn; the one that follows holds all of it.
   */
  reopenLatest(): void {
    const open = this.turns.at(-1);
    if (open && open.timing.first_audible_ms === null) this.turns.pop();
    this.ahead = null;
  }

  /** A callee turn ended (the decision was made at `decidedAtMs`); its reply is timed from here. */
  turnEnded(speechEndMs: number, decidedAtMs: number, shape: TurnTiming['end_of_turn']): void {
    this.greetingDone = true;
    this.turns.push({
      speechEndMs,
      timing: {
        turn: this.turns.length + 1,
        callee_speech_end_ms: Math.round(speechEndMs),
        end_of_turn: shape,
        end_of_turn_ms: Math.round(decidedAtMs - speechEndMs),
        stt_final_ms: null,
        llm_first_token_ms: null,
        first_sentence_ms: null,
        tts_first_audio_ms: null,
        first_rtp_ms: null,
        first_audible_ms: null,
        voice_to_voice_ms: null,
        interrupted: false,
        interrupted_at_ms: null,
        preemptive_reply: null,
      },
    });
    const ahead = this.ahead;
    this.ahead = null;
    if (ahead) {
      const timing = this.turns.at(-1)?.timing as TurnTiming;
      for (const [stage, atMs] of Object.entries(ahead) as [AheadStage, number][])
        timing[`${stage}_ms`] = Math.round(atMs - speechEndMs);
    }
  }

  /** The latest turn's `stage` happened at `atMs` (call clock); the first time only counts. */
  mark(stage: Exclude<TurnStage, 'end_of_turn' | 'first_audible' | 'first_rtp'>, atMs: number): void {
    if (this.ahead && stage !== 'stt_final') {
      this.ahead[stage] ??= atMs;
      return;
    }
    const open = this.turns.at(-1);
    if (!open || open.timing.first_audible_ms !== null) return;
    const key = `${stage}_ms` as const;
    if (open.timing[key] === null) open.timing[key] = Math.round(atMs - open.speechEndMs);
  }

  /** An agent frame left at `frameStartMs` (call clock): the first RTP and first audible sample. */
  agentFrame(samples: Int16Array, frameStartMs: number): void {
    const open = this.turns.at(-1);
    if (!open) {
      if (this.greetingDone) return;
      this.greetingFirstRtpMs ??= frameStartMs;
      const index = firstAudibleIndex(samples);
      if (index >= 0) {
        this.greetingAudibleMs = frameStartMs + index / 8;
        this.greetingDone = true;
      }
      return;
    }
    const timing = open.timing;
    if (timing.first_audible_ms !== null) return;
    timing.first_rtp_ms ??= Math.round(frameStartMs - open.speechEndMs);
    const index = firstAudibleIndex(samples);
    if (index < 0) return;
    const audibleMs = Math.round(frameStartMs + index / 8 - open.speechEndMs);
    timing.first_audible_ms = audibleMs;
    timing.voice_to_voice_ms = audibleMs;
  }

  /** The callee cut the agent's reply to the latest turn at `atMs`. */
  interrupted(atMs: number): void {
    const open = this.turns.at(-1);
    if (!open || open.timing.interrupted) return;
    open.timing.interrupted = true;
    open.timing.interrupted_at_ms = Math.round(atMs);
  }

  /** The turns so far, oldest first. */
  timings(): TurnTiming[] {
    return this.turns.map((turn) => ({ ...turn.timing }));
  }

  /** The call's figures: voice-to-voice p50/p95 over its turns, and the greeting's timing. */
  summary(): {
    voice_to_voice_ms: { p50: number | null; p95: number | null };
    greeting_first_rtp_ms: number | null;
    greeting_audible_ms: number | null;
  } {
    const values = this.turns
      .map((turn) => turn.timing.voice_to_voice_ms)
      .filter((value): value is number => value !== null)
      .sort((a, b) => a - b);
    return {
      voice_to_voice_ms: { p50: percentile(values, 0.5), p95: percentile(values, 0.95) },
      greeting_first_rtp_ms: this.greetingFirstRtpMs === null ? null : Math.round(this.greetingFirstRtpMs),
      greeting_audible_ms: this.greetingAudibleMs === null ? null : Math.round(this.greetingAudibleMs),
    };
  }
}
