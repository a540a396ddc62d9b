import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addTrunk } from '../../src/admin/trunks.js';
import { TrunkRegistrations } from '../../src/calls/trunkRegistrations.js';
import { SecretBox } from '../../src/secrets/secretBox.js';
import { headerValue, headerValues, parseSipMessage } from '../../src/telephony/sip/message.js';
import { startDnsServer } from '../helpers/dnsServer.js';
import { waitFor } from '../helpers/processes.js';
import { sipTestBench } from '../helpers/sipPeers.js';
import { openTestStore, type TestStoreHandle } from '../helpers/stores.js';

/**
 * A registering trunk named by a bare domain registers at the server its DNS SRV records name
 * (as its calls dial theirs), with the domain kept in the Request-URI and the address of record.
 * DNS and the registrar are real servers on loopback.
 */

const { bindSocket, startUserAgent } = sipTestBench();
let handle: TestStoreHandle;

beforeAll(async () => {
  handle = await openTestStore('sqlite');
});
afterAll(async () => {
  await handle?.dispose();
});

/**
 * A registrar on loopback answering every REGISTER with `status` (200 grants `expiresS`); records
 * which server each REGISTER reached (`arrivals`) and its Request-URI (`requestUris`).
 */
async function registrarAnswering(
  status: number,
  arrivals: string[],
  name: string,
  expiresS = 300,
  requestUris: string[] = [],
) {
  const registrar = await bindSocket('127.0.0.1');
  registrar.on('message', (data, remote) => {
    const parsed = parseSipMessage(data);
    if (!parsed.ok || parsed.message.kind !== 'request') return;
    const request = parsed.message;
    arrivals.push(name);
    requestUris.push(request.requestUri);
    const reply = [
      status === 200 ? 'SIP/2.0 200 OK' : `SIP/2.0 ${status} Service Unavailable`,
      ...headerValues(request, 'Via').map((via) => `Via: ${via}`),
      `From: ${headerValue(request, 'From')}`,
      `To: ${headerValue(request, 'To')};tag=reg`,
      `Call-ID: ${request.callId}`,
      `CSeq: ${request.cseq.seq} REGISTER`,
      ...(status === 200 ? [`Contact: ${headerValue(request, 'Contact')};expires=${expiresS}`] : []),
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
    registrar.send(reply, remote.port, remote.address);
  });
  return registrar.address().port;
}

/**
 * Registers a trunk named by the bare `domain` (resolved by `dns`) until the store says it is
 * registered; then `check` runs, and everything stops.
 */
async function registerTrunkAt(
  dns: Awaited<ReturnType<typeof startDnsServer>>,
  domain: string,
  check: () => Promise<void>,
): Promise<void> {
  const store = handle.store;
  const secretBox = new SecretBox(randomBytes(32));
  const account = await store.accounts.create({ name: domain });
  const trunk = await addTrunk(
    store,
    secretBox,
    account.id,
    { name: 'pbx', uri: `sip:${domain}`, username: '1001', password: 'secret', register: true },
    { allowPrivate: true },
  );
  const registrations = new TrunkRegistrations({
    store,
    ua: await startUserAgent(),
    secretBox,
    logger: pino({ level: 'silent' }),
    trunkAllowPrivate: true,
    lookup: dns.lookup,
    dns: dns.dns,
    // Below the 60 s floor, so a refresh of a short grant comes within the test.
    limits: { minRefreshMs: 500 },
  });
  try {
    registrations.start();
    await waitFor(async () => {
      const stored = await store.trunks.get(account.id, trunk.id);
      return stored?.registration?.includes('"registered"') ?? false;
    }, 10_000);
    await check();
  } finally {
    await registrations.stop();
    await dns.close();
  }
}

describe('registration through DNS SRV', () => {
  it('sends REGISTER to the SRV target and stores the registered state', async () => {
    const requestUris: string[] = [];
    const registrar = await registrarAnswering(200, [], 'registrar', 300, requestUris);
    const dns = await startDnsServer({
      srv: { '_sip._udp.reg.test': [{ priority: 1, weight: 1, port: registrar, target: 'edge.reg.test' }] },
      a: { 'edge.reg.test': ['127.0.0.1'], 'reg.test': ['127.0.0.9'] },
    });
    await registerTrunkAt(dns, 'reg.test', async () => {
      expect(requestUris[0]).toBe('sip:reg.test');
      expect(dns.queries).toContain('SRV _sip._udp.reg.test');
    });
  });

  it('fails over across the SRV targets: past a silent server and a 503 to the one that registers, which keeps the refreshes', async () => {
    const arrivals: string[] = [];
    const silent = await bindSocket('127.0.0.1');
    silent.on('message', () => arrivals.push('silent'));
    const overloaded = await registrarAnswering(503, arrivals, 'overloaded');
    // A short grant, so the refresh (at half of it) comes within the test.
    const working = await registrarAnswering(200, arrivals, 'working', 2);
    const dns = await startDnsServer({
      srv: {
        '_sip._udp.fail.test': [
          { priority: 1, weight: 1, port: silent.address().port, target: 'a.fail.test' },
          { priority: 2, weight: 1, port: overloaded, target: 'b.fail.test' },
          { priority: 3, weight: 1, port: working, target: 'c.fail.test' },
        ],
      },
      a: { 'a.fail.test': ['127.0.0.1'], 'b.fail.test': ['127.0.0.1'], 'c.fail.test': ['127.0.0.1'] },
    });
    await registerTrunkAt(dns, 'fail.test', async () => {
      // The refresh, a second later, goes to the server that registered us, not back to the first.
      await waitFor(async () => arrivals.filter((name) => name === 'working').length >= 2, 5_000);
      const order = arrivals.filter((name, index) => name !== arrivals[index - 1]);
      expect(order).toEqual(['silent', 'overloaded', 'working']);
    });
  });
});
