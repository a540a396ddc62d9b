import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { buildApp } from '../../src/api/app.js';
import { generateApiKey } from '../../src/domain/apiKeys.js';
import { parseRatePolicy, type RatePolicy } from '../../src/domain/rateLimit.js';
import { PostgresRateLimiter } from '../../src/limits/postgresRateLimiter.js';
import { createLogger } from '../../src/logger.js';
import type { PostgresStore } from '../../src/store/postgres/postgresStore.js';
import { type HttpResult, postCall } from '../helpers/http.js';
import { testPostgresUrl } from '../helpers/postgres.js';
import { type AccountFixture, createAccountFixture, LogCapture } from '../helpers/service.js';
import { openTestStore, type TestStoreHandle } from '../helpers/stores.js';

/**
 * Issue 12, "the scale-out path at full speed": on PostgreSQL a create is one statement that
 * authenticates, applies both limits, checks the agent, the number and the variables and writes
 * the call with its dispatch job. Two API fronts (each its own pool and limiter, as two
 * `serve --role api` processes) on one schema; every outcome of the statement, under concurrency.
 */

function policy(text: string): RatePolicy {
  const parsed = parseRatePolicy(text);
  if (!parsed) throw new Error(`bad policy ${text}`);
  return parsed;
}

interface Fronts {
  handle: TestStoreHandle;
  store: PostgresStore;
  stores: PostgresStore[];
  urls: string[];
  apps: FastifyInstance[];
}

let fronts: Fronts | undefined;

async function startFronts(
  options: { ratePolicy?: string; authFailurePolicy?: string } = {},
): Promise<Fronts> {
  const logger = createLogger('info', new LogCapture());
  const handle = await openTestStore('postgres', { logger });
  const stores: PostgresStore[] = [];
  const apps: FastifyInstance[] = [];
  const urls: string[] = [];
  for (let front = 0; front < 2; front++) {
    const store = (front === 0 ? handle.store : await handle.openAnother({ logger })) as PostgresStore;
    const app = await buildApp({
      store,
      config: {
        ratePolicy: policy(options.ratePolicy ?? '100000/10s'),
        authFailurePolicy: policy(options.authFailurePolicy ?? '100000/60s'),
        publicUrl: 'http://localhost',
        trustProxy: false,
      },
      logger,
      limiter: new PostgresRateLimiter(store.pool),
      version: 'test',
    });
    stores.push(store);
    apps.push(app);
    urls.push(await app.listen({ port: 0, host: '127.0.0.1' }));
  }
  fronts = { handle, store: stores[0] as PostgresStore, stores, urls, apps };
  return fronts;
}

afterEach(async () => {
  if (!fronts) return;
  for (const app of fronts.apps) await app.close();
  await fronts.handle.dispose();
  fronts = undefined;
});

function bodyFor(fixture: AccountFixture, overrides: Record<string, unknown> = {}) {
  return { agent_id: fixture.agentId, from_number: fixture.number, to_number: '+15550100001', ...overrides };
}

function messageOf(result: HttpResult): string {
  return (result.body as { error: { message: string } }).error.message;
}

async function countCalls(store: PostgresStore, accountId: string): Promise<{ calls: number; jobs: number }> {
  const { rows } = await store.pool.query<{ calls: number; jobs: number }>(
    `SELECT (SELECT count(*)::int FROM calls WHERE account_id = $1) AS calls,
       (SELECT count(*)::int FROM ${store.schema}_jobs.job j JOIN calls c ON c.id = j.data ->> 'call_id'
        WHERE c.account_id = $1 AND j.name = 'call.dispatch') AS jobs`,
    [accountId],
  );
  return rows[0] as { calls: number; jobs: number };
}

