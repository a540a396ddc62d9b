import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.js';
import type { TrustProxySetting } from '../../src/config.js';
import { hashPassword } from '../../src/dashboard/passwords.js';
import { parseRatePolicy, type RatePolicy } from '../../src/domain/rateLimit.js';
import { PostgresRateLimiter } from '../../src/limits/postgresRateLimiter.js';
import { MemoryRateLimiter, type RateLimiter } from '../../src/limits/rateLimiter.js';
import { createLogger } from '../../src/logger.js';
import { PostgresStore } from '../../src/store/postgres/postgresStore.js';
import { LogCapture } from '../helpers/service.js';
import { type AnyStore, openTestStore, type StoreKind } from '../helpers/stores.js';

/**
 * API processes in front of one database, each serving /v1 and the dashboard on real HTTP. On
 * PostgreSQL every front has its own store (pool) and its own PostgresRateLimiter, as separate
 * `serve --role api` processes would; the embedded SQLite mode is one process, so its fronts
 * share that process's one MemoryRateLimiter.
 */
export interface ApiFronts {
  kind: StoreKind;
  /** The first front's store. */
  store: AnyStore;
  urls: string[];
  logs: LogCapture;
  dispose(): Promise<void>;
}

function policy(text: string): RatePolicy {
  const parsed = parseRatePolicy(text);
  if (!parsed) throw new Error(`bad policy ${text}`);
  return parsed;
}

export async function startApiFronts(
  kind: StoreKind,
  options: { fronts?: number; authFailurePolicy?: string; trustProxy?: TrustProxySetting } = {},
): Promise<ApiFronts> {
  const logs = new LogCapture();
  const logger = createLogger('info', logs);
  const handle = await openTestStore(kind, { logger });
  const apps: FastifyInstance[] = [];
  const urls: string[] = [];
  const sharedMemoryLimiter = new MemoryRateLimiter();
  try {
    for (let front = 0; front < (options.fronts ?? 2); front++) {
      const store = front === 0 ? handle.store : await handle.openAnother({ logger });
      const limiter: RateLimiter =
        store instanceof PostgresStore ? new PostgresRateLimiter(store.pool) : sharedMemoryLimiter;
      const app = await buildApp({
        store,
        config: {
          ratePolicy: policy('100000/10s'),
          authFailurePolicy: policy(options.authFailurePolicy ?? '100000/60s'),
          publicUrl: 'http://localhost',
          trustProxy: options.trustProxy ?? false,
        },
        logger,
        limiter,
        version: 'test',
        dashboard: { secretBox: null, cookieSecure: false, dataDir: null, webhookAllowPrivate: false },
      });
      apps.push(app);
      urls.push(await app.listen({ port: 0, host: '127.0.0.1' }));
    }
  } catch (error) {
    for (const app of apps) await app.close();
    await handle.dispose();
    throw error;
  }
  return {
    kind,
    store: handle.store,
    urls,
    logs,
    async dispose() {
      for (const app of apps) await app.close();
      await handle.dispose();
    },
  };
}

/** A double-submit CSRF pair for the forms shown before sign-in: the same value in cookie and form. */
export function anonymousCsrf(): { cookie: string; field: string } {
  const token = randomBytes(32).toString('base64url');
  return { cookie: `cw_csrf=${token}`, field: token };
}

/** Posts a dashboard form as a browser would (urlencoded, CSRF cookie); never follows redirects. */
export async function postForm(
  url: string,
  fields: Record<string, string>,
): Promise<{ status: number; location: string | null; text: string }> {
  const csrf = anonymousCsrf();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: csrf.cookie },
    body: new URLSearchParams({ csrf_token: csrf.field, ...fields }).toString(),
    redirect: 'manual',
  });
  return { status: response.status, location: response.headers.get('location'), text: await response.text() };
}

/** How many of `statuses` are `status`. */
export function countStatus(statuses: number[], status: number): number {
  return statuses.filter((candidate) => candidate === status).length;
}

/**
 * `size` concurrent requests spread round-robin over `urls`; `send` makes attempt number
 * `attempt` to `url` and resolves with its status. Resolves with the statuses in attempt order.
 */
export function burstOver(
  urls: string[],
  size: number,
  send: (url: string, attempt: number) => Promise<number>,
): Promise<number[]> {
  return Promise.all(
    Array.from({ length: size }, (_, attempt) => send(urls[attempt % urls.length] as string, attempt)),
  );
}

/** A dashboard user of the default account who signs in with `email` and `password`. */
export async function createDashboardUser(store: AnyStore, email: string, password: string): Promise<void> {
  const account = await store.accounts.getOrCreateDefault();
  await store.users.create({ accountId: account.id, email, passwordHash: await hashPassword(password) });
}
