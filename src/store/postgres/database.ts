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
 * A pool whose every connection works in `schema` (search_path) and in UTC. The pool reports
 * connection errors of idle clients to the logger instead of crashing the process.
 */
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
    options: `-c search_path=${schema} -c timezone=UTC`,
    connectionTimeoutMillis: 10_000,
  });
  pool.on('error', (error) => options.logger?.warn({ err: error }, 'idle PostgreSQL connection failed'));
  return pool;
}

/** Runs `work` in one transaction on one client: COMMIT when it resolves, ROLLBACK when it throws. */
export async function withTransaction<T>(pool: PgPool, work: (client: PgClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
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
      await client.query(`SELECT pg_advisory_unlock(${advisoryKeySql})`, [lockName]);
    }
  } finally {
    client.release();
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
