import type { CallAnalysis } from '../../domain/callAnalysis.js';
import type {
  CallFinish,
  CallRecord,
  NewQueuedCall,
  SipDialogRecord,
  TranscriptEntry,
} from '../../domain/records.js';
import { queueNames } from '../../queue/types.js';
import { sipDialogFromJson, sipDialogToJson } from '../sipDialogJson.js';
import type {
  AuthorizedCallAttempt,
  AuthorizedCallOutcome,
  CallListQuery,
  CallRepository,
  CompletedEventBuilder,
} from '../types.js';
import { AuthorizedCallCreation } from './authorizedCallCreation.js';
import { CallCreationBatcher } from './callCreationBatcher.js';
import { type PgPool, withTransaction } from './database.js';
import { notifyJobs } from './jobNotifications.js';
import type { PostgresJobWriter } from './jobQueue.js';
import { type CallRow, toCall } from './rows.js';

const liveStatuses = "('dialing', 'ringing', 'in_progress')";
const unfinishedStatuses = "('queued', 'dialing', 'ringing', 'in_progress')";

/** Calls: creation (with its dispatch job), reads, and the lifecycle a worker drives. */
export class PostgresCalls implements CallRepository {
  private readonly creations: CallCreationBatcher;
  private readonly authorizedCreations: AuthorizedCallCreation;

  constructor(
    private readonly pool: PgPool,
    private readonly queue: PostgresJobWriter,
  ) {
    // A wake-up hint for workers in other processes, sent after the commit.
    const wakeDispatchers = () => notifyJobs(pool, queueNames.dispatch);
    this.creations = new CallCreationBatcher(pool, queue, wakeDispatchers);
    this.authorizedCreations = new AuthorizedCallCreation(pool, queue, wakeDispatchers);
  }

  /** The API's create: every check and the write in one statement, batched with concurrent ones. */
  createAuthorized(attempt: AuthorizedCallAttempt): Promise<AuthorizedCallOutcome> {
    return this.authorizedCreations.create(attempt);
  }

  /** Re-checks the key and writes the call with its dispatch job, batched with concurrent ones. */
  createQueued(input: NewQueuedCall): Promise<CallRecord | null> {
    return this.creations.create(input);
  }

  async get(accountId: string, callId: string): Promise<CallRecord | null> {
    const { rows } = await this.pool.query<CallRow>('SELECT * FROM calls WHERE account_id = $1 AND id = $2', [
      accountId,
      callId,
    ]);
    return rows[0] ? toCall(rows[0]) : null;
  }

  async getById(callId: string): Promise<CallRecord | null> {
    const { rows } = await this.pool.query<CallRow>('SELECT * FROM calls WHERE id = $1', [callId]);
    return rows[0] ? toCall(rows[0]) : null;
  }

  async list(accountId: string, query: CallListQuery): Promise<CallRecord[]> {
    // '~' sorts after every id character (ids collate byte-wise), so "no cursor" is the end.
    const before = query.before ?? '~';
    const { rows } = query.status
      ? await this.pool.query<CallRow>(
          'SELECT * FROM calls WHERE account_id = $1 AND status = $2 AND id < $3 ORDER BY id DESC LIMIT $4',
          [accountId, query.status, before, query.limit],
        )
      : await this.pool.query<CallRow>(
          'SELECT * FROM calls WHERE account_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3',
          [accountId, before, query.limit],
        );
    return rows.map(toCall);
  }

