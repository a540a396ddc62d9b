import type pg from 'pg';
import PgBoss from 'pg-boss';
import type { Logger } from '../logger.js';
import { retryBriefly } from '../net/retryBriefly.js';
import {
  type Job,
  type JobQueue,
  type NewJob,
  type PendingJob,
  queueNames,
  type TransactionalJobWriter,
} from './types.js';

type PgPool = pg.Pool;
/** The store's pool or the client of the transaction it has open. */
type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.ClientBase, 'query'>;

const bossSchemaPattern = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The scale-out queue: pg-boss on the service's PostgreSQL, sharing its connection pool.
 *
 * - Jobs are inserted with `send(…, { db })` on the caller's transaction client, so a call and its
 *   dispatch job (an event and its delivery job) commit or roll back together.
 * - `claim` is pg-boss's `fetch`: `FOR UPDATE SKIP LOCKED`, so two workers never take one job.
 * - A claimed job is `active` for `leaseMs` (its `expire_in`); if its worker dies, pg-boss's
 *   maintenance (every `maintenanceIntervalS`) puts it back for another worker.
 * - Two statements touch pg-boss's `job` table directly (v10's layout, pinned by the major version):
 *   setting a claimed job's `expire_in` to the lease, and `retryAt` (back to `retry` at a time).
 *
 * Job ids are opaque to callers: `<queue>/<uuid>`, since pg-boss addresses a job by queue and id.
 */
export class PgBossJobQueue implements JobQueue, TransactionalJobWriter<Queryable> {
  readonly boss: PgBoss;
  private readonly bossSchema: string;

  private constructor(
    private readonly pool: PgPool,
    bossSchema: string,
    maintenanceIntervalS: number,
    private readonly logger: Logger,
  ) {
    if (!bossSchemaPattern.test(bossSchema)) throw new Error(`invalid pg-boss schema name: ${bossSchema}`);
    this.bossSchema = bossSchema;
    this.boss = new PgBoss({
      db: { executeSql: (text, values) => pool.query(text, values) },
      schema: this.bossSchema,
      supervise: true,
      schedule: false,
      migrate: true,
      maintenanceIntervalSeconds: maintenanceIntervalS,
    });
    this.boss.on('error', (error: unknown) => logger.warn({ err: error }, 'pg-boss error'));
  }

  /** Installs or upgrades pg-boss's schema and our queues; run under the store's migration lock. */
  static async start(options: {
    pool: PgPool;
    bossSchema: string;
    maintenanceIntervalS?: number;
    logger: Logger;
  }): Promise<PgBossJobQueue> {
    const queue = new PgBossJobQueue(
      options.pool,
      options.bossSchema,
      options.maintenanceIntervalS ?? 10,
      options.logger,
    );
    await queue.boss.start();
    for (const name of Object.values(queueNames)) {
      // Retries are ours (retryAt); a job only fails back to pg-boss when its lease expires, and
      // then it must run again, however often that happens.
      await queue.boss.createQueue(name, {
        name,
        retryLimit: 1_000_000,
        retryDelay: 0,
        retryBackoff: false,
        expireInSeconds: 60,
      });
    }
    return queue;
  }

  async stop(): Promise<void> {
    await this.boss.stop({ close: false, graceful: false, wait: true, timeout: 1_000 });
  }

  /** Inserts several jobs with one statement on the caller's transaction client. */
  async insertManyWithinTransaction(client: Queryable, jobs: readonly NewJob[]): Promise<void> {
    if (jobs.length === 0) return;
    const nowMs = Date.now();
    await this.boss.insert(
      jobs.map((job) => ({
        name: job.queue,
        data: job.payload,
        ...(job.runAtMs > nowMs ? { startAfter: new Date(job.runAtMs).toISOString() } : {}),
      })),
      { db: executorOf(client) },
    );
  }

  /**
   * The SQL of an INSERT (usable as a data-modifying CTE) that adds one `queue` job, due now, for
   * each row of `source` — a relation of the caller's statement with a `data jsonb` column — with
   * the queue's settings as `insertManyWithinTransaction` applies them (pg-boss 10's `job` layout,
   * pinned by the major version). For a store that writes its rows and their jobs in one statement.
   */
  insertForEachRowSql(queue: string, source: string): string {
    if (!/^[a-z][a-z.]{0,62}$/.test(queue)) throw new Error(`invalid queue name: ${queue}`);
    return `INSERT INTO ${this.bossSchema}.job (id, name, data, priority, start_after, dead_letter, expire_in,
        keep_until, retry_limit, retry_delay, retry_backoff, policy)
      SELECT gen_random_uuid(), q.name, s.data, 0, now(), q.dead_letter,
        COALESCE(q.expire_seconds * interval '1 second', interval '15 minutes'),
        now() + COALESCE(q.retention_minutes * interval '1 minute', interval '14 days'),
        COALESCE(q.retry_limit, 2),
        CASE WHEN COALESCE(q.retry_backoff, false) THEN GREATEST(COALESCE(q.retry_delay, 0), 1)
          ELSE COALESCE(q.retry_delay, 0) END,
        COALESCE(q.retry_backoff, false), q.policy
      FROM ${source} s JOIN ${this.bossSchema}.queue q ON q.name = '${queue}'
      ON CONFLICT DO NOTHING`;
  }

