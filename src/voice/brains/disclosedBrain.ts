import type { AgentBrain, BrainAction, CalleeTurn } from './types.js';

/**
 * A brain whose call opens with a recording disclosure ("this call is recorded"): said first, in
 * full whatever the callee says over it, then the brain's own opening. Everything else is the
 * brain's. The disclosure is also what is synthesised while the phone rings (the greeting).
 */
export class DisclosedBrain implements AgentBrain {
  constructor(
    private readonly inner: AgentBrain,
    private readonly disclosure: string,
  ) {}

  get onFirstToken(): (() => void) | undefined {
    return this.inner.onFirstToken;
  }

  set onFirstToken(listener: (() => void) | undefined) {
    this.inner.onFirstToken = listener;
  }

  async *start(signal: AbortSignal): AsyncIterable<BrainAction> {
    yield { type: 'say', text: this.disclosure, interruptible: false };
    yield* this.inner.start(signal);
  }

  greeting(): string | null {
    return this.disclosure;
  }

  onCalleeTurn(turn: CalleeTurn, signal: AbortSignal): AsyncIterable<BrainAction> {
    return this.inner.onCalleeTurn(turn, signal);
  }

  onDtmf(digit: string, signal: AbortSignal): AsyncIterable<BrainAction> {
    return this.inner.onDtmf(digit, signal);
  }

  onTransferFailed(reason: string, signal: AbortSignal): AsyncIterable<BrainAction> {
    return this.inner.onTransferFailed ? this.inner.onTransferFailed(reason, signal) : noActions();
  }

  expectedPhrases(): string[] | undefined {
    return this.inner.expectedPhrases();
  }

  noteSaid(text: string): void {
    // The disclosure is not the brain's words: what it said after it is.
    this.inner.noteSaid(text.startsWith(this.disclosure) ? text.slice(this.disclosure.length).trim() : text);
  }

  noteNotDone(action: 'end_call' | 'transfer', why: string): void {
    this.inner.noteNotDone?.(action, why);
  }

  analyze(transcript: Parameters<AgentBrain['analyze']>[0]): ReturnType<AgentBrain['analyze']> {
    return this.inner.analyze(transcript);
  }
}

async function* noActions(): AsyncIterable<BrainAction> {}
