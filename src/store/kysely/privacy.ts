import { type Kysely, sql } from 'kysely';
import type { AuditEntry, PrivacyRepository } from '../types.js';
import type { StoreQueries } from './dialects.js';
import { type Database, jsonText } from './schema.js';

const liveStatuses = ['queued', 'dialing', 'ringing', 'in_progress'];
/**
 * The tables an erasure deletes from (`eraseNumber`, and `recordings` where PostgreSQL holds the
 * recordings): the ones vacuumed after it on PostgreSQL, and the list docs/decisions.md gives for
 * `VACUUM FULL`.
 */
export const erasedTables = [
  'recordings',
  'event_attempts',
  'events',
  'campaign_attempts',
  'agent_test_calls',
  'calls',
  'campaign_contacts',
  'sandbox_invites',
] as const;
/** Ids per statement: within both drivers' bound-parameter limits. */
const idsPerStatement = 500;

function slices<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += idsPerStatement)
    out.push(items.slice(start, start + idsPerStatement));
  return out;
}

/** Retention rules, erasure of a number and the audit log, written once for both dialects. */
export class KyselyPrivacy implements PrivacyRepository {
  constructor(private readonly queries: StoreQueries) {}

  /** On PostgreSQL in one transaction; SQLite's Kysely has none (each step is repeatable). */
  private async write<T>(work: (db: Kysely<Database>) => Promise<T>): Promise<T> {
    const { db, dialect } = this.queries;
    return dialect.name === 'postgres' ? db.transaction().execute(work) : work(db);
  }

  async callsOfNumber(
    accountId: string,
    number: string,
  ): Promise<{ id: string; status: string; recordingPath: string | null }[]> {
    const { db } = this.queries;
    const rows = await db
      .selectFrom('calls')
      .select(['id', 'status', 'recording_path'])
      .where('account_id', '=', accountId)
      .where('to_number', '=', number)
      .execute();
    // Replays of those calls (agent tests) played the callee's recorded voice: theirs too.
    const replays = [];
    for (const ids of slices(rows.map((row) => row.id))) {
      replays.push(
        ...(await db
          .selectFrom('calls')
          .innerJoin('agent_test_calls', 'agent_test_calls.call_id', 'calls.id')
          .select(['calls.id', 'calls.status', 'calls.recording_path'])
          .where('calls.account_id', '=', accountId)
          .where('agent_test_calls.replay_of', 'in', ids)
          .execute()),
      );
    }
    return [...rows, ...replays].map((row) => ({
      id: row.id,
      status: row.status,
      recordingPath: row.recording_path,
    }));
  }

  async eraseNumber(
    accountId: string,
    number: string,
    callIds: readonly string[],
  ): Promise<{ calls: number; contacts: number }> {
    return this.write(async (db) => {
      let calls = 0;
      for (const ids of slices(callIds)) {
        const events = db.selectFrom('events').select('id').where('call_id', 'in', ids);
        await db.deleteFrom('event_attempts').where('event_id', 'in', events).execute();
        await db.deleteFrom('events').where('call_id', 'in', ids).execute();
        await db.deleteFrom('campaign_attempts').where('call_id', 'in', ids).execute();
        await db.deleteFrom('agent_test_calls').where('call_id', 'in', ids).execute();
        const deleted = await db
          .deleteFrom('calls')
          .where('id', 'in', ids)
          .where('account_id', '=', accountId)
          .where('status', 'not in', liveStatuses)
          .executeTakeFirst();
        calls += Number(deleted.numDeletedRows);
      }
      const contacts = await db
        .deleteFrom('campaign_contacts')
        .where('account_id', '=', accountId)
        .where('to_number', '=', number)
        .where('state', '!=', 'calling')
        .executeTakeFirst();
      await db.deleteFrom('sandbox_invites').where('to_number', '=', number).execute();
      return { calls, contacts: Number(contacts.numDeletedRows) };
    });
  }

