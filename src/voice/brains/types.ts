import type { CallAnalysis } from '../../domain/callAnalysis.js';

/** What a brain asks the call to do, in order. */
export type BrainAction =
  /** `interruptible: false`: a passage read in full, whatever the callee says over it. */
  | {
      type: 'say';
      text: string;
      interruptible?: boolean;
      /**
       * `text` is a sentence's first clause; the rest of the sentence (possibly '') follows when the
       * model has written it. Voiced and written to the transcript as one line.
       */
      rest?: Promise<string>;
      /** Said only if this still holds once what is before it has been heard (a tool's waiting line). */
      whilePending?: () => boolean;
    }
  | { type: 'send_dtmf'; digits: string }
  /** A cold transfer to one of the agent's targets (by name), once what is queued has been said. */
  | { type: 'transfer'; target: string; summary?: string }
  /** A timed event for the transcript (a tool called, its answer); nothing is said. */
  /** The callee asked not to be called again: their number goes on the account's do-not-call list. */
  | { type: 'do_not_call' }
  /** A machine answered: leave the voicemail (the agent's message, else this one), then hang up. */
  | { type: 'leave_voicemail'; message?: string }
  | { type: 'note'; event: 'tool_call' | 'tool_result' | 'end_call'; text: string }
  | { type: 'end_call' };

/** What the analysis of a call gives: `extracted_data` and the analysis record. */
export interface CallAnalysisResult {
  data: Record<string, unknown>;
  analysis: CallAnalysis;
}

/** One callee turn as a rule-following brain understood it (domain/intentMatching.ts). */
export interface TurnUnderstanding {
  /** The script node that listened. */
  node: string;
  /** The words heard. */
  heard: string;
  /** The matched option's index in the node's `listen` list; null: none matched. */
  option: number | null;
  /** The listed phrase that matched. */
  phrase: string | null;
  /** exact: the answer is the phrase; contains: among other words; variant: in other words. */
  match: 'exact' | 'contains' | 'variant' | null;
  /** Why this option, or why none. */
  reason: string;
}

/** A callee turn as the pipeline hands it over. */
export interface CalleeTurn {
  text: string;
  /** The expected phrase STT matched, when it was given phrases. */
  matchedPhrase?: string;
}

/**
 * What a brain hears and says after `AgentBrain.draft()` until the draft is kept or dropped: a
 * reply generated on words the callee may not turn out to have said (preemptive generation).
 */
export interface BrainDraft {
  /** The callee did say them: the draft is the brain's history; `text` is their final wording. */
  keep(text: string): void;
  /** They did not: the brain forgets the turn and the reply, as if neither had happened. */
  drop(): void;
}

/**
 * The agent's decision-maker. The pipeline runs one response at a time; a new callee turn or
 * DTMF aborts the running one (`signal`).
 */
export interface AgentBrain {
  /** The opening: the first message, or whatever the brain opens with. */
  start(signal: AbortSignal): AsyncIterable<BrainAction>;
  /**
   * The first thing `start` says when it is known before the call is answered (a first message, a
   * script's opening line), so it can be synthesised while the phone rings; null otherwise.
   */
  greeting(): string | null;
  /** Called as a reply's first token arrives from a language model (for the turn's latency figures). */
  onFirstToken?: (() => void) | undefined;
  onCalleeTurn(turn: CalleeTurn, signal: AbortSignal): AsyncIterable<BrainAction>;
  onDtmf(digit: string, signal: AbortSignal): AsyncIterable<BrainAction>;
  /** A transfer it asked for did not happen (refused, busy, no answer): what the agent does now. */
  onTransferFailed?(reason: string, signal: AbortSignal): AsyncIterable<BrainAction>;
  /** Phrases the callee is expected to say next (a grammar for STT); undefined for free speech. */
  expectedPhrases(): string[] | undefined;
  /**
   * Starts a draft (see BrainDraft): the next callee turn and its reply may be taken back. A brain
   * without it gets no turn before the callee's turn is final (no preemptive generation).
   */
  draft?(): BrainDraft;
  /** Tells the brain what was actually said of its last `say` (less than asked after a barge-in). */
  noteSaid(text: string): void;
  /** An action it asked for was not carried out after all (why, in words for the brain). */
  noteNotDone?(action: 'end_call' | 'transfer', why: string): void;
  /**
   * Per callee turn the brain matched against rules (the script brain's `listen`): what was heard,
   * which rule matched (or none) and why. For the call's metrics (`understanding`).
   */
  understanding?(): TurnUnderstanding[];
  /**
   * The post-call analysis: the extracted data, checked against the agent's data schema, and the
   * summary and success judgement it asks for (src/voice/callAnalyst.ts).
   */
  analyze(transcript: readonly { role: string; text: string; event?: string }[]): Promise<CallAnalysisResult>;
}

/** The `reason` an `end_call` tool call gave (cut to 200 characters), or null. */
export function endCallReason(argumentsJson: string): string | null {
  try {
    const reason = (JSON.parse(argumentsJson) as { reason?: unknown } | null)?.reason;
    return typeof reason === 'string' && reason.trim() ? reason.trim().slice(0, 200) : null;
  } catch {
    return null;
  }
}

/**
 * Sets the campaign contact's next attempt to the time the callee asked for (schedule_callback);
 * answers truthfully when the call has no campaign.
 */
export type CallbackScheduler = (
  request: import('../../domain/callbacks.js').CallbackRequest,
) => Promise<import('../../domain/callbacks.js').CallbackResult>;
