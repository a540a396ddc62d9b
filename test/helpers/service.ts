import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { buildApp } from '../../src/api/app.js';
import type { Config } from '../../src/config.js';
import { parseRatePolicy, type RatePolicy } from '../../src/domain/rateLimit.js';
import { PostgresRateLimiter } from '../../src/limits/postgresRateLimiter.js';
import { MemoryRateLimiter, type RateLimiter } from '../../src/limits/rateLimiter.js';
import { createLogger } from '../../src/logger.js';
import { openSqliteStore } from '../../src/openStore.js';
import type { Store } from '../../src/store/types.js';
import { dropTestSchema, newTestSchema, openTestPostgresStore } from './postgres.js';
import type { AnyStore, StoreKind } from './stores.js';

/** Collects every log line the service writes, so tests can look for leaks. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }
  text(): string {
    return this.lines.join('\n');
  }
}

export interface TestService {
  kind: StoreKind;
  url: string;
  store: AnyStore;
  app: FastifyInstance;
  dataDir: string;
  logs: LogCapture;
  /** Stops the service and opens a new one on the same data (SQLite file or PostgreSQL schema). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface TestServiceOptions {
  ratePolicy?: string;
  authFailurePolicy?: string;
  /** Which store the API runs on (default sqlite); postgres uses a fresh schema of the test server. */
  store?: StoreKind;
  /** Whose X-Forwarded-For to believe (CALLWRIGHT_TRUST_PROXY as loadConfig parses it); default none. */
  trustProxy?: Config['trustProxy'];
  /** Request, idle and keep-alive timeouts (short ones for the slow-client tests). */
  httpTimeouts?: Config['httpTimeouts'];
}

function policy(text: string): RatePolicy {
  const parsed = parseRatePolicy(text);
  if (!parsed) throw new Error(`bad policy ${text}`);
  return parsed;
}

/**
 * A real service: a real SQLite file in a temporary directory (or a fresh schema on the test run's
 * PostgreSQL, with the shared rate limiter), real HTTP on 127.0.0.1.
 */
export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'callwright-test-'));
  const logs = new LogCapture();
  const config = {
    ratePolicy: policy(options.ratePolicy ?? '100000/10s'),
    authFailurePolicy: policy(options.authFailurePolicy ?? '100000/60s'),
    publicUrl: 'http://localhost',
    trustProxy: options.trustProxy ?? false,
    ...(options.httpTimeouts ? { httpTimeouts: options.httpTimeouts } : {}),
  };

  const kind = options.store ?? 'sqlite';
  const schema = newTestSchema();
  const logger = createLogger('info', logs);

  async function open() {
    let store: AnyStore;
    let limiter: RateLimiter;
    if (kind === 'postgres') {
      const postgres = await openTestPostgresStore({ schema, logger });
      store = postgres;
      limiter = new PostgresRateLimiter(postgres.pool);
    } else {
      store = openSqliteStore(join(dataDir, 'callwright.db'));
      limiter = new MemoryRateLimiter();
    }
    const app = await buildApp({
      store,
      config,
      logger,
      limiter,
      version: 'test',
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { store, app, url };
  }

  let current = await open();
  const service: TestService = {
    kind,
    get url() {
      return current.url;
    },
    get store() {
      return current.store;
    },
    get app() {
      return current.app;
    },
    dataDir,
    logs,
    async restart() {
      await current.app.close();
      await current.store.close();
      current = await open();
    },
    async close() {
      await current.app.close();
      await current.store.close();
      if (kind === 'postgres') await dropTestSchema(schema);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return service;
}

export interface AccountFixture {
  accountId: string;
  key: string;
  keyId: string;
  agentId: string;
  number: string;
}

/** An account with a key, an active agent declaring `customer_name` and `slot`, and a number. */
export async function createAccountFixture(
  store: Store,
  options: { name?: string; number?: string } = {},
): Promise<AccountFixture> {
  const account = await store.accounts.create({ name: options.name ?? 'Test account' });
  const { record, key } = await createApiKey(store, account.id, 'test key');
  const agent = await createAgent(store, account.id, {
    name: 'Appointment bot',
    prompt: 'You confirm appointments for {{customer_name}} at {{slot}}.',
    firstMessage: 'Hello {{customer_name}}!',
    variables: ['customer_name', 'slot=tomorrow'].map(parseVariableDeclaration),
  });
  const number = options.number ?? '+15550009999';
  await addPhoneNumber(store, account.id, number);
  return { accountId: account.id, key, keyId: record.id, agentId: agent.id, number };
}
