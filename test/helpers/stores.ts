import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId } from '../../src/domain/ids.js';
import type { RatePolicy } from '../../src/domain/rateLimit.js';
import type {
  AccountRecord,
  AgentRecord,
  ApiKeyRecord,
  NewAgent,
  NewApiKey,
  NewQueuedCall,
} from '../../src/domain/records.js';
import type { Logger } from '../../src/logger.js';
import { createLogger } from '../../src/logger.js';
import { openSqliteStore } from '../../src/openStore.js';
import { PostgresStore } from '../../src/store/postgres/postgresStore.js';
import { SqliteStore } from '../../src/store/sqlite/sqliteStore.js';
import type { Store, StoreWithQueue } from '../../src/store/types.js';
import { dropTestSchema, newTestSchema, openTestPostgresStore } from './postgres.js';

/** Every store the suites run against. */
export const storeKinds = ['sqlite', 'postgres'] as const;
export type StoreKind = (typeof storeKinds)[number];

export type AnyStore = SqliteStore | PostgresStore;

/** A store on fresh data: a new SQLite file, or a new PostgreSQL schema of the test server. */
export interface TestStoreHandle {
  kind: StoreKind;
  store: AnyStore;
  /** Another store on the same data: a second process's view (same file, same schema). */
  openAnother(options?: { logger?: Logger }): Promise<AnyStore>;
  /** Closes every store it opened and removes the data. */
  dispose(): Promise<void>;
}

export async function openTestStore(
  kind: StoreKind,
  options: { logger?: Logger } = {},
): Promise<TestStoreHandle> {
  const logger = options.logger ?? createLogger('silent');
  const opened: AnyStore[] = [];
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'callwright-store-'));
    const open = async () => {
      const store = openSqliteStore(join(dir, 'callwright.db'));
      opened.push(store);
      return store;
    };
    return {
      kind,
      store: await open(),
      openAnother: open,
      async dispose() {
        for (const store of opened) await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const schema = newTestSchema();
  const open = async (other?: { logger?: Logger }) => {
    const store = await openTestPostgresStore({ schema, logger: other?.logger ?? logger });
    opened.push(store);
    return store;
  };
  return {
    kind,
    store: await open(),
    openAnother: open,
    async dispose() {
      for (const store of opened) await store.close();
      await dropTestSchema(schema);
    },
  };
}

/**
 * Runs one SQL statement written with `?` placeholders on either store (for tests that reach
 * below the Store port); PostgreSQL gets `$1, $2, …`. Resolves to the rows.
 */
export async function sqlOn(store: StoreWithQueue, sql: string, params: unknown[] = []): Promise<unknown[]> {
  if (store instanceof SqliteStore) {
    const statement = store.db.prepare(sql);
    if (statement.reader) return statement.all(...params);
    statement.run(...params);
    return [];
  }
  if (store instanceof PostgresStore) {
    let index = 0;
    const { rows } = await store.pool.query(
      sql.replace(/\?/g, () => `$${++index}`),
      params,
    );
    return rows;
  }
  throw new Error('unknown store');
}

/** How many unfinished jobs of `queue` carry exactly this payload. */
export async function countJobs(
  store: StoreWithQueue,
  queue: string,
  payload: Record<string, unknown>,
): Promise<number> {
  if (store instanceof SqliteStore) return store.queue.findByPayload(queue, payload).length;
  if (store instanceof PostgresStore)
    return (await store.queue.findByPayload(store.pool, queue, payload)).length;
  throw new Error('unknown store');
}

/** Makes every job insert fail from now on (a broken database, for 500 paths). */
export async function breakJobQueue(store: StoreWithQueue): Promise<void> {
  if (store instanceof SqliteStore) store.db.exec('DROP TABLE jobs');
  else if (store instanceof PostgresStore) await store.pool.query(`DROP SCHEMA ${store.schema}_jobs CASCADE`);
}

/** A call to create with `store.calls.createQueued`: a new id, fixed numbers, created now. */
export function newQueuedCall(
  owner: { accountId: string; agentId: string; apiKeyId: string },
  overrides: Partial<NewQueuedCall> = {},
): NewQueuedCall {
  return {
    id: newId('call'),
    ...owner,
    fromNumber: '+15550000001',
    toNumber: '+15550000002',
    firstMessage: null,
    context: null,
    variables: null,
    createdAt: new Date().toISOString(),
    ...overrides,
  };
}

/** An API key to create with `store.apiKeys.create`: a unique hash, placeholder name and prefix. */
export function newApiKey(accountId: string, overrides: Partial<NewApiKey> = {}): NewApiKey {
  return { accountId, name: 'k', keyHash: newId('apiKey'), prefix: 'p', last4: 'l', ...overrides };
}

/** An active script agent to create with `store.agents.create`: 600 s calls, 20 s of silence. */
export function newAgent(accountId: string, overrides: Partial<NewAgent> = {}): NewAgent {
  return {
    accountId,
    name: 'a',
    active: true,
    prompt: 'p',
    firstMessage: 'hi',
    variables: [],
    extraction: [],
    brain: 'script',
    script: null,
    settings: {},
    maxDurationS: 600,
    silenceTimeoutS: 20,
    ...overrides,
  };
}

/** What a call needs before it can be created: an account, one of its API keys and an agent. */
export interface CallOwner {
  account: AccountRecord;
  key: ApiKeyRecord;
  agent: AgentRecord;
  /** The ids `newQueuedCall` takes. */
  owner: { accountId: string; agentId: string; apiKeyId: string };
}

/**
 * Creates an account (by default "acme", 3 live calls), an API key and an agent in it. `account`
 * may instead be an existing one.
 */
export async function createCallOwner(
  store: Pick<Store, 'accounts' | 'apiKeys' | 'agents'>,
  options: {
    account?: { name: string; maxLiveCalls?: number; ratePolicy?: RatePolicy | null } | AccountRecord;
    key?: Partial<NewApiKey>;
    agent?: Partial<NewAgent>;
  } = {},
): Promise<CallOwner> {
  const wanted = options.account ?? { name: 'acme', maxLiveCalls: 3 };
  const account = isAccountRecord(wanted) ? wanted : await store.accounts.create(wanted);
  const key = await store.apiKeys.create(newApiKey(account.id, options.key));
  const agent = await store.agents.create(newAgent(account.id, options.agent));
  return { account, key, agent, owner: { accountId: account.id, agentId: agent.id, apiKeyId: key.id } };
}

function isAccountRecord(value: object): value is AccountRecord {
  return 'id' in value;
}
