import { AppError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { isE164, maskPhone } from '../domain/phone.js';
import type { Logger } from '../logger.js';
import type { RecordingStorage } from '../recordings/recordingStorage.js';
import type { AuditEntry, Store } from '../store/types.js';

export const retentionDaysMax = 3_650;
const liveStatuses = new Set(['queued', 'dialing', 'ringing', 'in_progress']);

export type ErasureResult = {
  calls_erased: number;
  recordings_erased: number;
  campaign_contacts_erased: number;
  audit_id: string;
  erased_at: string;
};

/**
 * Erases everything stored about one phone number in an account (a data-protection request): its
 * calls with their transcripts, recordings, events and delivery attempts, the agent-test replays of
 * those calls (the callee's recorded voice), and its campaign contacts. Refused (409) while a call to it is queued or live. Leaves an audit entry that names
 * the number masked. The do-not-call entry, if any, stays: it is what keeps the number uncalled.
 */
export async function eraseNumber(
  store: Store,
  recordings: RecordingStorage | null,
  accountId: string,
  number: string,
  actor: string,
): Promise<ErasureResult> {
  if (!isE164(number))
    throw new AppError('invalid_phone', 'number must be an E.164 phone number such as +14155550123');
  const calls = await store.privacy.callsOfNumber(accountId, number);
  const live = calls.filter((call) => liveStatuses.has(call.status));
  if (live.length > 0)
    throw new AppError(
      'conflict',
      `${live.length} call(s) to this number are still queued or live; erase it after they end`,
    );
  let recordingsErased = 0;
  for (const call of calls) {
    if (!call.recordingPath || !recordings) continue;
    await recordings.remove(call.recordingPath);
    recordingsErased += 1;
  }
  const erased = await store.privacy.eraseNumber(
    accountId,
    number,
    calls.map((call) => call.id),
  );
  const entry: AuditEntry = {
    id: newId('audit'),
    accountId,
    action: 'erase_number',
    actor,
    subject: maskPhone(number),
    detail: { calls: erased.calls, recordings: recordingsErased, campaign_contacts: erased.contacts },
    createdAt: new Date().toISOString(),
  };
  await store.privacy.addAudit(entry);
  await store.privacy.reclaimErased();
  return {
    calls_erased: erased.calls,
    recordings_erased: recordingsErased,
    campaign_contacts_erased: erased.contacts,
    audit_id: entry.id,
    erased_at: entry.createdAt,
  };
}

export function describeAuditEntry(entry: AuditEntry) {
  return {
    audit_id: entry.id,
    action: entry.action,
    actor: entry.actor,
    subject: entry.subject,
    detail: entry.detail,
    created_at: entry.createdAt,
  };
}

/**
 * Applies each account's retention rule: transcripts and recordings of calls that ended more than
 * the rule's days ago are deleted; the call records (status, times, outcome) stay. Runs in every
 * worker process; the work is idempotent, so two sweeps at once only repeat each other.
 */
export class RetentionSweeper {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly options: {
      store: Store;
      recordings: RecordingStorage;
      logger: Logger;
      intervalMs?: number;
    },
  ) {}

  start(): void {
    const run = () =>
      void this.sweep(Date.now()).catch((error: unknown) =>
        this.options.logger.error({ err: error }, 'retention sweep failed'),
      );
    run();
    this.timer = setInterval(run, this.options.intervalMs ?? 3_600_000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One pass at `nowMs`; resolves to how many calls were cleared. */
  async sweep(nowMs: number): Promise<number> {
    const { store, recordings } = this.options;
    let cleared = 0;
    for (const rule of await store.privacy.retentionRules()) {
      const before = new Date(nowMs - rule.days * 86_400_000).toISOString();
      for (;;) {
        const due = await store.privacy.callsPastRetention(rule.accountId, before, 200);
        if (due.length === 0) break;
        for (const call of due) if (call.recordingPath) await recordings.remove(call.recordingPath);
        await store.privacy.scrubCalls(
          due.map((call) => call.id),
          new Date(nowMs).toISOString(),
        );
        cleared += due.length;
      }
    }
    if (cleared > 0) this.options.logger.info({ cleared }, 'retention: transcripts and recordings deleted');
    return cleared;
  }
}
