import { terminalOutcomeOf } from '../domain/callOutcome.js';
import { terminalStatuses } from '../domain/callStatus.js';
import { AppError } from '../domain/errors.js';
import type { CallRecord } from '../domain/records.js';
import type { CompletedEventBuilder, Store } from '../store/types.js';

/**
 * Cancelling a call held by another process: a queued call ends here at once; a live one gets a
 * cancel request in the store, which the worker holding it picks up within about a second and
 * hangs up. Resolves to the call once it has ended.
 */
export async function cancelThroughStore(
  store: Store,
  call: CallRecord,
  buildEvent: CompletedEventBuilder,
  options: { waitMs?: number; pollMs?: number } = {},
): Promise<CallRecord | null> {
  if (call.status === 'queued') {
    const finished = await store.calls.finish(
      call.id,
      { ...terminalOutcomeOf({ kind: 'canceled', answered: false }), atIso: new Date().toISOString() },
      buildEvent,
    );
    if (finished) return finished;
  }
  if (!(await store.calls.requestCancel(call.id, new Date().toISOString()))) {
    return store.calls.getById(call.id);
  }
  const deadline = Date.now() + (options.waitMs ?? 15_000);
  for (;;) {
    const current = await store.calls.getById(call.id);
    if (!current || terminalStatuses.has(current.status)) return current;
    if (Date.now() > deadline) {
      throw new AppError('conflict', 'the call is being hung up by its worker; retry shortly');
    }
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 100));
  }
}

/** The API's call control in a process without call workers (`serve --role api`). */
export function remoteCallControl(store: Store, buildEvent: CompletedEventBuilder) {
  return {
    // Queued calls are announced by the insert transaction itself (NOTIFY on commit).
    wake(): void {},
    cancel: (call: CallRecord) => cancelThroughStore(store, call, buildEvent),
  };
}
