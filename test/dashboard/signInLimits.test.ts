import { afterEach, describe, expect, it } from 'vitest';
import { storeKinds } from '../helpers/stores.js';
import {
  type ApiFronts,
  anonymousCsrf,
  burstOver,
  countStatus as count,
  createDashboardUser,
  postForm,
  startApiFronts,
} from './fronts.js';

/**
 * Issue 12, defect 1: a burst of concurrent sign-ins must not walk through the failure limits.
 * Each attempt reserves its place in the per-address and per-email buckets before the password
 * hash; a refused attempt (429) never reaches the hash. Two API processes share the buckets.
 */

const email = 'owner@example.com';
const rightPassword = 'the right password';
const burstSize = 150;

async function signInAt(url: string, address: string, password: string): Promise<number> {
  return (await postForm(`${url}/sign-in`, { email: address, password })).status;
}

describe.each(storeKinds)('dashboard sign-in limits on the %s store', (kind) => {
  let fronts: ApiFronts | undefined;

  afterEach(async () => {
    await fronts?.dispose();
    fronts = undefined;
  });

  async function signIn(attempt: number, address: string, password: string) {
    const urls = (fronts as ApiFronts).urls;
    return signInAt(urls[attempt % urls.length] as string, address, password);
  }

  it('150 concurrent sign-ins, 149 wrong and one right, limit 5 per email: at most 5 wrong passwords reach the hash, and the right one is refused once the limit is spent', async () => {
    fronts = await startApiFronts(kind);
    await createDashboardUser(fronts.store, email, rightPassword);
    const passwords = Array.from({ length: burstSize }, (_, attempt) =>
      attempt === burstSize - 1 ? rightPassword : `wrong password ${attempt}`,
    );
    const statuses = await Promise.all(
      passwords.map((password, attempt) => signIn(attempt, email, password)),
    );
    const wrong = statuses.slice(0, -1);
    // 401: the hash was computed and did not match; 429: held off before the hash.
    expect(count(wrong, 401) + count(wrong, 429)).toBe(wrong.length);
    expect(count(wrong, 401)).toBeGreaterThanOrEqual(1);
    expect(count(wrong, 401)).toBeLessThanOrEqual(5);
    expect(fronts.logs.lines.filter((line) => line.includes('dashboard sign-in refused'))).toHaveLength(
      count(wrong, 401),
    );
    // The right one got in only with a reserved place, then gave it back.
    expect([303, 429]).toContain(statuses.at(-1));
    // Five failures spent the email's bucket: the right password now waits like any other.
    expect(await signIn(0, email, rightPassword)).toBe(429);
  }, 120_000);

  it('150 concurrent sign-ins for 150 emails from one address: at most 20 reach the hash', async () => {
    fronts = await startApiFronts(kind);
    const statuses = await burstOver(fronts.urls, burstSize, (url, attempt) =>
      signInAt(url, `nobody${attempt}@example.com`, 'some password'),
    );
    expect(count(statuses, 401) + count(statuses, 429)).toBe(burstSize);
    expect(count(statuses, 401)).toBeGreaterThanOrEqual(1);
    expect(count(statuses, 401)).toBeLessThanOrEqual(20);
  }, 120_000);

  it('successful sign-ins give their reservation back: many in a row never spend the limit', async () => {
    fronts = await startApiFronts(kind);
    await createDashboardUser(fronts.store, email, rightPassword);
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 8; attempt++) statuses.push(await signIn(attempt, email, rightPassword));
    expect(statuses).toEqual(Array(8).fill(303));
    // Then the five failures the email allows, and the sixth attempt waits.
    const failures: number[] = [];
    for (let attempt = 0; attempt < 6; attempt++) failures.push(await signIn(attempt, email, 'wrong one'));
    expect(failures).toEqual([401, 401, 401, 401, 401, 429]);
  }, 60_000);

  it('the per-address limit counts an IPv6 client by its /64', async () => {
    fronts = await startApiFronts(kind, { trustProxy: { hops: 1 } });
    const url = fronts.urls[0] as string;
    const statuses: number[] = [];
    for (let host = 1; host <= 21; host++) {
      const csrf = anonymousCsrf();
      const response = await fetch(`${url}/sign-in`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Cookie: csrf.cookie,
          'X-Forwarded-For': `2001:db8:7:7::${host.toString(16)}`,
        },
        body: new URLSearchParams({
          csrf_token: csrf.field,
          email: `nobody${host}@example.com`,
          password: 'some password',
        }).toString(),
        redirect: 'manual',
      });
      await response.arrayBuffer();
      statuses.push(response.status);
    }
    expect(statuses).toEqual([...Array(20).fill(401), 429]);
  }, 60_000);
});
