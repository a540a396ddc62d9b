import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { buildApp } from '../../src/api/app.js';
import { parseRatePolicy, type RatePolicy } from '../../src/domain/rateLimit.js';
import { MemoryRateLimiter } from '../../src/limits/rateLimiter.js';
import { createLogger } from '../../src/logger.js';
import { SqliteStore } from '../../src/store/sqlite/sqliteStore.js';

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
  url: string;
  store: SqliteStore;
  app: FastifyInstance;
  dataDir: string;
  logs: LogCapture;
  /** Stops the service and opens a new one on the same SQLite file. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface TestServiceOptions {
  ratePolicy?: string;
  authFailurePolicy?: string;
}

function policy(text: string): RatePolicy {
  const parsed = parseRatePolicy(text);
  if (!parsed) throw new Error(`bad policy ${text}`);
  return parsed;
}

/** A real service: a real SQLite file in a temporary directory, real HTTP on 127.0.0.1. */
export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'callwright-test-'));
  const logs = new LogCapture();
  const config = {
    ratePolicy: policy(options.ratePolicy ?? '100000/10s'),
    authFailurePolicy: policy(options.authFailurePolicy ?? '100000/60s'),
    publicUrl: 'http://localhost',
    trustProxy: false,
  };

  async function open() {
    const store = SqliteStore.open(join(dataDir, 'callwright.db'));
    const app = await buildApp({
      store,
      config,
      logger: createLogger('info', logs),
      limiter: new MemoryRateLimiter(),
      version: 'test',
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { store, app, url };
  }

  let current = await open();
  const service: TestService = {
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
  store: SqliteStore,
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
