import { AppError } from '../../domain/errors.js';
import type {
  EventAttemptRecord,
  EventRecord,
  EventStatus,
  WebhookEndpointRecord,
} from '../../domain/records.js';
import { eventTypesFromStored, type WebhookEventType } from '../../domain/statusEvents.js';
import { queueNames } from '../../queue/types.js';
import { eventAttemptFromRow, eventFromRow, webhookEndpointFromRow } from '../recordsFromRows.js';
import type {
  AttemptOutcome,
  EventListQuery,
  EventRepository,
  NewStatusEvent,
  WebhookEndpointRepository,
} from '../types.js';
import { type PgClient, type PgPool, type Queryable, withTransaction } from './database.js';
import { notifyJobs } from './jobNotifications.js';
import type { PostgresJobWriter } from './jobQueue.js';
import { postgresColumns } from './rows.js';

/** The webhook outbox: endpoints, events and their attempts, and the delivery jobs they own. */

type Timestamp = Date | string;

interface EndpointRow {
  account_id: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Timestamp | null;
  enabled: boolean;
  disabled_reason: string | null;
  event_types: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

interface EventRow {
  id: string;
  account_id: string;
  type: string;
  call_id: string | null;
  campaign_id: string | null;
  body: string;
  created_at: Timestamp;
  status: string;
  attempts: number;
  next_attempt_at: Timestamp | null;
  delivered_at: Timestamp | null;
}

interface AttemptRow {
  event_id: string;
  attempted_at: Timestamp;
  url: string;
  status_code: number | null;
  latency_ms: number;
  response_excerpt: string | null;
  error: string | null;
}

const toEndpoint = (row: EndpointRow) => webhookEndpointFromRow(row, postgresColumns);

const toEvent = (row: EventRow) => eventFromRow(row, postgresColumns);

const toAttempt = (row: AttemptRow) => eventAttemptFromRow(row, postgresColumns);

function deliveryPayload(eventId: string): { event_id: string } {
  return { event_id: eventId };
}

async function readEndpoint(db: Queryable, accountId: string): Promise<WebhookEndpointRecord | null> {
  const { rows } = await db.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE account_id = $1', [
    accountId,
  ]);
  return rows[0] ? toEndpoint(rows[0]) : null;
}

/** Puts every parked event of the account back in the queue, inside the caller's transaction. */
async function requeueParked(
  client: PgClient,
  queue: PostgresJobWriter,
  accountId: string,
  atIso: string,
): Promise<number> {
  const { rows } = await client.query<{ id: string }>(
    `UPDATE events SET status = 'pending', next_attempt_at = $2
     WHERE account_id = $1 AND status = 'parked' RETURNING id`,
    [accountId, atIso],
  );
  const runAtMs = Date.parse(atIso);
  for (const row of rows) {
    await queue.insertWithinTransaction(client, {
      queue: queueNames.webhook,
      payload: deliveryPayload(row.id),
      runAtMs,
    });
  }
  return rows.length;
}

export class PostgresWebhookEndpoints implements WebhookEndpointRepository {
  constructor(
    private readonly pool: PgPool,
    private readonly queue: PostgresJobWriter,
  ) {}

  set(accountId: string, url: string, secret: string, atIso: string): Promise<WebhookEndpointRecord> {
    return withTransaction(this.pool, async (client) => {
      await client.query(
        `INSERT INTO webhook_endpoints (account_id, url, secret, enabled, created_at, updated_at)
         VALUES ($1, $2, $3, true, $4, $4)
         ON CONFLICT (account_id) DO UPDATE SET url = $2, secret = $3, previous_secret = NULL,
           previous_secret_expires_at = NULL, enabled = true, disabled_reason = NULL, updated_at = $4`,
        [accountId, url, secret, atIso],
      );
      await requeueParked(client, this.queue, accountId, atIso);
      return (await readEndpoint(client, accountId)) as WebhookEndpointRecord;
    });
  }

  get(accountId: string): Promise<WebhookEndpointRecord | null> {
    return readEndpoint(this.pool, accountId);
  }

