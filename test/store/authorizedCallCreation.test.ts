import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newCallFields } from '../../src/calls/createOutboundCall.js';
import { hashApiKey } from '../../src/domain/apiKeys.js';
import { createLogger } from '../../src/logger.js';
import { openPostgresStore } from '../../src/openStore.js';
import { queueNames } from '../../src/queue/types.js';
import type { PostgresStore } from '../../src/store/postgres/postgresStore.js';
import type { AuthorizedCallAttempt } from '../../src/store/types.js';
import { ConnectionCuttingProxy } from '../helpers/connectionCuttingProxy.js';
import { dropTestSchema, newTestSchema, testPostgresUrl } from '../helpers/postgres.js';
import { type AccountFixture, createAccountFixture } from '../helpers/service.js';
import { countJobs } from '../helpers/stores.js';

/**
 * The one-statement create (calls.createAuthorized) when its connection drops: a statement cut
 * before it reached the server runs again; one whose answer was lost after it committed is not
 * written twice, and the attempt answers with the call it stored.
 */

const schema = newTestSchema();
let proxy: ConnectionCuttingProxy;
let store: PostgresStore;
let fixture: AccountFixture;

beforeAll(async () => {
  proxy = await ConnectionCuttingProxy.start(testPostgresUrl());
  store = await openPostgresStore({
    connectionString: proxy.url,
    schema,
    maxConnections: 4,
    logger: createLogger('silent'),
  });
  fixture = await createAccountFixture(store);
});

afterAll(async () => {
  await store?.close();
  await proxy?.close();
  await dropTestSchema(schema);
});

function attempt(): AuthorizedCallAttempt {
  return {
    keyHash: hashApiKey(fixture.key),
    authFailureBucket: 'auth-failure:127.0.0.1',
    authFailurePolicy: { requests: 20, windowS: 60 },
    defaultRatePolicy: { requests: 100, windowS: 10 },
    call: newCallFields({
      agent_id: fixture.agentId,
      from_number: fixture.number,
      to_number: '+15550100001',
    }),
  };
}

async function storedCopies(callId: string): Promise<number> {
  const { rows } = await store.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM calls WHERE id = $1',
    [callId],
  );
  return rows[0]?.n ?? 0;
}

describe('calls.createAuthorized when the connection drops', () => {
  for (const when of ['before', 'afterAnswer'] as const) {
    it(`cut ${when === 'before' ? 'before the statement reached the server' : 'after it committed, its answer lost'}: the call is stored once, with one job, and the attempt answers 200`, async () => {
      // The statement is prepared: its text travels once per connection. A process of its own
      // (fresh connections) sends it, so the proxy can aim at it.
      const apiProcess = await openPostgresStore({
        connectionString: proxy.url,
        schema,
        maxConnections: 4,
        logger: createLogger('silent'),
      });
      const input = attempt();
      proxy.cutOnce(/WITH clock AS/, when);
      const cutsBefore = proxy.cuts;
      const outcome = await apiProcess.calls.createAuthorized(input).finally(() => apiProcess.close());
      expect(proxy.cuts).toBe(cutsBefore + 1);
      expect(outcome).toMatchObject({ kind: 'created', call: { id: input.call?.id, status: 'queued' } });
      expect(await storedCopies(input.call?.id as string)).toBe(1);
      expect(await countJobs(store, queueNames.dispatch, { call_id: input.call?.id as string })).toBe(1);
    });
  }
});
