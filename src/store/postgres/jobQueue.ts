import type { JobQueue, TransactionalJobWriter } from '../../queue/types.js';
import type { PgPool, Queryable } from './database.js';

/**
 * What the PostgreSQL store needs of the job queue kept in its database (pg-boss, wired in
 * src/openStore.ts): it adds and settles jobs on the client of the transaction the store has open.
 * The store never imports the queue's implementation, and the queue never imports the store.
 */
export interface PostgresJobWriter extends TransactionalJobWriter<Queryable> {
  /**
   * The SQL of an INSERT (usable as a data-modifying CTE) adding one `queue` job, due now, per row
   * of `source`, a relation of the caller's statement with a `data jsonb` column: the call
   * creation writes its calls and their dispatch jobs in one statement.
   */
  insertForEachRowSql(queue: string, source: string): string;
}

export interface PostgresStoreJobQueue extends JobQueue, PostgresJobWriter {
  stop(): Promise<void>;
}

/** Installs the queue on the store's pool, under the store's migration lock. */
export type StartPostgresJobQueue = (options: {
  pool: PgPool;
  /** The store's schema; the queue keeps its tables beside it. */
  schema: string;
}) => Promise<PostgresStoreJobQueue>;