  async setEventTypes(
    accountId: string,
    eventTypes: readonly WebhookEventType[],
    atIso: string,
  ): Promise<WebhookEndpointRecord | null> {
    const { rows } = await this.pool.query<EndpointRow>(
      'UPDATE webhook_endpoints SET event_types = $1, updated_at = $2 WHERE account_id = $3 RETURNING *',
      [JSON.stringify(eventTypes), atIso, accountId],
    );
    return rows[0] ? toEndpoint(rows[0]) : null;
  }

  async rotateSecret(
    accountId: string,
    newSecret: string,
    previousExpiresAtIso: string,
    atIso: string,
  ): Promise<WebhookEndpointRecord | null> {
    const { rows } = await this.pool.query<EndpointRow>(
      `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = $1, secret = $2,
         updated_at = $3 WHERE account_id = $4 RETURNING *`,
      [previousExpiresAtIso, newSecret, atIso, accountId],
    );
    return rows[0] ? toEndpoint(rows[0]) : null;
  }

  setEnabled(
    accountId: string,
    enabled: boolean,
    reason: string | null,
    atIso: string,
  ): Promise<WebhookEndpointRecord | null> {
    return withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<EndpointRow>(
        `UPDATE webhook_endpoints SET enabled = $1, disabled_reason = $2, updated_at = $3
         WHERE account_id = $4 RETURNING *`,
        [enabled, enabled ? null : reason, atIso, accountId],
      );
      if (!rows[0]) return null;
      if (enabled) await requeueParked(client, this.queue, accountId, atIso);
      return toEndpoint(rows[0]);
    });
  }
}

export class PostgresEvents implements EventRepository {
  constructor(
    private readonly pool: PgPool,
    private readonly queue: PostgresJobWriter,
  ) {}

  async getById(eventId: string): Promise<EventRecord | null> {
    const { rows } = await this.pool.query<EventRow>('SELECT * FROM events WHERE id = $1', [eventId]);
    return rows[0] ? toEvent(rows[0]) : null;
  }

  async get(accountId: string, eventId: string): Promise<EventRecord | null> {
    const { rows } = await this.pool.query<EventRow>(
      'SELECT * FROM events WHERE account_id = $1 AND id = $2',
      [accountId, eventId],
    );
    return rows[0] ? toEvent(rows[0]) : null;
  }

  async list(accountId: string, query: EventListQuery): Promise<EventRecord[]> {
    const { rows } = await this.pool.query<EventRow>(
      'SELECT * FROM events WHERE account_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3',
      [accountId, query.before ?? '~', query.limit],
    );
    return rows.map(toEvent);
  }

  async attempts(eventId: string): Promise<EventAttemptRecord[]> {
    const { rows } = await this.pool.query<AttemptRow>(
      'SELECT * FROM event_attempts WHERE event_id = $1 ORDER BY id',
      [eventId],
    );
    return rows.map(toAttempt);
  }

