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

describe('registration through DNS SRV', () => {
  it('sends REGISTER to the SRV target and stores the registered state', async () => {
    const registrar = await bindSocket('127.0.0.1');
    const requestUris: string[] = [];
    registrar.on('message', (data, remote) => {
      const parsed = parseSipMessage(data);
      if (!parsed.ok || parsed.message.kind !== 'request') return;
      const request = parsed.message;
      requestUris.push(request.requestUri);
      const reply = [
        'SIP/2.0 200 OK',
        ...headerValues(request, 'Via').map((via) => `Via: ${via}`),
        `From: ${headerValue(request, 'From')}`,
        `To: ${headerValue(request, 'To')};tag=reg`,
        `Call-ID: ${request.callId}`,
        `CSeq: ${request.cseq.seq} REGISTER`,
        `Contact: ${headerValue(request, 'Contact')};expires=300`,
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n');
      registrar.send(reply, remote.port, remote.address);
    });
    const dns = await startDnsServer({
      srv: {
        '_sip._udp.reg.test': [
          { priority: 1, weight: 1, port: registrar.address().port, target: 'edge.reg.test' },
        ],
      },
      a: { 'edge.reg.test': ['127.0.0.1'], 'reg.test': ['127.0.0.9'] },
    });
    const store = handle.store;
    const secretBox = new SecretBox(randomBytes(32));
    const account = await store.accounts.create({ name: 'reg' });
    const trunk = await addTrunk(
      store,
      secretBox,
      account.id,
      { name: 'pbx', uri: 'sip:reg.test', username: '1001', password: 'secret', register: true },
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
    });
    try {
      registrations.start();
      await waitFor(async () => {
        const stored = await store.trunks.get(account.id, trunk.id);
        return stored?.registration?.includes('"registered"') ?? false;
      }, 10_000);
      expect(requestUris[0]).toBe('sip:reg.test');
      expect(dns.queries).toContain('SRV _sip._udp.reg.test');
    } finally {
      await registrations.stop();
      await dns.close();
    }
  });
});
