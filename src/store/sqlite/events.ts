import { AppError } from '../../domain/errors.js';
import type {
  EventAttemptRecord,
  EventRecord,
  EventStatus,
  WebhookEndpointRecord,
} from '../../domain/records.js';
import { eventTypesFromStored, type WebhookEventType } from '../../domain/statusEvents.js';
import { queueNames, type SynchronousJobWriter } from '../../queue/types.js';
import { eventAttemptFromRow, eventFromRow, webhookEndpointFromRow } from '../recordsFromRows.js';
import type {
  AttemptOutcome,
  EventListQuery,
  EventRepository,
  NewStatusEvent,
  WebhookEndpointRepository,
} from '../types.js';
import type { SqliteDatabase } from './database.js';
import type { GroupCommitter } from './groupCommit.js';
import { sqliteColumns } from './rows.js';

/** The webhook outbox: endpoints, events and their attempts, and the delivery jobs they own. */

interface EndpointRow {
  account_id: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  enabled: number;
  disabled_reason: string | null;
  event_types: string;
  created_at: string;
  updated_at: string;
}

interface EventRow {
  id: string;
  account_id: string;
  type: string;
  call_id: string | null;
  campaign_id: string | null;
  body: string;
  created_at: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  delivered_at: string | null;
}

interface AttemptRow {
  event_id: string;
  attempted_at: string;
  url: string;
  status_code: number | null;
  latency_ms: number;
  response_excerpt: string | null;
  error: string | null;
}

const toEndpoint = (row: EndpointRow) => webhookEndpointFromRow(row, sqliteColumns);

const toEvent = (row: EventRow) => eventFromRow(row, sqliteColumns);

const toAttempt = (row: AttemptRow) => eventAttemptFromRow(row, sqliteColumns);

function deliveryPayload(eventId: string): { event_id: string } {
  return { event_id: eventId };
}

/** Puts every parked event of the account back in the queue; runs inside the caller's transaction. */
function requeueParked(
  db: SqliteDatabase,
  queue: SynchronousJobWriter,
  accountId: string,
  atIso: string,
): number {
  const ids = db
    .prepare("SELECT id FROM events WHERE account_id = ? AND status = 'parked' ORDER BY id")
    .pluck()
    .all(accountId) as string[];
  const unpark = db.prepare("UPDATE events SET status = 'pending', next_attempt_at = ? WHERE id = ?");
  const runAtMs = Date.parse(atIso);
  for (const id of ids) {
    unpark.run(atIso, id);
    queue.insertWithinTransaction({ queue: queueNames.webhook, payload: deliveryPayload(id), runAtMs });
  }
  return ids.length;
}

export class SqliteWebhookEndpoints implements WebhookEndpointRepository {
  private readonly byAccount;
  private readonly upsert;
  private readonly rotate;
  private readonly enable;
  private readonly eventTypes;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly queue: SynchronousJobWriter,
  ) {
    this.byAccount = db.prepare('SELECT * FROM webhook_endpoints WHERE account_id = ?');
    this.upsert = db.prepare(
      `INSERT INTO webhook_endpoints (account_id, url, secret, enabled, created_at, updated_at)
       VALUES (@account_id, @url, @secret, 1, @at, @at)
       ON CONFLICT (account_id) DO UPDATE SET url = @url, secret = @secret, previous_secret = NULL,
         previous_secret_expires_at = NULL, enabled = 1, disabled_reason = NULL, updated_at = @at`,
    );
    this.rotate = db.prepare(
      `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = ?, secret = ?,
         updated_at = ? WHERE account_id = ?`,
    );
    this.enable = db.prepare(
      'UPDATE webhook_endpoints SET enabled = ?, disabled_reason = ?, updated_at = ? WHERE account_id = ?',
    );
    this.eventTypes = db.prepare(
      'UPDATE webhook_endpoints SET event_types = ?, updated_at = ? WHERE account_id = ?',
    );
  }

  private read(accountId: string): WebhookEndpointRecord | null {
    const row = this.byAccount.get(accountId) as EndpointRow | undefined;
    return row ? toEndpoint(row) : null;
  }

  async set(accountId: string, url: string, secret: string, atIso: string): Promise<WebhookEndpointRecord> {
    return this.db
      .transaction(() => {
        this.upsert.run({ account_id: accountId, url, secret, at: atIso });
        requeueParked(this.db, this.queue, accountId, atIso);
        return this.read(accountId) as WebhookEndpointRecord;
      })
      .immediate();
  }

  async get(accountId: string): Promise<WebhookEndpointRecord | null> {
    return this.read(accountId);
  }

  async setEventTypes(
    accountId: string,
    eventTypes: readonly WebhookEventType[],
    atIso: string,
  ): Promise<WebhookEndpointRecord | null> {
    this.eventTypes.run(JSON.stringify(eventTypes), atIso, accountId);
    return this.read(accountId);
  }

  async rotateSecret(
    accountId: string,
    newSecret: string,
    previousExpiresAtIso: string,
    atIso: string,
  ): Promise<WebhookEndpointRecord | null> {
    this.rotate.run(previousExpiresAtIso, newSecret, atIso, accountId);
    return this.read(accountId);
  }

  async setEnabled(
    accountId: string,
    enabled: boolean,
    reason: string | null,
    atIso: string,
  ): Promise<WebhookEndpointRecord | null> {
    return this.db
      .transaction(() => {
        if (this.enable.run(enabled ? 1 : 0, enabled ? null : reason, atIso, accountId).changes === 0) {
          return null;
        }
        if (enabled) requeueParked(this.db, this.queue, accountId, atIso);
        return this.read(accountId);
      })
      .immediate();
  }
}

