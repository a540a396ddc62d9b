import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { openPostgresStore } from '../../src/openStore.js';
import { queueNames } from '../../src/queue/types.js';
import {
  createPool,
  isConnectionLoss,
  type PgPool,
  withTransaction,
} from '../../src/store/postgres/database.js';
import { jobNotifyChannel, listenForJobs } from '../../src/store/postgres/jobNotifications.js';
import type { PostgresStore } from '../../src/store/postgres/postgresStore.js';
import { ConnectionCuttingProxy } from '../helpers/connectionCuttingProxy.js';
import {
  createTestDatabase,
  dropTestSchema,
  newTestSchema,
  terminateOtherBackends,
  testPostgresUrl,
} from '../helpers/postgres.js';
import { countJobs, createCallOwner, newQueuedCall } from '../helpers/stores.js';

/**
 * What a dropped connection does to one transaction, aimed exactly: the server ends the session
 * in the middle of a transaction, or a proxy cuts the connection before a statement or after a
 * COMMIT's answer. The process never sees an unhandled 'error'; what surely did not commit runs
 * again, what may have committed is never run twice.
 */

const schema = newTestSchema();
let proxy: ConnectionCuttingProxy;
let pool: PgPool;
let store: PostgresStore;

beforeAll(async () => {
  proxy = await ConnectionCuttingProxy.start(testPostgresUrl());
  pool = createPool({ connectionString: proxy.url, schema, maxConnections: 4 });
  await pool.query(`CREATE SCHEMA ${schema}`);
  await pool.query(`CREATE TABLE ${schema}.rows (id text PRIMARY KEY)`);
  store = await openPostgresStore({
    connectionString: proxy.url,
    schema: `${schema}_store`,
    maxConnections: 4,
    logger: createLogger('silent'),
  });
});

afterAll(async () => {
  await store?.close();
  await pool?.end();
  await proxy?.close();
  await dropTestSchema(schema);
  await dropTestSchema(`${schema}_store`);
});

async function storedRows(): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(`SELECT id FROM ${schema}.rows ORDER BY id`);
  return rows.map((row) => row.id);
}

describe('a dropped PostgreSQL connection', () => {
  it('ending the session inside a transaction: the transaction runs again on a new connection', async () => {
    await pool.query(`DELETE FROM ${schema}.rows`);
    let attempts = 0;
    const result = await withTransaction(pool, async (client) => {
      attempts++;
      await client.query(`INSERT INTO ${schema}.rows VALUES ($1)`, [`terminated-${attempts}`]);
      // The server ends this very session (as pg_terminate_backend from an admin does).
      if (attempts === 1) await client.query('SELECT pg_terminate_backend(pg_backend_pid())');
      return attempts;
    });
    // pg reports the closed socket after the failed query: give that report time to arrive.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(result).toBe(2);
    expect(await storedRows()).toEqual(['terminated-2']);
  });

  it('cut before a statement reaches the server: the transaction runs again', async () => {
    await pool.query(`DELETE FROM ${schema}.rows`);
    let attempts = 0;
    proxy.cutOnce(/INSERT INTO \S+\.rows/, 'before');
    await withTransaction(pool, async (client) => {
      attempts++;
      await client.query(`INSERT INTO ${schema}.rows VALUES ($1)`, [`cut-${attempts}`]);
    });
    expect(proxy.cuts).toBeGreaterThan(0);
    expect(attempts).toBe(2);
    expect(await storedRows()).toEqual(['cut-2']);
  });

  it('cut after a COMMIT was answered: not run again, and the caller learns the connection was lost', async () => {
    await pool.query(`DELETE FROM ${schema}.rows`);
    let attempts = 0;
    proxy.cutOnce(/^COMMIT/, 'afterAnswer');
    const outcome = await withTransaction(pool, async (client) => {
      attempts++;
      await client.query(`INSERT INTO ${schema}.rows VALUES ($1)`, [`committed-${attempts}`]);
    }).catch((error: unknown) => error);
    expect(isConnectionLoss(outcome)).toBe(true);
    expect(attempts).toBe(1);
    expect(await storedRows()).toEqual(['committed-1']);
  });

  it('a call creation whose COMMIT answer was lost answers with the stored call, once', async () => {
    const { owner } = await createCallOwner(store, { agent: { script: { start: { say: 'x' } } } });
    const input = newQueuedCall(owner);
    proxy.cutOnce(/^COMMIT/, 'afterAnswer');
    const cutsBefore = proxy.cuts;
    const call = await store.calls.createQueued(input);
    expect(proxy.cuts).toBe(cutsBefore + 1);
    expect(call).toMatchObject({ id: input.id, status: 'queued' });
    expect(await countJobs(store, queueNames.dispatch, { call_id: input.id })).toBe(1);
    const { rows } = await store.pool.query('SELECT id FROM calls WHERE id = $1', [input.id]);
    expect(rows).toHaveLength(1);
  });

  it('a job completion cut before it ran is tried again', async () => {
    const jobId = await withTransaction(store.pool, (client) =>
      store.queue.insertWithinTransaction(client, {
        queue: queueNames.webhook,
        payload: { event_id: 'evt_cut' },
        runAtMs: Date.now(),
      }),
    );
    const [claimed] = await store.queue.claim(queueNames.webhook, 'w', 1, 30_000);
    expect(claimed?.id).toBe(jobId);
    proxy.cutOnce(/SET completed_on = now\(\)/, 'before');
    const cutsBefore = proxy.cuts;
    await store.queue.complete(jobId);
    expect(proxy.cuts).toBe(cutsBefore + 1);
    expect(await countJobs(store, queueNames.webhook, { event_id: 'evt_cut' })).toBe(0);
  });
});

describe('the LISTEN connection of a worker process', () => {
  it('is connected again after the server terminates it, and wake-ups arrive again', async () => {
    // Its own database: terminating every backend of it touches no other test's connections.
    const database = await createTestDatabase();
    const admin = new pg.Client({ connectionString: database.url });
    admin.on('error', () => undefined);
    await admin.connect();
    const woken: string[] = [];
    const listener = listenForJobs({
      connectionString: database.url,
      logger: createLogger('silent'),
      onJob: (queue) => woken.push(queue),
      retryMs: 50,
    });
    try {
      const notifyUntilWoken = async (queue: string) => {
        for (let tries = 0; tries < 200 && !woken.includes(queue); tries++) {
          await admin.query('SELECT pg_notify($1, $2)', [jobNotifyChannel, queue]);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(woken).toContain(queue);
      };
      await notifyUntilWoken('before');
      for (let round = 1; round <= 3; round++) {
        expect(await terminateOtherBackends(admin)).toBeGreaterThan(0);
        await notifyUntilWoken(`after-${round}`);
      }
    } finally {
      await listener.close();
      await admin.end();
      await database.drop();
    }
  });
});
