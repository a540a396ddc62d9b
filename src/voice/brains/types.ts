/** What a brain asks the call to do, in order. */
export type BrainAction =
  | { type: 'say'; text: string }
  | { type: 'send_dtmf'; digits: string }
  | { type: 'end_call' };

/** A callee turn as the pipeline hands it over. */
export interface CalleeTurn {
  text: string;
  /** The expected phrase STT matched, when it was given phrases. */
  matchedPhrase?: string;
}

/**
 * The agent's decision-maker. The pipeline runs one response at a time; a new callee turn or
 * DTMF aborts the running one (`signal`).
 */
export interface AgentBrain {
  /** The opening: the first message, or whatever the brain opens with. */
  start(signal: AbortSignal): AsyncIterable<BrainAction>;
  onCalleeTurn(turn: CalleeTurn, signal: AbortSignal): AsyncIterable<BrainAction>;
  onDtmf(digit: string, signal: AbortSignal): AsyncIterable<BrainAction>;
  /** Phrases the callee is expected to say next (a grammar for STT); undefined for free speech. */
  expectedPhrases(): string[] | undefined;
  /** Tells the brain what was actually said of its last `say` (less than asked after a barge-in). */
  noteSaid(text: string): void;
  /** The extracted data at the end of the call. */
  extract(transcript: readonly { role: string; text: string }[]): Promise<Record<string, unknown>>;
}