  async reclaimErased(): Promise<void> {
    const { db, dialect } = this.queries;
    if (dialect.name === 'postgres') {
      // Not in a transaction (VACUUM cannot be): each table its own statement.
      for (const table of erasedTables) await sql`VACUUM ${sql.table(table)}`.execute(db);
      return;
    }
    // A reader holding an old snapshot keeps the WAL's frames: try a few times, briefly.
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const result = await sql<{
        busy: number;
        log: number;
        checkpointed: number;
      }>`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db);
      if (Number(result.rows[0]?.busy ?? 0) === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async addAudit(entry: AuditEntry): Promise<void> {
    await this.queries.db
      .insertInto('audit_log')
      .values({
        id: entry.id,
        account_id: entry.accountId,
        action: entry.action,
        actor: entry.actor,
        subject: entry.subject,
        detail: jsonText(entry.detail),
        created_at: entry.createdAt,
      })
      .execute();
  }

  async listAudit(accountId: string, options: { limit: number; before?: string }): Promise<AuditEntry[]> {
    const rows = await this.queries.db
      .selectFrom('audit_log')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '<', options.before ?? '~')
      .orderBy('id', 'desc')
      .limit(options.limit)
      .execute();
    const { columns } = this.queries.dialect;
    return rows.map((row) => ({
      id: row.id,
      accountId: row.account_id,
      action: row.action,
      actor: row.actor,
      subject: row.subject,
      detail: columns.json(row.detail),
      createdAt: columns.time(row.created_at),
    }));
  }

  async retentionDays(accountId: string): Promise<number | null> {
    const row = await this.queries.db
      .selectFrom('retention_rules')
      .select('retention_days')
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row ? Number(row.retention_days) : null;
  }

  async setRetentionDays(accountId: string, days: number | null, atIso: string): Promise<void> {
    const { db } = this.queries;
    if (days === null) {
      await db.deleteFrom('retention_rules').where('account_id', '=', accountId).execute();
      return;
    }
    await db
      .insertInto('retention_rules')
      .values({ account_id: accountId, retention_days: days, updated_at: atIso })
      .onConflict((conflict) =>
        conflict.column('account_id').doUpdateSet({ retention_days: days, updated_at: atIso }),
      )
      .execute();
  }

  async retentionRules(): Promise<{ accountId: string; days: number }[]> {
    const rows = await this.queries.db
      .selectFrom('retention_rules')
      .select(['account_id', 'retention_days'])
      .execute();
    return rows.map((row) => ({ accountId: row.account_id, days: Number(row.retention_days) }));
  }

  async callsPastRetention(
    accountId: string,
    endedBeforeIso: string,
    limit: number,
  ): Promise<{ id: string; recordingPath: string | null }[]> {
    const rows = await this.queries.db
      .selectFrom('calls')
      .select(['id', 'recording_path'])
      .where('account_id', '=', accountId)
      .where('ended_at', '<', endedBeforeIso)
      .where('transcript_erased_at', 'is', null)
      .limit(limit)
      .execute();
    return rows.map((row) => ({ id: row.id, recordingPath: row.recording_path }));
  }

  async scrubCalls(callIds: readonly string[], atIso: string): Promise<void> {
    await this.write(async (db) => {
      for (const ids of slices(callIds)) {
        await db
          .updateTable('calls')
          .set({ transcript: jsonText([]), recording_path: null, transcript_erased_at: atIso })
          .where('id', 'in', ids)
          .execute();
        // The stored call.completed bodies carry the transcript and the recording link too.
        // Status events (call.ringing…) carry neither.
        const events = await db
          .selectFrom('events')
          .select(['id', 'body'])
          .where('call_id', 'in', ids)
          .where('type', '=', 'call.completed')
          .execute();
        for (const event of events) {
          const body = JSON.parse(event.body) as { data?: Record<string, unknown> };
          if (body.data) {
            body.data.transcript = [];
            body.data.recording_url = null;
          }
          await db
            .updateTable('events')
            .set({ body: JSON.stringify(body) })
            .where('id', '=', event.id)
            .execute();
        }
      }
    });
  }
}