  claimForDialing(
    callId: string,
    lease: { workerId: string; untilIso: string; atIso: string },
  ): Promise<{ claimed: CallRecord } | { refused: 'not_queued' | 'capped' }> {
    return withTransaction(
      this.pool,
      async (client): Promise<{ claimed: CallRecord } | { refused: 'not_queued' | 'capped' }> => {
        const found = await client.query<{ account_id: string; status: string }>(
          'SELECT account_id, status FROM calls WHERE id = $1',
          [callId],
        );
        const call = found.rows[0];
        if (call?.status !== 'queued') return { refused: 'not_queued' };
        // The account row lock serialises claims of one account across every process, so the
        // count below and the update after it cannot interleave with another worker's.
        const account = await client.query<{ max_live_calls: number }>(
          'SELECT max_live_calls FROM accounts WHERE id = $1 FOR UPDATE',
          [call.account_id],
        );
        const cap = account.rows[0]?.max_live_calls ?? 10;
        const live = await client.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM calls WHERE account_id = $1 AND status IN ${liveStatuses}`,
          [call.account_id],
        );
        if ((live.rows[0]?.n ?? 0) >= cap) return { refused: 'capped' };
        const { rows } = await client.query<CallRow>(
          `UPDATE calls SET status = 'dialing', dialing_at = $2, worker_id = $3, lease_expires_at = $4,
             updated_at = $2
           WHERE id = $1 AND status = 'queued' RETURNING *`,
          [callId, lease.atIso, lease.workerId, lease.untilIso],
        );
        return rows[0] ? { claimed: toCall(rows[0]) } : { refused: 'not_queued' };
      },
    );
  }

  async markLive(
    callId: string,
    workerId: string,
    status: 'ringing' | 'in_progress',
    atIso: string,
  ): Promise<boolean> {
    const sql =
      status === 'ringing'
        ? `UPDATE calls SET status = 'ringing', ringing_at = $1, updated_at = $1
           WHERE id = $2 AND worker_id = $3 AND status = 'dialing'`
        : `UPDATE calls SET status = 'in_progress', in_progress_at = $1, updated_at = $1
           WHERE id = $2 AND worker_id = $3 AND status IN ('dialing', 'ringing')`;
    const result = await this.pool.query(sql, [atIso, callId, workerId]);
    return (result.rowCount ?? 0) > 0;
  }

  async setSipCallId(callId: string, sipCallId: string): Promise<void> {
    await this.pool.query('UPDATE calls SET sip_call_id = $1 WHERE id = $2', [sipCallId, callId]);
  }

  async setLiveTranscript(callId: string, transcript: TranscriptEntry[]): Promise<void> {
    await this.pool.query(
      "UPDATE calls SET transcript = $1::jsonb WHERE id = $2 AND status = 'in_progress'",
      [JSON.stringify(transcript), callId],
    );
  }

  async setSipDialog(callId: string, dialog: SipDialogRecord): Promise<void> {
    await this.pool.query('UPDATE calls SET sip_dialog = $1::jsonb WHERE id = $2', [
      sipDialogToJson(dialog),
      callId,
    ]);
  }

  async getSipDialog(callId: string): Promise<SipDialogRecord | null> {
    const { rows } = await this.pool.query<{ sip_dialog: unknown }>(
      'SELECT sip_dialog FROM calls WHERE id = $1',
      [callId],
    );
    return sipDialogFromJson(rows[0]?.sip_dialog ?? null);
  }

  async renewLeases(workerId: string, untilIso: string): Promise<number> {
    const result = await this.pool.query(
      `UPDATE calls SET lease_expires_at = $1 WHERE worker_id = $2 AND status IN ${liveStatuses}`,
      [untilIso, workerId],
    );
    return result.rowCount ?? 0;
  }

  async listAbandoned(options: { beforeIso: string; notHeldBy?: string }): Promise<CallRecord[]> {
    const { rows } = await this.pool.query<CallRow>(
      `SELECT * FROM calls WHERE status IN ${liveStatuses}
         AND (lease_expires_at < $1 OR ($2::text IS NOT NULL AND worker_id IS DISTINCT FROM $2::text))
       ORDER BY id`,
      [options.beforeIso, options.notHeldBy ?? null],
    );
    return rows.map(toCall);
  }

  async setAnalysis(
    accountId: string,
    callId: string,
    result: { extractedData: Record<string, unknown>; analysis: CallAnalysis },
  ): Promise<CallRecord | null> {
    const { rows } = await this.pool.query<CallRow>(
      `UPDATE calls SET extracted_data = $3::jsonb, analysis = $4::jsonb, updated_at = $5
       WHERE account_id = $1 AND id = $2 AND status NOT IN ${unfinishedStatuses} RETURNING *`,
      [
        accountId,
        callId,
        JSON.stringify(result.extractedData),
        JSON.stringify(result.analysis),
        new Date().toISOString(),
      ],
    );
    return rows[0] ? toCall(rows[0]) : null;
  }

  async finish(
    callId: string,
    finish: CallFinish,
    buildEvent: CompletedEventBuilder,
  ): Promise<CallRecord | null> {
    const finished = await withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<CallRow>(
        `UPDATE calls SET status = $2, end_reason = $3, answered_by = COALESCE($4, answered_by),
           transcript = COALESCE($5::jsonb, transcript), recording_path = COALESCE($6, recording_path),
           extracted_data = COALESCE($7::jsonb, extracted_data), metrics = COALESCE($8::jsonb, metrics),
           analysis = COALESCE($10::jsonb, analysis), variables = COALESCE($11::jsonb, variables), ended_at = $9, lease_expires_at = NULL, cancel_requested_at = NULL, updated_at = $9
         WHERE id = $1 AND status IN ${unfinishedStatuses} RETURNING *`,
        [
          callId,
          finish.status,
          finish.endReason,
          finish.answeredBy ?? null,
          finish.transcript ? JSON.stringify(finish.transcript) : null,
          finish.recordingPath ?? null,
          finish.extractedData ? JSON.stringify(finish.extractedData) : null,
          finish.metrics ? JSON.stringify(finish.metrics) : null,
          finish.atIso,
          finish.analysis ? JSON.stringify(finish.analysis) : null,
          finish.variables ? JSON.stringify(finish.variables) : null,
        ],
      );
      const row = rows[0];
      if (!row) return null;
      const call = toCall(row);
      const event = buildEvent(call);
      await client.query(
        `INSERT INTO events (id, account_id, type, call_id, body, created_at, status)
         VALUES ($1, $2, 'call.completed', $3, $4, $5, 'pending')`,
        [event.id, call.accountId, call.id, event.body, event.createdAt],
      );
      await this.queue.insertWithinTransaction(client, {
        queue: queueNames.webhook,
        payload: { event_id: event.id },
        runAtMs: Date.parse(event.createdAt),
      });
      return call;
    });
    if (finished) notifyJobs(this.pool, queueNames.webhook);
    return finished;
  }

  async requestCancel(callId: string, atIso: string): Promise<boolean> {
    const result = await this.pool.query(
      `UPDATE calls SET cancel_requested_at = COALESCE(cancel_requested_at, $1)
       WHERE id = $2 AND status IN ${liveStatuses}`,
      [atIso, callId],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async listCancelRequests(workerId: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>(
      `SELECT id FROM calls WHERE worker_id = $1 AND status IN ${liveStatuses}
         AND cancel_requested_at IS NOT NULL ORDER BY id`,
      [workerId],
    );
    return rows.map((row) => row.id);
  }

  async countByStatus(accountId?: string): Promise<Record<string, number>> {
    const { rows } = accountId
      ? await this.pool.query<{ status: string; n: number }>(
          'SELECT status, count(*)::int AS n FROM calls WHERE account_id = $1 GROUP BY status',
          [accountId],
        )
      : await this.pool.query<{ status: string; n: number }>(
          'SELECT status, count(*)::int AS n FROM calls GROUP BY status',
        );
    return Object.fromEntries(rows.map((row) => [row.status, row.n]));
  }
}
