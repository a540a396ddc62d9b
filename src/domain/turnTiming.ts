/** What the words of a callee's turn said about it (see the voice pipeline's turn shape). */
export type TurnShape = 'complete' | 'unfinished' | 'unknown';

/**
 * One callee turn's latency waterfall, as a call's metrics store it (`metrics.turns`) and the
 * dashboard draws it: stage figures are ms after the callee stopped speaking; null when the stage
 * did not happen.
 */
export interface TurnTiming {
  /** 1 for the callee's first turn. */
  turn: number;
  /** When the callee stopped speaking (the last audible sample of the turn). */
  callee_speech_end_ms: number;
  /** What the words said about the turn, which set the wait (`max_utterance`: cut at the limit). */
  end_of_turn: TurnShape | 'max_utterance';
  end_of_turn_ms: number;
  stt_final_ms: number | null;
  llm_first_token_ms: number | null;
  first_sentence_ms: number | null;
  tts_first_audio_ms: number | null;
  first_rtp_ms: number | null;
  first_audible_ms: number | null;
  /** The headline: end of the callee's speech → the first agent sample they can hear. */
  voice_to_voice_ms: number | null;
  /** The callee cut the reply; `interrupted_at_ms` is when (call clock). */
  interrupted: boolean;
  interrupted_at_ms: number | null;
  /**
   * Preemptive generation: `used` — the reply began on the callee's words before the turn was
   * confirmed, and the final transcript said the same words, so it was kept; `discarded` — one was
   * begun but the final differed, so it was dropped unheard and the reply started again; null —
   * none was begun (a script brain, no partial transcript, speech over the agent).
   */
  preemptive_reply: 'used' | 'discarded' | null;
}
