import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import type { Logger } from '../../src/logger.js';
import { createLogger } from '../../src/logger.js';
import { openPostgresStore } from '../../src/openStore.js';
import type { PostgresStore } from '../../src/store/postgres/postgresStore.js';

/** The test run's PostgreSQL server (see test/postgresGlobalSetup.ts). */
export function testPostgresUrl(): string {
  return inject('postgresUrl');
}

/** A schema name no other test service uses. */
export function newTestSchema(): string {
  return `cw_${process.pid}_${randomBytes(5).toString('hex')}`;
}

/** Drops a test service's schemas (its tables and its pg-boss jobs). */
export async function dropTestSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: testPostgresUrl() });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.query(`DROP SCHEMA IF EXISTS ${schema}_jobs CASCADE`);
  } finally {
    await client.end();
  }
}

/** A PostgresStore in a fresh schema of the test server. */
export async function openTestPostgresStore(
  options: { schema?: string; logger?: Logger; queueMaintenanceIntervalS?: number } = {},
): Promise<PostgresStore> {
  return openPostgresStore({
    connectionString: testPostgresUrl(),
    schema: options.schema ?? newTestSchema(),
    maxConnections: 8,
    logger: options.logger ?? createLogger('silent'),
    ...(options.queueMaintenanceIntervalS
      ? { queueMaintenanceIntervalS: options.queueMaintenanceIntervalS }
      : {}),
  });
}

/**
 * A database of its own on the test server, for tests that terminate every backend of
 * `current_database()`: other test files (in their own databases) keep their connections.
 */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `cwdb_${process.pid}_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: testPostgresUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(testPostgresUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: testPostgresUrl() });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** Terminates every other backend of the database `client` is connected to; resolves to how many. */
export async function terminateOtherBackends(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ terminated: boolean }>(
    `SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid()`,
  );
  return rows.filter((row) => row.terminated).length;
}

/** The environment of a full test service on `store`: nothing for SQLite, a schema of its own on PostgreSQL. */
export function storeEnv(store: 'sqlite' | 'postgres', schema: string): Record<string, string> {
  return store === 'postgres'
    ? {
        DATABASE_URL: testPostgresUrl(),
        CALLWRIGHT_DATABASE_SCHEMA: schema,
        CALLWRIGHT_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
      }
    : {};
}
