import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { addTrunk } from '../../src/admin/trunks.js';
import { inviteForCall } from '../../src/calls/callRoute.js';
import { orderSrv } from '../../src/calls/trunkServers.js';
import type { CallRecord } from '../../src/domain/records.js';
import { SecretBox } from '../../src/secrets/secretBox.js';
import { startDnsServer } from '../helpers/dnsServer.js';
import { openTestStore, type TestStoreHandle } from '../helpers/stores.js';

/**
 * A trunk named by a bare domain dials the servers its DNS SRV records list (RFC 3263 §4.2), in
 * RFC 2782 order, each vetted like the name itself; the INVITE's failover across them is tested
 * in src/telephony/sip/inviteRetargeting.test.ts. DNS here is a real server on loopback.
 */

const secretBox = new SecretBox(randomBytes(32));
let dns: Awaited<ReturnType<typeof startDnsServer>>;
let handle: TestStoreHandle;

beforeAll(async () => {
  dns = await startDnsServer({
    srv: {
      '_sip._udp.carrier.test': [
        { priority: 20, weight: 0, port: 5090, target: 'backup.carrier.test' },
        { priority: 10, weight: 100, port: 5070, target: 'sbc1.carrier.test' },
        { priority: 10, weight: 0, port: 5080, target: 'internal.carrier.test' },
      ],
      '_sips._tcp.carrier.test': [{ priority: 10, weight: 1, port: 5071, target: 'tls.carrier.test' }],
      '_sip._udp.closed.test': [{ priority: 0, weight: 0, port: 0, target: '.' }],
      '_sip._udp.pool.naptr.test': [{ priority: 1, weight: 1, port: 5111, target: 'edge.naptr.test' }],
      '_sip._udp.naptr.test': [{ priority: 1, weight: 1, port: 5999, target: 'default.naptr.test' }],
      '_sips._tcp.secure.naptr.test': [{ priority: 1, weight: 1, port: 5161, target: 'edge.naptr.test' }],
    },
    naptr: {
      // A transport the trunk did not choose comes first by order: it must not be followed.
      'naptr.test': [
        {
          order: 10,
          preference: 10,
          flags: 's',
          services: 'SIPS+D2T',
          regexp: '',
          replacement: 'secure.naptr.test',
        },
        {
          order: 20,
          preference: 10,
          flags: 'S',
          services: 'SIP+D2U',
          regexp: '',
          replacement: '_sip._udp.pool.naptr.test',
        },
      ],
    },
    a: {
      'sbc1.carrier.test': ['93.184.215.10'],
      'backup.carrier.test': ['93.184.215.20'],
      'internal.carrier.test': ['10.0.0.5'],
      'tls.carrier.test': ['93.184.215.30'],
      'carrier.test': ['93.184.215.99'],
      'plain.test': ['93.184.215.40'],
      'closed.test': ['93.184.215.50'],
      'edge.naptr.test': ['93.184.215.60'],
      'default.naptr.test': ['93.184.215.61'],
      'naptr.test': ['93.184.215.62'],
    },
  });
  handle = await openTestStore('sqlite');
}, 30_000);

afterAll(async () => {
  await dns?.close();
  await handle?.dispose();
});

let seq = 0;
async function routeFor(uri: string) {
  seq++;
  const store = handle.store;
  const account = await store.accounts.create({ name: `srv ${seq}` });
  await addTrunk(
    store,
    secretBox,
    account.id,
    { name: 'carrier', uri, srtp: 'off' },
    { allowPrivate: false },
  );
  const from = `+1555000${3000 + seq}`;
  await addPhoneNumber(store, account.id, from, 'carrier');
  const call = {
    accountId: account.id,
    fromNumber: from,
    toNumber: '+14155550123',
    variables: {},
  } as unknown as CallRecord;
  return inviteForCall(store, call, {
    sandbox: null,
    secretBox,
    ringTimeoutMs: 5_000,
    trunkAllowPrivate: false,
    lookup: dns.lookup,
    dns: dns.dns,
  });
}

describe('trunk servers from DNS SRV', () => {
  it('dials the SRV targets by priority, skipping one that resolves to an internal address', async () => {
    const route = await routeFor('sip:carrier.test');
    expect(route.inviteOptions.destination).toEqual({ host: '93.184.215.10', port: 5070, transport: 'udp' });
    expect(route.inviteOptions.alternateDestinations).toEqual([
      { host: '93.184.215.20', port: 5090, transport: 'udp' },
    ]);
    // The Request-URI keeps the domain; the internal target was never used.
    expect(route.inviteOptions.requestUri).toBe('sip:+14155550123@carrier.test');
    expect(dns.queries).toContain('SRV _sip._udp.carrier.test');
  });

  it('asks for _sips._tcp on a TLS trunk and checks the certificate against the domain', async () => {
    const route = await routeFor('sips:carrier.test');
    expect(route.inviteOptions.destination).toMatchObject({
      host: '93.184.215.30',
      port: 5071,
      transport: 'tls',
      tls: { serverName: 'carrier.test' },
    });
    expect(dns.queries).toContain('SRV _sips._tcp.carrier.test');
  });

  it('uses the name itself on the default port without SRV records, and no SRV with an explicit port', async () => {
    const plain = await routeFor('sip:plain.test');
    expect(plain.inviteOptions.destination).toEqual({ host: '93.184.215.40', port: 5060, transport: 'udp' });
    expect(plain.inviteOptions.alternateDestinations).toBeUndefined();
    const before = dns.queries.length;
    const explicit = await routeFor('sip:carrier.test:5099');
    expect(explicit.inviteOptions.destination).toEqual({
      host: '93.184.215.99',
      port: 5099,
      transport: 'udp',
    });
    expect(dns.queries.slice(before).some((q) => q.startsWith('SRV'))).toBe(false);
  });

  it('follows the NAPTR record of the trunk’s own transport to its SRV name, never another transport', async () => {
    const route = await routeFor('sip:naptr.test');
    expect(route.inviteOptions.destination).toEqual({ host: '93.184.215.60', port: 5111, transport: 'udp' });
    expect(dns.queries).toContain('NAPTR naptr.test');
    expect(dns.queries).toContain('SRV _sip._udp.pool.naptr.test');
    expect(dns.queries).not.toContain('SRV secure.naptr.test');
  });

  it('a domain whose SRV says "." offers no SIP: the call fails instead of guessing', async () => {
    await expect(routeFor('sip:closed.test')).rejects.toMatchObject({ code: 'unavailable' });
  });

  it('orders by priority, then by weight at random (RFC 2782)', () => {
    const records = [
      { priority: 2, weight: 0, port: 1, name: 'c' },
      { priority: 1, weight: 90, port: 1, name: 'a' },
      { priority: 1, weight: 10, port: 1, name: 'b' },
    ];
    expect(orderSrv(records, () => 0).map((r) => r.name)).toEqual(['b', 'a', 'c']);
    expect(orderSrv(records, (below) => below - 1).map((r) => r.name)).toEqual(['a', 'b', 'c']);
    let aFirst = 0;
    for (let i = 0; i < 400; i++) if (orderSrv(records)[0]!.name === 'a') aFirst++;
    expect(aFirst).toBeGreaterThan(300);
    expect(aFirst).toBeLessThan(400);
  });
});