export class SqliteEvents implements EventRepository {
  private readonly byId;
  private readonly byAccountAndId;
  private readonly listStatement;
  private readonly attemptsStatement;
  private readonly insertAttempt;
  private readonly updateAfterAttempt;
  private readonly endpointEnabled;
  private readonly disableEndpoint;
  private readonly setStatus;
  private readonly endpointEventTypes;
  private readonly insertStatusEvent;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly committer: GroupCommitter,
    private readonly queue: SynchronousJobWriter,
  ) {
    this.byId = db.prepare('SELECT * FROM events WHERE id = ?');
    this.byAccountAndId = db.prepare('SELECT * FROM events WHERE account_id = ? AND id = ?');
    this.listStatement = db.prepare(
      'SELECT * FROM events WHERE account_id = ? AND id < ? ORDER BY id DESC LIMIT ?',
    );
    this.attemptsStatement = db.prepare('SELECT * FROM event_attempts WHERE event_id = ? ORDER BY id');
    this.insertAttempt = db.prepare(
      `INSERT INTO event_attempts (event_id, attempted_at, url, status_code, latency_ms, response_excerpt, error)
       VALUES (@event_id, @attempted_at, @url, @status_code, @latency_ms, @response_excerpt, @error)`,
    );
    this.updateAfterAttempt = db.prepare(
      `UPDATE events SET attempts = attempts + 1, status = @status, next_attempt_at = @next_attempt_at,
         delivered_at = COALESCE(@delivered_at, delivered_at)
       WHERE id = @id RETURNING *`,
    );
    this.endpointEnabled = db.prepare('SELECT enabled FROM webhook_endpoints WHERE account_id = ?').pluck();
    this.disableEndpoint = db.prepare(
      'UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ?, updated_at = ? WHERE account_id = ?',
    );
    this.setStatus = db.prepare('UPDATE events SET status = ?, next_attempt_at = ? WHERE id = ? RETURNING *');
    this.endpointEventTypes = db
      .prepare('SELECT event_types FROM webhook_endpoints WHERE account_id = ?')
      .pluck();
    // OR IGNORE: the unique indexes keep one event of a type per call (campaign).
    this.insertStatusEvent = db.prepare(
      `INSERT OR IGNORE INTO events (id, account_id, type, call_id, campaign_id, body, created_at, status)
       VALUES (@id, @account_id, @type, @call_id, @campaign_id, @body, @created_at, 'pending')`,
    );
  }

  async getById(eventId: string): Promise<EventRecord | null> {
    const row = this.byId.get(eventId) as EventRow | undefined;
    return row ? toEvent(row) : null;
  }

  async get(accountId: string, eventId: string): Promise<EventRecord | null> {
    const row = this.byAccountAndId.get(accountId, eventId) as EventRow | undefined;
    return row ? toEvent(row) : null;
  }

  async list(accountId: string, query: EventListQuery): Promise<EventRecord[]> {
    // '~' sorts after every id character, so "no cursor" is "before the end of the alphabet".
    const rows = this.listStatement.all(accountId, query.before ?? '~', query.limit) as EventRow[];
    return rows.map(toEvent);
  }

  async attempts(eventId: string): Promise<EventAttemptRecord[]> {
    return (this.attemptsStatement.all(eventId) as AttemptRow[]).map(toAttempt);
  }

  recordAttempt(
    jobId: string,
    attempt: EventAttemptRecord,
    outcome: AttemptOutcome,
  ): Promise<EventRecord | null> {
    // Group commit: attempts finishing together share one fsync (a backlog drains much faster).
    return this.committer.run(() => {
      this.insertAttempt.run({
        event_id: attempt.eventId,
        attempted_at: attempt.attemptedAt,
        url: attempt.url,
        status_code: attempt.statusCode,
        latency_ms: attempt.latencyMs,
        response_excerpt: attempt.responseExcerpt,
        error: attempt.error,
      });
      const status: EventStatus =
        outcome.kind === 'retry' ? 'pending' : outcome.kind === 'gone' ? 'parked' : outcome.kind;
      const row = this.updateAfterAttempt.get({
        id: attempt.eventId,
        status,
        next_attempt_at: outcome.kind === 'retry' ? new Date(outcome.runAtMs).toISOString() : null,
        delivered_at: outcome.kind === 'delivered' ? attempt.attemptedAt : null,
      }) as EventRow | undefined;
      if (outcome.kind === 'retry') this.queue.retryAtWithinTransaction(jobId, outcome.runAtMs);
      else this.queue.completeWithinTransaction(jobId);
      if (outcome.kind === 'gone' && row) {
        this.disableEndpoint.run(outcome.reason, attempt.attemptedAt, row.account_id);
      }
      return row ? toEvent(row) : null;
    });
  }

  async addStatusEvent(event: NewStatusEvent): Promise<boolean> {
    // Most endpoints ask for none: that answer is a read, without the write lock or a commit.
    const stored = this.endpointEventTypes.get(event.accountId) as string | undefined;
    if (stored === undefined || !eventTypesFromStored(stored).includes(event.type)) return false;
    return this.committer.run(() => {
      const inserted = this.insertStatusEvent.run({
        id: event.id,
        account_id: event.accountId,
        type: event.type,
        call_id: event.callId,
        campaign_id: event.campaignId,
        body: event.body,
        created_at: event.createdAt,
      });
      if (inserted.changes === 0) return false;
      this.queue.insertWithinTransaction({
        queue: queueNames.webhook,
        payload: deliveryPayload(event.id),
        runAtMs: Date.parse(event.createdAt),
      });
      return true;
    });
  }

  park(eventId: string, jobId: string): Promise<boolean> {
    return this.committer.run(() => {
      const event = this.byId.get(eventId) as EventRow | undefined;
      if (event && this.endpointEnabled.get(event.account_id) === 1) return false;
      if (event) this.setStatus.run('parked', null, eventId);
      this.queue.completeWithinTransaction(jobId);
      return true;
    });
  }

  async requeue(accountId: string, eventId: string, runAtMs: number): Promise<EventRecord | null> {
    return this.db
      .transaction(() => {
        const event = this.byAccountAndId.get(accountId, eventId) as EventRow | undefined;
        if (!event) return null;
        const jobs = this.queue.findByPayload(queueNames.webhook, deliveryPayload(eventId));
        if (jobs.some((job) => job.lockedUntilMs !== null && job.lockedUntilMs >= Date.now())) {
          throw new AppError('conflict', `event ${eventId} is being delivered right now; retry shortly`);
        }
        const runAtIso = new Date(runAtMs).toISOString();
        const waiting = jobs[0];
        if (waiting) this.queue.retryAtWithinTransaction(waiting.id, runAtMs);
        else {
          this.queue.insertWithinTransaction({
            queue: queueNames.webhook,
            payload: deliveryPayload(eventId),
            runAtMs,
          });
        }
        return toEvent(this.setStatus.get('pending', runAtIso, eventId) as EventRow);
      })
      .immediate();
  }
}
