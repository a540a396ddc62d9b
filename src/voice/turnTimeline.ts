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

export class TurnTimeline {
  private readonly turns: OpenTurn[] = [];
  /** The agent's first audible sample after the answer (the greeting), call clock. */
  private greetingAudibleMs: number | null = null;
  private greetingFirstRtpMs: number | null = null;
  private greetingDone = false;

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
      },
    });
  }

  /** The latest turn's `stage` happened at `atMs` (call clock); the first time only counts. */
  mark(stage: Exclude<TurnStage, 'end_of_turn' | 'first_audible' | 'first_rtp'>, atMs: number): void {
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
