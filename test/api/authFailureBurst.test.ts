import { afterEach, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/domain/apiKeys.js';
import { type ApiFronts, burstOver, countStatus as count, startApiFronts } from '../dashboard/fronts.js';
import { createAccountFixture } from '../helpers/service.js';
import { storeKinds } from '../helpers/stores.js';

/**
 * Issue 12, defect 1: the per-address limit on failed API-key authentications holds under a burst
 * spread over two API processes. Every request reserves a place in the address's bucket before its
 * key is looked up; a request that authenticates gives the place back.
 */

const burstSize = 150;

async function statusOf(url: string, key: string): Promise<number> {
  const response = await fetch(`${url}/v1/calls`, { headers: { 'X-API-Key': key } });
  await response.arrayBuffer();
  return response.status;
}

describe.each(storeKinds)('API-key failure limit on the %s store', (kind) => {
  let fronts: ApiFronts | undefined;

  afterEach(async () => {
    await fronts?.dispose();
    fronts = undefined;
  });

  it('150 concurrent well-formed wrong keys over two API processes, limit 5: at most 5 reach the key lookup, and a valid key is then held off', async () => {
    fronts = await startApiFronts(kind, { authFailurePolicy: '5/60s' });
    const fixture = await createAccountFixture(fronts.store);
    const urls = fronts.urls;
    const statuses = await burstOver(urls, burstSize, (url) => statusOf(url, generateApiKey()));
    expect(count(statuses, 401) + count(statuses, 429)).toBe(burstSize);
    expect(count(statuses, 401)).toBeGreaterThanOrEqual(1);
    expect(count(statuses, 401)).toBeLessThanOrEqual(5);
    for (const url of urls) expect(await statusOf(url, fixture.key)).toBe(429);
  }, 120_000);

  it('a valid key gives its reservation back, and once known in a process its concurrent requests take nothing from the failure limit', async () => {
    fronts = await startApiFronts(kind, { authFailurePolicy: '2/60s' });
    const fixture = await createAccountFixture(fronts.store);
    const urls = fronts.urls;
    // First use in each process: reserved, then given back.
    for (let round = 0; round < 3; round++) {
      for (const url of urls) expect(await statusOf(url, fixture.key)).toBe(200);
    }
    const valid = await burstOver(urls, 20, (url) => statusOf(url, fixture.key));
    expect(valid).toEqual(Array(20).fill(200));
    const wrong: number[] = [];
    for (let attempt = 0; attempt < 3; attempt++)
      wrong.push(await statusOf(urls[0] as string, 'cw_live_wrong'));
    expect(wrong).toEqual([401, 401, 429]);
    expect(await statusOf(urls[1] as string, fixture.key)).toBe(429);
  });

  it('a key revoked after it authenticated counts as a failure from its next request', async () => {
    fronts = await startApiFronts(kind, { authFailurePolicy: '2/60s' });
    const fixture = await createAccountFixture(fronts.store);
    const url = fronts.urls[0] as string;
    expect(await statusOf(url, fixture.key)).toBe(200);
    await fronts.store.apiKeys.revoke(fixture.accountId, fixture.keyId, new Date().toISOString());
    expect([await statusOf(url, fixture.key), await statusOf(url, fixture.key)]).toEqual([401, 401]);
    expect(await statusOf(url, fixture.key)).toBe(429);
  });

  it('IPv6 clients are limited by their /64: rotating addresses inside it does not buy fresh attempts', async () => {
    fronts = await startApiFronts(kind, { authFailurePolicy: '3/60s', trustProxy: { hops: 1 } });
    const url = fronts.urls[0] as string;
    const from = async (address: string) => {
      const response = await fetch(`${url}/v1/calls`, {
        headers: { 'X-API-Key': generateApiKey(), 'X-Forwarded-For': address },
      });
      await response.arrayBuffer();
      return response.status;
    };
    const statuses: number[] = [];
    for (let host = 1; host <= 5; host++) statuses.push(await from(`2001:db8:1:2::${host}`));
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    // The create operation counts by the same bucket (on PostgreSQL it is one statement of its own).
    const create = await fetch(`${url}/v1/calls/outbound`, {
      method: 'POST',
      headers: {
        'X-API-Key': generateApiKey(),
        'X-Forwarded-For': '2001:db8:1:2::99',
        'Content-Type': 'application/json',
      },
      body: '{}',
    });
    await create.arrayBuffer();
    expect(create.status).toBe(429);
    // Another /64 has its own limit.
    expect(await from('2001:db8:1:3::1')).toBe(401);
  });
});
