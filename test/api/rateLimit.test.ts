import { afterEach, describe, expect, it } from 'vitest';
import { postCall, request } from '../helpers/http.js';
import { createAccountFixture, startTestService, type TestService } from '../helpers/service.js';
import { sqlOn, storeKinds } from '../helpers/stores.js';

/** DESIGN §5: per-account token bucket, IETF headers, Retry-After, per-address auth failures. */

describe.each(storeKinds)('on the %s store', (kind) => {
  let service: TestService | undefined;

  afterEach(async () => {
    await service?.close();
    service = undefined;
  });

  describe('rate limits (429 rate_limited)', () => {
    it('limits per account, with RateLimit headers on every response and Retry-After on 429', async () => {
      service = await startTestService({ store: kind, ratePolicy: '5/60s' });
      const fixture = await createAccountFixture(service.store);
      const other = await createAccountFixture(service.store, { name: 'other' });
      const body = { agent_id: fixture.agentId, from_number: fixture.number, to_number: '+15550100001' };
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const result = await postCall(service.url, fixture.key, body);
        statuses.push(result.status);
        expect(result.headers['ratelimit-policy']).toBe('"account";q=5;w=60');
        expect(result.headers.ratelimit).toBe(`"account";r=${4 - i};t=${Math.ceil(((i + 1) * 60) / 5)}`);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200]);
      const limited = await postCall(service.url, fixture.key, body);
      expect(limited.status).toBe(429);
      expect(limited.body).toEqual({ error: { code: 'rate_limited', message: expect.any(String) } });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(12);
      // Reads count against the same bucket, and another account is unaffected.
      const read = await request(`${service.url}/v1/calls`, { headers: { 'X-API-Key': fixture.key } });
      expect(read.status).toBe(429);
      const otherBody = { agent_id: other.agentId, from_number: other.number, to_number: '+15550100001' };
      expect((await postCall(service.url, other.key, otherBody)).status).toBe(200);
    });

    it('2 before 3: a rate-limited request with a bad body gets 429', async () => {
      service = await startTestService({ store: kind, ratePolicy: '1/60s' });
      const fixture = await createAccountFixture(service.store);
      await postCall(service.url, fixture.key, 'not json');
      expect((await postCall(service.url, fixture.key, 'not json')).status).toBe(429);
    });

    it('uses an account-specific policy when the account has one', async () => {
      service = await startTestService({ store: kind, ratePolicy: '1/60s' });
      const fixture = await createAccountFixture(service.store);
      await sqlOn(
        service.store,
        'UPDATE accounts SET rate_limit_requests = 3, rate_limit_window_s = 30 WHERE id = ?',
        [fixture.accountId],
      );
      const body = { agent_id: fixture.agentId, from_number: fixture.number, to_number: '+15550100001' };
      const results = [];
      for (let i = 0; i < 4; i++) results.push(await postCall(service.url, fixture.key, body));
      // A token every 10 s: four requests fit in that however slow the machine (a 1 s window
      // refilled one before the fourth on a loaded run).
      expect(results.map((result) => result.status)).toEqual([200, 200, 200, 429]);
      expect(results[0]?.headers['ratelimit-policy']).toBe('"account";q=3;w=30');
    });

    it('holds off an address after too many failed authentications, even with a valid key', async () => {
      service = await startTestService({ store: kind, authFailurePolicy: '3/60s' });
      const fixture = await createAccountFixture(service.store);
      const body = { agent_id: fixture.agentId, from_number: fixture.number, to_number: '+15550100001' };
      for (let i = 0; i < 3; i++) {
        const failed = await postCall(service.url, 'cw_live_wrong', body);
        expect(failed.status).toBe(401);
        expect(failed.headers['ratelimit-policy']).toBe('"auth_failures";q=3;w=60');
      }
      const blocked = await postCall(service.url, fixture.key, body);
      expect(blocked.status).toBe(429);
      expect((blocked.body as { error: { code: string } }).error.code).toBe('rate_limited');
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    });
  });
});