  /** Inserts a job on the caller's transaction client; resolves to its id. */
  async insertWithinTransaction(client: Queryable, job: NewJob): Promise<string> {
    const startAfter = job.runAtMs > Date.now() ? { startAfter: new Date(job.runAtMs) } : {};
    const id = await this.boss.send(job.queue, job.payload, { ...startAfter, db: executorOf(client) });
    if (!id) throw new Error(`pg-boss did not insert a ${job.queue} job`);
    return encodeJobId(job.queue, id);
  }

  async completeWithinTransaction(client: Queryable, jobId: string): Promise<void> {
    const { queue, id } = decodeJobId(jobId);
    await this.boss.complete(queue, id, {}, { db: executorOf(client) });
  }

  async retryAtWithinTransaction(client: Queryable, jobId: string, runAtMs: number): Promise<void> {
    const { queue, id } = decodeJobId(jobId);
    await client.query(
      `UPDATE ${this.bossSchema}.job SET state = 'retry', start_after = $3
       WHERE name = $1 AND id = $2 AND state < 'completed'`,
      [queue, id, new Date(runAtMs)],
    );
  }

  /** The unfinished jobs of `queue` with exactly this payload (e.g. the delivery job of one event). */
  async findByPayload(
    client: Queryable,
    queue: string,
    payload: Record<string, unknown>,
  ): Promise<PendingJob[]> {
    const { rows } = await client.query<{ id: string; locked_until: Date | null }>(
      `SELECT id, CASE WHEN state = 'active' THEN started_on + expire_in END AS locked_until
       FROM ${this.bossSchema}.job WHERE name = $1 AND data = $2::jsonb AND state < 'completed'
       ORDER BY created_on, id`,
      [queue, JSON.stringify(payload)],
    );
    return rows.map((row) => ({
      id: encodeJobId(queue, row.id),
      lockedUntilMs: row.locked_until ? row.locked_until.getTime() : null,
    }));
  }

  async forgetFinished(
    client: Queryable,
    queue: string,
    payloads: readonly Record<string, unknown>[],
  ): Promise<number> {
    if (payloads.length === 0) return 0;
    const result = await client.query(
      `DELETE FROM ${this.bossSchema}.job
       WHERE name = $1 AND data = ANY($2::jsonb[]) AND state >= 'completed'`,
      [queue, payloads.map((payload) => JSON.stringify(payload))],
    );
    return result.rowCount ?? 0;
  }

  async claim(queue: string, _workerId: string, limit: number, leaseMs: number): Promise<Job[]> {
    const jobs = await this.boss.fetch<Record<string, unknown>>(queue, {
      batchSize: limit,
      includeMetadata: true,
    });
    if (jobs.length === 0) return [];
    // The jobs are ours now: a failed lease update must not lose them. If it fails even when tried
    // again, they run under the queue's own expiry (60 s) rather than wait for it unprocessed.
    await retryBriefly(() =>
      this.pool.query(
        `UPDATE ${this.bossSchema}.job SET expire_in = make_interval(secs => $3)
         WHERE name = $1 AND id = ANY($2::uuid[]) AND state = 'active'`,
        [queue, jobs.map((job) => job.id), Math.max(1, leaseMs / 1000)],
      ),
    ).catch((error: unknown) =>
      this.logger.warn({ err: error, queue, jobs: jobs.length }, 'could not set the lease of claimed jobs'),
    );
    return jobs.map((job) => ({
      id: encodeJobId(queue, job.id),
      queue,
      payload: job.data,
      attempts: job.retryCount + 1,
      runAtMs: job.startAfter.getTime(),
    }));
  }

  /**
   * Tried again after a failure (a connection the server dropped fails one statement; the pool
   * connects anew for the next): completing a job twice changes nothing. A failed `claim` fetch is
   * not repeated: the worker's next poll fetches again, and jobs a lost answer left active come back
   * when their expiry runs out.
   */
  async complete(jobId: string): Promise<void> {
    await retryBriefly(() => this.completeWithinTransaction(this.pool, jobId));
  }

  /** Tried again after a failure, like `complete`: it sets the same state and time twice. */
  async retryAt(jobId: string, runAtMs: number): Promise<void> {
    await retryBriefly(() => this.retryAtWithinTransaction(this.pool, jobId, runAtMs));
  }

  async depth(queue: string): Promise<{ count: number; oldestRunAtMs: number | null }> {
    const { rows } = await this.pool.query<{ count: number; oldest: Date | null }>(
      `SELECT count(*)::int AS count, min(start_after) AS oldest
       FROM ${this.bossSchema}.job WHERE name = $1 AND state < 'completed'`,
      [queue],
    );
    const row = rows[0];
    return { count: row?.count ?? 0, oldestRunAtMs: row?.oldest ? row.oldest.getTime() : null };
  }
}

function executorOf(client: Queryable): PgBoss.Db {
  return { executeSql: (text, values) => client.query(text, values) };
}

function encodeJobId(queue: string, id: string): string {
  return `${queue}/${id}`;
}

function decodeJobId(jobId: string): { queue: string; id: string } {
  const slash = jobId.lastIndexOf('/');
  if (slash <= 0) throw new Error(`not a pg-boss job id: ${jobId.slice(0, 80)}`);
  return { queue: jobId.slice(0, slash), id: jobId.slice(slash + 1) };
}
