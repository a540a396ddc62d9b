import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { postCall } from '../helpers/http.js';
import { createAccountFixture, startTestService, type TestService } from '../helpers/service.js';
import { storeKinds } from '../helpers/stores.js';

/**
 * Issue 12, defect 4: the client address (which the failed-authentication limit counts by) comes
 * from X-Forwarded-For only as far as CALLWRIGHT_TRUST_PROXY trusts the proxies that wrote it. The
 * leftmost entries are whatever the client wrote: they must neither dodge the limit nor aim it.
 *
 * The service is reached from 127.0.0.1, which plays the proxy next to it.
 */

const forged = (n: number) => `198.51.100.${n}`;
const attacker = '203.0.113.9';
const victim = '192.0.2.7';
const cdn = '10.20.30.40';

describe.each(storeKinds)('X-Forwarded-For on the %s store', (kind) => {
  let service: TestService | undefined;

  afterEach(async () => {
    await service?.close();
    service = undefined;
  });

  async function start(trustProxySetting: string | undefined) {
    const env = trustProxySetting === undefined ? {} : { CALLWRIGHT_TRUST_PROXY: trustProxySetting };
    service = await startTestService({
      store: kind,
      authFailurePolicy: '2/60s',
      trustProxy: loadConfig(env).trustProxy,
    });
    const fixture = await createAccountFixture(service.store);
    const body = { agent_id: fixture.agentId, from_number: fixture.number, to_number: '+15550100001' };
    const url = service.url;
    return {
      fixture,
      /** A request as the proxies deliver it, X-Forwarded-For as they leave it. */
      send: (key: string, forwardedFor: string) =>
        postCall(url, key, body, { 'X-Forwarded-For': forwardedFor }),
    };
  }

  /** Two failures with a new forged address each, then a third: is the attacker held off? */
  async function dodgeAttempt(
    send: (key: string, forwardedFor: string) => Promise<{ status: number }>,
    key: string,
    chain: (forgedAddress: string) => string,
  ): Promise<number[]> {
    const statuses: number[] = [];
    for (let i = 1; i <= 3; i++) statuses.push((await send('cw_live_wrong', chain(forged(i)))).status);
    statuses.push((await send(key, chain(forged(4)))).status);
    return statuses;
  }

  it('0 trusted hops (the default): X-Forwarded-For is ignored, the socket address counts', async () => {
    const { fixture, send } = await start(undefined);
    expect(await dodgeAttempt(send, fixture.key, (address) => address)).toEqual([401, 401, 429, 429]);
  });

  it('1 trusted hop: the address the proxy appended counts, not the ones the client wrote', async () => {
    const { fixture, send } = await start('1');
    // The client writes a new forged address each time; the proxy appends the real one.
    expect(await dodgeAttempt(send, fixture.key, (address) => `${address}, ${attacker}`)).toEqual([
      401, 401, 429, 429,
    ]);
    // Forging the victim's address does not lock the victim out.
    for (let i = 0; i < 3; i++) await send('cw_live_wrong', `${victim}, ${attacker}`);
    expect((await send(fixture.key, victim)).status).toBe(200);
  });

  it('2 trusted hops (CDN then load balancer): the address the CDN appended counts', async () => {
    const { fixture, send } = await start('2');
    expect(await dodgeAttempt(send, fixture.key, (address) => `${address}, ${attacker}, ${cdn}`)).toEqual([
      401, 401, 429, 429,
    ]);
    for (let i = 0; i < 3; i++) await send('cw_live_wrong', `${victim}, ${attacker}, ${cdn}`);
    expect((await send(fixture.key, `${victim}, ${cdn}`)).status).toBe(200);
  });

  it('a list of proxy addresses: hops are trusted only while they are listed', async () => {
    const { fixture, send } = await start('127.0.0.1, 10.0.0.0/8');
    expect(await dodgeAttempt(send, fixture.key, (address) => `${address}, ${attacker}, ${cdn}`)).toEqual([
      401, 401, 429, 429,
    ]);
    expect((await send(fixture.key, `${victim}, ${cdn}`)).status).toBe(200);
  });
});

describe('CALLWRIGHT_TRUST_PROXY', () => {
  it('is a hop count, a list of addresses and ranges, or true/false', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ CALLWRIGHT_TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ CALLWRIGHT_TRUST_PROXY: '0' }).trustProxy).toBe(false);
    expect(loadConfig({ CALLWRIGHT_TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ CALLWRIGHT_TRUST_PROXY: '2' }).trustProxy).toEqual({ hops: 2 });
    expect(loadConfig({ CALLWRIGHT_TRUST_PROXY: '10.0.0.1, 10.1.0.0/16,::1' }).trustProxy).toEqual({
      addresses: ['10.0.0.1', '10.1.0.0/16', '::1'],
    });
  });

  it('refuses what is none of them, naming the variable', () => {
    for (const value of ['yes', '10.0.0.300', '10.0.0.0/33', '-1', '1.5', '10.0.0.1,,']) {
      expect(() => loadConfig({ CALLWRIGHT_TRUST_PROXY: value }), value).toThrow(/CALLWRIGHT_TRUST_PROXY/);
    }
  });

  it('true takes the leftmost address and says so in the log at start', async () => {
    const service = await startTestService({
      trustProxy: loadConfig({ CALLWRIGHT_TRUST_PROXY: 'true' }).trustProxy,
    });
    try {
      expect(service.logs.text()).toContain('CALLWRIGHT_TRUST_PROXY=true');
    } finally {
      await service.close();
    }
  });
});
