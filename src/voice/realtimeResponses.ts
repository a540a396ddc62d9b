/**
 * Whether a speech-to-speech session has a response in progress. OpenAI Realtime refuses a
 * `response.create` while one is active (`conversation_already_has_active_response`), so what
 * callwright asks for on its own — a tool's `messages`, the reply after a tool's answer — waits
 * for the response before it to be done.
 */
export class RealtimeResponses {
  private active = false;
  private waiters: Array<() => void> = [];

  /** A response began (we asked for one, or the vendor's own turn detection made one). */
  started(): void {
    this.active = true;
  }

  /** The response is done (or the session is over): whoever waits goes on. */
  done(): void {
    this.active = false;
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }

  /** Resolves once no response is in progress. */
  idle(): Promise<void> {
    if (!this.active) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

/** The instructions of a response that only says `text`: a tool's start, delayed or failed message. */
export function sayExactly(text: string): string {
  return `Say exactly, word for word, and nothing else (call no function): "${text}"`;
}
