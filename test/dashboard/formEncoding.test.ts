import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { hashPassword } from '../../src/dashboard/passwords.js';
import { parseRatePolicy, type RatePolicy } from '../../src/domain/rateLimit.js';
import { PostgresRateLimiter } from '../../src/limits/postgresRateLimiter.js';
import { MemoryRateLimiter } from '../../src/limits/rateLimiter.js';
import { createLogger } from '../../src/logger.js';
import { PostgresStore } from '../../src/store/postgres/postgresStore.js';
import { openTestStore, storeKinds, type TestStoreHandle } from '../helpers/stores.js';

/**
 * Issue 12, defect 9 in the dashboard: a form whose bytes are not UTF-8 (raw, or percent-encoded)
 * is a 400, not a field with U+FFFD in it.
 */

function policy(text: string): RatePolicy {
  return parseRatePolicy(text) as RatePolicy;
}

describe.each(storeKinds)('dashboard forms on the %s store', (kind) => {
  let handle: TestStoreHandle;
  let app: FastifyInstance;
  let url: string;

  beforeAll(async () => {
    handle = await openTestStore(kind);
    const store = handle.store;
    app = await buildApp({
      store,
      config: {
        ratePolicy: policy('100000/10s'),
        authFailurePolicy: policy('100000/60s'),
        publicUrl: 'http://localhost',
        trustProxy: false,
      },
      logger: createLogger('silent'),
      limiter: store instanceof PostgresStore ? new PostgresRateLimiter(store.pool) : new MemoryRateLimiter(),
      version: 'test',
      dashboard: { secretBox: null, cookieSecure: false, dataDir: null, webhookAllowPrivate: false },
    });
    url = await app.listen({ port: 0, host: '127.0.0.1' });
    const account = await store.accounts.getOrCreateDefault();
    await store.users.create({
      accountId: account.id,
      email: 'owner@example.com',
      passwordHash: await hashPassword('a long enough password'),
    });
  });

  afterAll(async () => {
    await app.close();
    await handle.dispose();
  });

  /** POSTs /sign-in with the CSRF token of a fresh sign-in page and `email` as the bytes given. */
  async function signInWithEmailBytes(email: Buffer): Promise<{ status: number; text: string }> {
    const page = await fetch(`${url}/sign-in`);
    const cookie = (page.headers.getSetCookie()[0] ?? '').split(';', 1)[0] ?? '';
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
    const body = Buffer.concat([
      Buffer.from(`csrf_token=${encodeURIComponent(csrf)}&password=wrong&email=`),
      email,
    ]);
    const response = await fetch(`${url}/sign-in`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie },
      body,
      redirect: 'manual',
    });
    return { status: response.status, text: await response.text() };
  }

  it('refuses raw bytes that are not UTF-8 with 400', async () => {
    const result = await signInWithEmailBytes(Buffer.from([0x6f, 0xc3, 0x28, 0x40, 0x78]));
    expect(result.status).toBe(400);
    expect(result.text).toContain('UTF-8');
  });

  it('refuses percent-encoded bytes that are not UTF-8 with 400', async () => {
    const result = await signInWithEmailBytes(Buffer.from('o%C3%28%40example.com'));
    expect(result.status).toBe(400);
  });

  it('still reads UTF-8 fields, + as a space and a stray %', async () => {
    // A wrong password for a well-formed form: the form was read, the sign-in refused.
    const result = await signInWithEmailBytes(Buffer.from('caf%C3%A9+%ZZ%40example.com'));
    expect(result.status).toBe(401);
    expect(result.text).toContain('café %zz@example.com');
  });
});