  recordAttempt(
    jobId: string,
    attempt: EventAttemptRecord,
    outcome: AttemptOutcome,
  ): Promise<EventRecord | null> {
    return withTransaction(this.pool, async (client) => {
      await client.query(
        `INSERT INTO event_attempts (event_id, attempted_at, url, status_code, latency_ms, response_excerpt, error)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [
          attempt.eventId,
          attempt.attemptedAt,
          attempt.url,
          attempt.statusCode,
          attempt.latencyMs,
          attempt.responseExcerpt,
          attempt.error,
        ],
      );
      const status: EventStatus =
        outcome.kind === 'retry' ? 'pending' : outcome.kind === 'gone' ? 'parked' : outcome.kind;
      const { rows } = await client.query<EventRow>(
        `UPDATE events SET attempts = attempts + 1, status = $2, next_attempt_at = $3,
           delivered_at = COALESCE($4, delivered_at)
         WHERE id = $1 RETURNING *`,
        [
          attempt.eventId,
          status,
          outcome.kind === 'retry' ? new Date(outcome.runAtMs).toISOString() : null,
          outcome.kind === 'delivered' ? attempt.attemptedAt : null,
        ],
      );
      if (outcome.kind === 'retry') await this.queue.retryAtWithinTransaction(client, jobId, outcome.runAtMs);
      else await this.queue.completeWithinTransaction(client, jobId);
      const row = rows[0];
      if (outcome.kind === 'gone' && row) {
        await client.query(
          'UPDATE webhook_endpoints SET enabled = false, disabled_reason = $1, updated_at = $2 WHERE account_id = $3',
          [outcome.reason, attempt.attemptedAt, row.account_id],
        );
      }
      return row ? toEvent(row) : null;
    });
  }

  async addStatusEvent(event: NewStatusEvent): Promise<boolean> {
    // Most endpoints ask for none: that answer is one read, without a transaction.
    const endpoint = await this.pool.query<{ event_types: string }>(
      'SELECT event_types FROM webhook_endpoints WHERE account_id = $1',
      [event.accountId],
    );
    const types = endpoint.rows[0]?.event_types;
    if (types === undefined || !eventTypesFromStored(types).includes(event.type)) return false;
    const stored = await withTransaction(this.pool, async (client) => {
      // The unique indexes keep one event of a type per call (campaign); a second writer does nothing.
      const inserted = await client.query(
        `INSERT INTO events (id, account_id, type, call_id, campaign_id, body, created_at, status)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending') ON CONFLICT DO NOTHING`,
        [event.id, event.accountId, event.type, event.callId, event.campaignId, event.body, event.createdAt],
      );
      if (inserted.rowCount === 0) return false;
      await this.queue.insertWithinTransaction(client, {
        queue: queueNames.webhook,
        payload: deliveryPayload(event.id),
        runAtMs: Date.parse(event.createdAt),
      });
      return true;
    });
    // Wakes a delivery worker in any process, as a finished call does.
    if (stored) notifyJobs(this.pool, queueNames.webhook);
    return stored;
  }

  park(eventId: string, jobId: string): Promise<boolean> {
    return withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ account_id: string }>(
        'SELECT account_id FROM events WHERE id = $1',
        [eventId],
      );
      const event = rows[0];
      if (event) {
        // Locks the endpoint row: an enable either commits before this check or waits for the park.
        const endpoint = await client.query<{ enabled: boolean }>(
          'SELECT enabled FROM webhook_endpoints WHERE account_id = $1 FOR UPDATE',
          [event.account_id],
        );
        if (endpoint.rows[0]?.enabled) return false;
        await client.query("UPDATE events SET status = 'parked', next_attempt_at = NULL WHERE id = $1", [
          eventId,
        ]);
      }
      await this.queue.completeWithinTransaction(client, jobId);
      return true;
    });
  }

  requeue(accountId: string, eventId: string, runAtMs: number): Promise<EventRecord | null> {
    return withTransaction(this.pool, async (client) => {
      const found = await client.query<EventRow>(
        'SELECT * FROM events WHERE account_id = $1 AND id = $2 FOR UPDATE',
        [accountId, eventId],
      );
      if (!found.rows[0]) return null;
      const jobs = await this.queue.findByPayload(client, queueNames.webhook, deliveryPayload(eventId));
      if (jobs.some((job) => job.lockedUntilMs !== null && job.lockedUntilMs >= Date.now())) {
        throw new AppError('conflict', `event ${eventId} is being delivered right now; retry shortly`);
      }
      const waiting = jobs[0];
      if (waiting) await this.queue.retryAtWithinTransaction(client, waiting.id, runAtMs);
      else {
        await this.queue.insertWithinTransaction(client, {
          queue: queueNames.webhook,
          payload: deliveryPayload(eventId),
          runAtMs,
        });
      }
      const { rows } = await client.query<EventRow>(
        "UPDATE events SET status = 'pending', next_attempt_at = $2 WHERE id = $1 RETURNING *",
        [eventId, new Date(runAtMs).toISOString()],
      );
      return toEvent(rows[0] as EventRow);
    });
  }
}
