import { terminalOutcomeOf } from '../domain/callOutcome.js';
import type { Logger } from '../logger.js';
import type { CompletedEventBuilder, Store } from '../store/types.js';

/**
 * Ends the web calls no browser came for: a call whose one-use token expired unused would stay
 * `queued` for ever (nothing dials a web call). Each ends `canceled` with its `call.completed`
 * event, as a queued call canceled through the API does. Runs in every worker process; `finish`
 * ends a call once, so two sweeps at once only repeat each other. A browser can no longer use the
 * token by then (`consume` wants `expires_at` after now), so a sweep never ends a call in use.
 */
export class WebCallSweeper {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly options: {
      store: Store;
      buildEvent: CompletedEventBuilder;
      logger: Logger;
      intervalMs?: number;
    },
  ) {}

  start(): void {
    const run = () =>
      void this.sweep(Date.now()).catch((error: unknown) =>
        this.options.logger.error({ err: error }, 'web call sweep failed'),
      );
    this.timer = setInterval(run, this.options.intervalMs ?? 30_000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One pass at `nowMs`; resolves to how many web calls it ended. */
  async sweep(nowMs: number): Promise<number> {
    const { store, buildEvent } = this.options;
    const atIso = new Date(nowMs).toISOString();
    let ended = 0;
    for (;;) {
      const due = await store.webCalls.expiredUnused(atIso, 100);
      if (due.length === 0) break;
      for (const callId of due) {
        const finished = await store.calls.finish(
          callId,
          { ...terminalOutcomeOf({ kind: 'canceled', answered: false }), atIso },
          buildEvent,
        );
        if (finished) ended += 1;
      }
      if (due.length < 100) break;
    }
    if (ended > 0) this.options.logger.info({ ended }, 'web calls whose token expired unused ended');
    return ended;
  }
}