/** Waits (bounded) until some backend of this schema waits for a lock, i.e. the request is in flight. */
async function waitForLockWait(client: pg.Client): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE wait_event_type = 'Lock' AND datname = current_database() AND pid <> pg_backend_pid()`,
    );
    if ((rows[0]?.n ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the request never waited for the lock');
}

/**
 * Every statement any client of this process sends about the API's tables while `work` runs
 * (pg-boss's own maintenance aside), whether through a pool, a transaction's client or the query
 * builder.
 */
async function statementsDuring(work: () => Promise<void>): Promise<string[]> {
  const statements: string[] = [];
  const clientQuery = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : ((args[0] as { text?: string } | null)?.text ?? '');
    if (/api_keys|rate_buckets|\bcalls\b|agents|phone_numbers|^\s*(BEGIN|COMMIT)/i.test(text))
      statements.push(text);
    return (clientQuery as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof clientQuery;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = clientQuery;
  }
  return statements;
}

describe('the one-round-trip create on PostgreSQL', () => {
  it('makes one statement per creation (the wake-up NOTIFY aside), where the staged path made nine', async () => {
    const { store, urls } = await startFronts();
    const fixture = await createAccountFixture(store);
    // The first use of a key writes its last_used_at (once a minute per key and process).
    expect((await postCall(urls[0] as string, fixture.key, bodyFor(fixture))).status).toBe(200);
    const statements = await statementsDuring(async () => {
      const result = await postCall(urls[0] as string, fixture.key, bodyFor(fixture));
      expect(result.status).toBe(200);
    });
    expect(statements).toHaveLength(1);
    expect(await countCalls(store, fixture.accountId)).toEqual({ calls: 2, jobs: 2 });
  });

  it('authorizes every other route in one statement too (key, failure limit, account limit), then its own read', async () => {
    const { store, urls } = await startFronts({ ratePolicy: '3/60s' });
    const fixture = await createAccountFixture(store);
    const created = await postCall(urls[0] as string, fixture.key, bodyFor(fixture));
    const callId = (created.body as { call_id: string }).call_id;
    const statuses: number[] = [];
    const statements = await statementsDuring(async () => {
      const response = await fetch(`${urls[0]}/v1/calls/${callId}`, {
        headers: { 'X-API-Key': fixture.key },
      });
      expect(response.headers.get('ratelimit')).toMatch(/^"account";r=1;t=\d+$/);
      statuses.push(response.status);
      await response.arrayBuffer();
    });
    expect(statuses).toEqual([200]);
    expect(statements).toHaveLength(2);
    // The same bucket as the create's: the third request of the account's 3 passes, the fourth is 429.
    const third = await fetch(`${urls[1]}/v1/calls`, { headers: { 'X-API-Key': fixture.key } });
    const fourth = await fetch(`${urls[0]}/v1/calls/${callId}`, { headers: { 'X-API-Key': fixture.key } });
    expect([third.status, fourth.status]).toEqual([200, 429]);
    const wrong = await fetch(`${urls[0]}/v1/calls`, { headers: { 'X-API-Key': generateApiKey() } });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('ratelimit-policy')).toBe('"auth_failures";q=100000;w=60');
  });

  it('a key revoked while its request waits on the key row gets 401 and writes nothing', async () => {
    const { store, urls } = await startFronts();
    const fixture = await createAccountFixture(store);
    const revoker = new pg.Client({ connectionString: testPostgresUrl() });
    await revoker.connect();
    try {
      await revoker.query('BEGIN');
      await revoker.query(`UPDATE ${store.schema}.api_keys SET revoked_at = now() WHERE id = $1`, [
        fixture.keyId,
      ]);
      const inFlight = postCall(urls[0] as string, fixture.key, bodyFor(fixture));
      await waitForLockWait(revoker);
      await revoker.query('COMMIT');
      const result = await inFlight;
      expect(result.status).toBe(401);
      expect((result.body as { error: { code: string } }).error.code).toBe('unauthorized');
    } finally {
      await revoker.end();
    }
    expect(await countCalls(store, fixture.accountId)).toEqual({ calls: 0, jobs: 0 });
  });

  it('an agent deactivated before the request is 404; a number not configured and an undeclared variable are 400', async () => {
    const { store, urls } = await startFronts();
    const fixture = await createAccountFixture(store);
    const url = urls[1] as string;
    await store.agents.setActive(fixture.accountId, fixture.agentId, false);
    const inactive = await postCall(url, fixture.key, bodyFor(fixture));
    expect(inactive.status).toBe(404);
    expect(messageOf(inactive)).toContain(fixture.agentId);
    await store.agents.setActive(fixture.accountId, fixture.agentId, true);

    const unknownNumber = await postCall(url, fixture.key, bodyFor(fixture, { from_number: '+15550001234' }));
    expect(unknownNumber.status).toBe(400);
    expect(messageOf(unknownNumber)).toContain('from_number');

    // The first undeclared name in the request's order (jsonb would sort "a" before "bb").
    const undeclared = await postCall(
      url,
      fixture.key,
      bodyFor(fixture, { variables: { customer_name: 'A', bb: 1, a: 2 } }),
    );
    expect(undeclared.status).toBe(400);
    expect(messageOf(undeclared)).toBe('variables.bb is not declared by the agent');

    // Another account's agent is not this account's.
    const other = await createAccountFixture(store, { name: 'other', number: '+15550008888' });
    expect((await postCall(url, fixture.key, bodyFor(fixture, { agent_id: other.agentId }))).status).toBe(
      404,
    );
    expect(await countCalls(store, fixture.accountId)).toEqual({ calls: 0, jobs: 0 });
  });

  it('concurrent requests of every outcome, batched together over two fronts, each get their own answer', async () => {
    const { store, urls } = await startFronts();
    const fixture = await createAccountFixture(store);
    const cases: [string | null, Record<string, unknown>, number][] = [
      [fixture.key, bodyFor(fixture), 200],
      [generateApiKey(), bodyFor(fixture), 401],
      [null, bodyFor(fixture), 401],
      [fixture.key, bodyFor(fixture, { agent_id: 'agt_01H00000000000000000000000' }), 404],
      [fixture.key, bodyFor(fixture, { from_number: '+15550001234' }), 400],
      [fixture.key, bodyFor(fixture, { variables: { colour: 'red' } }), 400],
      [fixture.key, bodyFor(fixture, { to_number: 'nope' }), 422],
      [fixture.key, bodyFor(fixture, { context: 7 }), 400],
      [fixture.key, bodyFor(fixture, { variables: { customer_name: 'B' } }), 200],
    ];
    const rounds = 4;
    const results = await Promise.all(
      Array.from({ length: rounds }, (_, round) =>
        cases.map(([key, body], index) => postCall(urls[(round + index) % 2] as string, key, body)),
      ).flat(),
    );
    expect(results.map((result) => result.status)).toEqual(
      Array.from({ length: rounds }, () => cases.map(([, , status]) => status)).flat(),
    );
    for (const result of results.filter((candidate) => candidate.status !== 401)) {
      expect(result.headers['ratelimit-policy']).toBe('"account";q=100000;w=10');
    }
    expect(await countCalls(store, fixture.accountId)).toEqual({ calls: 2 * rounds, jobs: 2 * rounds });
  });

  it('an account limit of 10 under 40 concurrent requests over two fronts: exactly 10 created, 30 refused with 429', async () => {
    const { store, urls } = await startFronts({ ratePolicy: '10/60s' });
    const fixture = await createAccountFixture(store);
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        postCall(urls[index % 2] as string, fixture.key, bodyFor(fixture)),
      ),
    );
    const created = results.filter((result) => result.status === 200);
    const limited = results.filter((result) => result.status === 429);
    expect(created).toHaveLength(10);
    expect(limited).toHaveLength(30);
    for (const result of limited) {
      expect((result.body as { error: { code: string } }).error.code).toBe('rate_limited');
      expect(Number(result.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(result.headers.ratelimit).toMatch(/^"account";r=0;t=\d+$/);
    }
    // Each 200 saw a different number of tokens left: 9, 8, …, 0.
    const remaining = created.map((result) => Number(/r=(\d+)/.exec(result.headers.ratelimit ?? '')?.[1]));
    expect(remaining.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await countCalls(store, fixture.accountId)).toEqual({ calls: 10, jobs: 10 });
    // The other routes count against the same bucket.
    const listed = await fetch(`${urls[0]}/v1/calls`, { headers: { 'X-API-Key': fixture.key } });
    expect(listed.status).toBe(429);
  });

  it('a failure limit of 5 under 30 concurrent wrong keys: exactly 5 get 401, the rest 429, then a valid key is held off', async () => {
    const { store, urls } = await startFronts({ authFailurePolicy: '5/60s' });
    const fixture = await createAccountFixture(store);
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        postCall(urls[index % 2] as string, index % 3 === 0 ? null : generateApiKey(), bodyFor(fixture)),
      ),
    );
    const statuses = results.map((result) => result.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(25);
    for (const result of results) expect(result.headers['ratelimit-policy']).toBe('"auth_failures";q=5;w=60');
    const valid = await postCall(urls[1] as string, fixture.key, bodyFor(fixture));
    expect(valid.status).toBe(429);
    expect(messageOf(valid)).toContain('failed authentications');
    expect(await countCalls(store, fixture.accountId)).toEqual({ calls: 0, jobs: 0 });
  });

  it('valid keys never spend the failure limit, and a second key of the account works beside a revoked one', async () => {
    const { store, urls } = await startFronts({ authFailurePolicy: '2/60s' });
    const fixture = await createAccountFixture(store);
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        postCall(urls[index % 2] as string, fixture.key, bodyFor(fixture)).then((result) => result.status),
      ),
    );
    expect(statuses).toEqual(Array(20).fill(200));
    const second = await createApiKey(store, fixture.accountId, 'second');
    await store.apiKeys.revoke(fixture.accountId, fixture.keyId, new Date().toISOString());
    expect((await postCall(urls[0] as string, fixture.key, bodyFor(fixture))).status).toBe(401);
    expect((await postCall(urls[1] as string, second.key, bodyFor(fixture))).status).toBe(200);
  });

  it('keeps 401 before the 400 of a body over 64 KiB, and the 400 for a valid key', async () => {
    const { store, urls } = await startFronts();
    const fixture = await createAccountFixture(store);
    const big = JSON.stringify(bodyFor(fixture, { context: 'x'.repeat(70_000) }));
    expect((await postCall(urls[0] as string, null, big)).status).toBe(401);
    expect((await postCall(urls[0] as string, generateApiKey(), big)).status).toBe(401);
    const refused = await postCall(urls[0] as string, fixture.key, big);
    expect(refused.status).toBe(400);
    expect(refused.headers['ratelimit-policy']).toBe('"account";q=100000;w=10');
  });
});
