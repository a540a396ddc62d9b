import type { CallAnalysis } from '../../domain/callAnalysis.js';
import type {
  CallFinish,
  CallRecord,
  NewQueuedCall,
  SipDialogRecord,
  TranscriptEntry,
} from '../../domain/records.js';
import { queueNames, type SynchronousJobWriter } from '../../queue/types.js';
import { sipDialogFromJson, sipDialogToJson } from '../sipDialogJson.js';
import type { CallListQuery, CallRepository, CompletedEventBuilder } from '../types.js';
import type { SqliteDatabase } from './database.js';
import type { GroupCommitter } from './groupCommit.js';
import { type CallRow, toCall } from './rows.js';

const liveStatuses = "('dialing', 'ringing', 'in_progress')";

/** Calls: creation (with its dispatch job), reads, and the lifecycle a worker drives. */
export class SqliteCalls implements CallRepository {
  private readonly keyStillValid;
  private readonly insert;
  private readonly byId;
  private readonly byIdAnyAccount;
  private readonly listAll;
  private readonly listByStatus;
  private readonly liveCount;
  private readonly accountCap;
  private readonly claim;
  private readonly markStatements;
  private readonly setSipCallIdStatement;
  private readonly setLiveTranscriptStatement;
  private readonly setSipDialogStatement;
  private readonly sipDialogStatement;
  private readonly renew;
  private readonly abandoned;
  private readonly finishStatement;
  private readonly setAnalysisStatement;
  private readonly insertEvent;
  private readonly statusCounts;
  private readonly statusCountsForAccount;
  private readonly requestCancelStatement;
  private readonly cancelRequests;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly committer: GroupCommitter,
    private readonly queue: SynchronousJobWriter,
  ) {
    this.keyStillValid = db.prepare('SELECT 1 FROM api_keys WHERE id = ? AND revoked_at IS NULL');
    this.insert = db.prepare(
      `INSERT INTO calls (id, account_id, agent_id, api_key_id, from_number, to_number, first_message, context,
         variables, status, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?)`,
    );
    this.byId = db.prepare('SELECT * FROM calls WHERE account_id = ? AND id = ?');
    this.byIdAnyAccount = db.prepare('SELECT * FROM calls WHERE id = ?');
    this.listAll = db.prepare('SELECT * FROM calls WHERE account_id = ? AND id < ? ORDER BY id DESC LIMIT ?');
    this.listByStatus = db.prepare(
      'SELECT * FROM calls WHERE account_id = ? AND status = ? AND id < ? ORDER BY id DESC LIMIT ?',
    );
    this.liveCount = db
      .prepare(`SELECT COUNT(*) FROM calls WHERE account_id = ? AND status IN ${liveStatuses}`)
      .pluck();
    this.accountCap = db.prepare('SELECT max_live_calls FROM accounts WHERE id = ?').pluck();
    this.claim = db.prepare(
      `UPDATE calls SET status = 'dialing', dialing_at = @at, worker_id = @worker, lease_expires_at = @until,
         updated_at = @at
       WHERE id = @id AND status = 'queued' RETURNING *`,
    );
    this.markStatements = {
      ringing: db.prepare(
        `UPDATE calls SET status = 'ringing', ringing_at = ?, updated_at = ?
         WHERE id = ? AND worker_id = ? AND status = 'dialing'`,
      ),
      in_progress: db.prepare(
        `UPDATE calls SET status = 'in_progress', in_progress_at = ?, updated_at = ?
         WHERE id = ? AND worker_id = ? AND status IN ('dialing', 'ringing')`,
      ),
    };
    this.setSipCallIdStatement = db.prepare('UPDATE calls SET sip_call_id = ? WHERE id = ?');
    this.setLiveTranscriptStatement = db.prepare(
      "UPDATE calls SET transcript = ? WHERE id = ? AND status = 'in_progress'",
    );
    this.setSipDialogStatement = db.prepare('UPDATE calls SET sip_dialog = ? WHERE id = ?');
    this.sipDialogStatement = db.prepare('SELECT sip_dialog FROM calls WHERE id = ?').pluck();
    this.renew = db.prepare(
      `UPDATE calls SET lease_expires_at = ? WHERE worker_id = ? AND status IN ${liveStatuses}`,
    );
    this.abandoned = db.prepare(
      `SELECT * FROM calls WHERE status IN ${liveStatuses}
         AND (lease_expires_at < @before OR (@notHeldBy IS NOT NULL AND worker_id IS NOT @notHeldBy))
       ORDER BY id`,
    );
    this.finishStatement = db.prepare(
      `UPDATE calls SET status = @status, end_reason = @end_reason, answered_by = COALESCE(@answered_by, answered_by),
         transcript = COALESCE(@transcript, transcript), recording_path = COALESCE(@recording_path, recording_path),
         extracted_data = COALESCE(@extracted_data, extracted_data), metrics = COALESCE(@metrics, metrics),
         analysis = COALESCE(@analysis, analysis), variables = COALESCE(@variables, variables),
         ended_at = @at, lease_expires_at = NULL, updated_at = @at
       WHERE id = @id AND status IN ('queued', ${liveStatuses.slice(1, -1)}) RETURNING *`,
    );
    this.setAnalysisStatement = db.prepare(
      `UPDATE calls SET extracted_data = @extracted_data, analysis = @analysis, updated_at = @at
       WHERE account_id = @account_id AND id = @id AND status NOT IN ('queued', ${liveStatuses.slice(1, -1)})
       RETURNING *`,
    );
    this.insertEvent = db.prepare(
      `INSERT INTO events (id, account_id, type, call_id, body, created_at, status)
       VALUES (?, ?, 'call.completed', ?, ?, ?, 'pending')`,
    );
    this.requestCancelStatement = db.prepare(
      `UPDATE calls SET cancel_requested_at = COALESCE(cancel_requested_at, ?)
       WHERE id = ? AND status IN ${liveStatuses}`,
    );
    this.cancelRequests = db
      .prepare(
        `SELECT id FROM calls WHERE worker_id = ? AND status IN ${liveStatuses}
         AND cancel_requested_at IS NOT NULL ORDER BY id`,
      )
      .pluck();
    this.statusCounts = db.prepare('SELECT status, COUNT(*) AS n FROM calls GROUP BY status');
    this.statusCountsForAccount = db.prepare(
      'SELECT status, COUNT(*) AS n FROM calls WHERE account_id = ? GROUP BY status',
    );
  }

  createQueued(input: NewQueuedCall): Promise<CallRecord | null> {
    return this.committer.run(() => {
      if (!this.keyStillValid.get(input.apiKeyId)) return null;
      const variables = input.variables === null ? null : JSON.stringify(input.variables);
      this.insert.run(
        input.id,
        input.accountId,
        input.agentId,
        input.apiKeyId,
        input.fromNumber,
        input.toNumber,
        input.firstMessage,
        input.context,
        variables,
        input.createdAt,
        input.createdAt,
      );
      this.queue.insertWithinTransaction({
        queue: queueNames.dispatch,
        payload: { call_id: input.id },
        runAtMs: Date.parse(input.createdAt),
      });
      return queuedCall(input);
    });
  }

  async get(accountId: string, callId: string): Promise<CallRecord | null> {
    const row = this.byId.get(accountId, callId) as CallRow | undefined;
    return row ? toCall(row) : null;
  }

  async getById(callId: string): Promise<CallRecord | null> {
    const row = this.byIdAnyAccount.get(callId) as CallRow | undefined;
    return row ? toCall(row) : null;
  }

  async list(accountId: string, query: CallListQuery): Promise<CallRecord[]> {
    // '~' sorts after every id character, so "no cursor" is "before the end of the alphabet".
    const before = query.before ?? '~';
    const rows = query.status
      ? this.listByStatus.all(accountId, query.status, before, query.limit)
      : this.listAll.all(accountId, before, query.limit);
    return (rows as CallRow[]).map(toCall);
  }

  async claimForDialing(
    callId: string,
    lease: { workerId: string; untilIso: string; atIso: string },
  ): Promise<{ claimed: CallRecord } | { refused: 'not_queued' | 'capped' }> {
    return this.db
      .transaction((): { claimed: CallRecord } | { refused: 'not_queued' | 'capped' } => {
        const call = this.byIdAnyAccount.get(callId) as CallRow | undefined;
        if (call?.status !== 'queued') return { refused: 'not_queued' };
        const cap = (this.accountCap.get(call.account_id) as number | undefined) ?? 10;
        if ((this.liveCount.get(call.account_id) as number) >= cap) return { refused: 'capped' };
        const row = this.claim.get({
          id: callId,
          worker: lease.workerId,
          until: lease.untilIso,
          at: lease.atIso,
        });
        return row ? { claimed: toCall(row as CallRow) } : { refused: 'not_queued' };
      })
      .immediate();
  }

  async markLive(
    callId: string,
    workerId: string,
    status: 'ringing' | 'in_progress',
    atIso: string,
  ): Promise<boolean> {
    return this.markStatements[status].run(atIso, atIso, callId, workerId).changes > 0;
  }

  async setSipCallId(callId: string, sipCallId: string): Promise<void> {
    this.setSipCallIdStatement.run(sipCallId, callId);
  }

  async setLiveTranscript(callId: string, transcript: TranscriptEntry[]): Promise<void> {
    this.setLiveTranscriptStatement.run(JSON.stringify(transcript), callId);
  }

  async setSipDialog(callId: string, dialog: SipDialogRecord): Promise<void> {
    this.setSipDialogStatement.run(sipDialogToJson(dialog), callId);
  }

  async getSipDialog(callId: string): Promise<SipDialogRecord | null> {
    return sipDialogFromJson(this.sipDialogStatement.get(callId) ?? null);
  }

  async renewLeases(workerId: string, untilIso: string): Promise<number> {
    return this.renew.run(untilIso, workerId).changes;
  }

  async listAbandoned(options: { beforeIso: string; notHeldBy?: string }): Promise<CallRecord[]> {
    const rows = this.abandoned.all({ before: options.beforeIso, notHeldBy: options.notHeldBy ?? null });
    return (rows as CallRow[]).map(toCall);
  }

  setAnalysis(
    accountId: string,
    callId: string,
    result: { extractedData: Record<string, unknown>; analysis: CallAnalysis },
  ): Promise<CallRecord | null> {
    return this.committer.run(() => {
      const row = this.setAnalysisStatement.get({
        account_id: accountId,
        id: callId,
        extracted_data: JSON.stringify(result.extractedData),
        analysis: JSON.stringify(result.analysis),
        at: new Date().toISOString(),
      }) as CallRow | undefined;
      return row ? toCall(row) : null;
    });
  }

  finish(callId: string, finish: CallFinish, buildEvent: CompletedEventBuilder): Promise<CallRecord | null> {
    return this.committer.run(() => {
      const row = this.finishStatement.get({
        id: callId,
        status: finish.status,
        end_reason: finish.endReason,
        answered_by: finish.answeredBy ?? null,
        transcript: finish.transcript ? JSON.stringify(finish.transcript) : null,
        recording_path: finish.recordingPath ?? null,
        extracted_data: finish.extractedData ? JSON.stringify(finish.extractedData) : null,
        metrics: finish.metrics ? JSON.stringify(finish.metrics) : null,
        analysis: finish.analysis ? JSON.stringify(finish.analysis) : null,
        variables: finish.variables ? JSON.stringify(finish.variables) : null,
        at: finish.atIso,
      }) as CallRow | undefined;
      if (!row) return null;
      const call = toCall(row);
      const event = buildEvent(call);
      this.insertEvent.run(event.id, call.accountId, call.id, event.body, event.createdAt);
      this.queue.insertWithinTransaction({
        queue: queueNames.webhook,
        payload: { event_id: event.id },
        runAtMs: Date.parse(event.createdAt),
      });
      return call;
    });
  }

  async requestCancel(callId: string, atIso: string): Promise<boolean> {
    return this.requestCancelStatement.run(atIso, callId).changes > 0;
  }

  async listCancelRequests(workerId: string): Promise<string[]> {
    return this.cancelRequests.all(workerId) as string[];
  }

  async countByStatus(accountId?: string): Promise<Record<string, number>> {
    const rows = (accountId ? this.statusCountsForAccount.all(accountId) : this.statusCounts.all()) as {
      status: string;
      n: number;
    }[];
    return Object.fromEntries(rows.map((row) => [row.status, row.n]));
  }
}

function queuedCall(input: NewQueuedCall): CallRecord {
  return {
    ...input,
    channel: 'phone',
    direction: 'outbound',
    callbackOf: null,
    status: 'queued',
    endReason: null,
    answeredBy: null,
    dialingAt: null,
    ringingAt: null,
    inProgressAt: null,
    endedAt: null,
    transcript: [],
    recordingPath: null,
    extractedData: {},
    metrics: null,
    analysis: null,
    sipCallId: null,
    workerId: null,
    leaseExpiresAt: null,
  };
}
