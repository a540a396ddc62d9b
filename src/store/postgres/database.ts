import pg from 'pg';
import type { Logger } from '../../logger.js';
import { postgresMigrations } from './migrations.js';

export type PgPool = pg.Pool;
export type PgClient = pg.PoolClient;
/** A pool or a client inside a transaction: anything that runs one query. */
export type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>;

const schemaNamePattern = /^[a-z_][a-z0-9_]{0,62}$/;

export function assertSchemaName(schema: string): string {
  if (!schemaNamePattern.test(schema)) throw new Error(`invalid PostgreSQL schema name: ${schema}`);
  return schema;
}

/**
 * A pool whose every connection works in `schema` (search_path) and in UTC. A dropped connection
 * (a failover, a proxy's idle-kill, `pg_terminate_backend`) never crashes the process: idle clients
 * report to the pool's listener, and every client carries its own 'error' listener from the moment
 * it connects, so one checked out (a transaction, a group commit) fails only its statement; the
 * pool discards it and connects anew.
 */
/** How long the server keeps a session that went silent inside a transaction (see createPool). */
export const idleInTransactionTimeoutMs = 10_000;

export function createPool(options: {
  connectionString: string;
  schema: string;
  maxConnections?: number;
  logger?: Logger;
}): PgPool {
  const schema = assertSchemaName(options.schema);
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.maxConnections ?? 10,
    // A node that vanishes mid-transaction (power, cable) sends no FIN: without this its session
    // stays "idle in transaction" for hours (TCP keep-alive), holding row locks such as the
    // account's `FOR UPDATE` in the dispatch gate, and every node stalls behind it. Our
    // transactions are milliseconds long; 10 s is far from them and well inside a call lease.
    options: `-c search_path=${schema} -c timezone=UTC -c idle_in_transaction_session_timeout=${idleInTransactionTimeoutMs}`,
    connectionTimeoutMillis: 10_000,
  });
  // The pool re-emits an idle client's error; the client's own listener below has logged it.
  pool.on('error', () => undefined);
  // Without a listener, an 'error' on a checked-out client (pg emits one when its socket ends,
  // even after failing the query in flight) is an uncaught exception that ends the process.
  // pg reports a dropped connection twice (the server's message, then the closed socket): log once.
  pool.on('connect', (client) => {
    let reported = false;
    client.on('error', (error) => {
      if (reported) return;
      reported = true;
      options.logger?.warn({ err: connectionErrorSummary(error) }, 'PostgreSQL connection lost');
    });
  });
  return pool;
}

/**
 * Whether `error` means the connection itself is gone (the server ended the session, the socket
 * closed, no connection could be made), rather than the statement being refused.
 */
export function isConnectionLoss(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    // 08: connection exception; 57P01-57P03: admin shutdown, crash shutdown, cannot connect now.
    if (code.startsWith('08') || /^57P0[123]$/.test(code)) return true;
    if (['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH'].includes(code)) return true;
  }
  return (
    typeof message === 'string' &&
    /Connection terminated|not queryable|timeout exceeded when trying to connect/i.test(message)
  );
}

/** What a log line needs of a connection error: not the client object pg attaches to it. */
export function connectionErrorSummary(error: unknown): { code?: string; message: string } {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return {
    ...(typeof code === 'string' ? { code } : {}),
    message: typeof message === 'string' ? message : String(error),
  };
}

/** How often a transaction whose connection dropped before COMMIT is run again, at most. */
export const transactionAttemptsOnConnectionLoss = 3;

/**
 * Runs `work` in one transaction on one client: COMMIT when it resolves, ROLLBACK when it throws.
 * A connection lost before COMMIT was sent cannot have committed anything, so the transaction runs
 * again on a fresh connection (`work` must only touch the database through `client`). A loss
 * during COMMIT leaves the outcome unknown: that error reaches the caller.
 */
export async function withTransaction<T>(pool: PgPool, work: (client: PgClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const progress = { commitSent: false };
    try {
      return await transactionOnce(pool, work, progress);
    } catch (error) {
      if (progress.commitSent || !isConnectionLoss(error) || attempt >= transactionAttemptsOnConnectionLoss)
        throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

async function transactionOnce<T>(
  pool: PgPool,
  work: (client: PgClient) => Promise<T>,
  progress: { commitSent: boolean },
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    progress.commitSent = true;
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // A failed COMMIT ends the transaction on a live connection; a dropped one is not reused.
    if (!progress.commitSent) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken = rollbackError;
      });
    }
    throw error;
  } finally {
    // A client whose ROLLBACK failed is in an unknown state: the pool discards it.
    client.release(broken);
  }
}

/** A 64-bit advisory lock key derived from a name (so each schema migrates under its own lock). */
export const advisoryKeySql = "('x' || substr(md5($1), 1, 16))::bit(64)::bigint";

/**
 * Brings the schema up to date. Several processes may start at once: each takes the schema's
 * advisory lock on one connection, applies what is missing in one transaction, then releases it.
 * Returns the versions this call applied.
 */
export async function migrate(
  pool: PgPool,
  schema: string,
  /** Runs after our migrations, still under the lock (e.g. the job queue's own installation). */
  thenUnderLock?: () => Promise<void>,
): Promise<number[]> {
  assertSchemaName(schema);
  const client = await pool.connect();
  const lockName = `callwright.migrate.${schema}`;
  let unlockFailed: Error | undefined;
  try {
    await client.query(`SELECT pg_advisory_lock(${advisoryKeySql})`, [lockName]);
    try {
      await client.query('BEGIN');
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (
        version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
      const { rows } = await client.query<{ version: number }>(
        `SELECT version FROM ${schema}.schema_migrations`,
      );
      const applied = new Set(rows.map((row) => row.version));
      const newlyApplied: number[] = [];
      for (const migration of postgresMigrations) {
        if (applied.has(migration.version)) continue;
        await client.query(`SET LOCAL search_path = ${schema}`);
        await client.query(migration.sql);
        await client.query(`INSERT INTO ${schema}.schema_migrations (version, name) VALUES ($1, $2)`, [
          migration.version,
          migration.name,
        ]);
        newlyApplied.push(migration.version);
      }
      await client.query('COMMIT');
      await thenUnderLock?.();
      return newlyApplied;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      // If the unlock fails the session may still hold the lock: end it rather than pool it.
      await client.query(`SELECT pg_advisory_unlock(${advisoryKeySql})`, [lockName]).catch((error: Error) => {
        unlockFailed = error;
      });
    }
  } finally {
    client.release(unlockFailed);
  }
}

/** Timestamps come back as Date; records carry ISO 8601 UTC strings (millisecond precision). */
export function iso(value: Date | string): string {
  return value instanceof Date ? value.toISOString() : new Date(value).toISOString();
}

export function isoOrNull(value: Date | string | null): string | null {
  return value === null ? null : iso(value);
}

export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === '23505';
}
