import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrunkInput } from '../../src/admin/trunks.js';
import { callThroughTrunk, startFullService } from '../helpers/fullService.js';
import { type RunningKamailio, startKamailio } from '../helpers/kamailio.js';
import { testCertificates } from '../helpers/testCertificates.js';
import { freeUdpPort, startSippCallee } from '../sipp/harness.js';

/**
 * The service dialling a real carrier proxy (kamailio) over TCP and over TLS, with the proxy's
 * digest challenge answered, the dialog record-routed through the proxy, and the callee's BYE
 * (SIPp over UDP behind the proxy) reaching callwright back over the transport it dialled on.
 */

const username = 'acme';
const password = 'trunk-secret-1';
let service: Awaited<ReturnType<typeof startFullService>>;
let kamailio: RunningKamailio;
let calleePort: number;

beforeAll(async () => {
  calleePort = await freeUdpPort();
  [service, kamailio] = await Promise.all([
    startFullService({ CALLWRIGHT_TRUNK_ALLOW_PRIVATE: 'true' }),
    startKamailio({ calleePort, username, password, lifetimeMs: 120_000 }),
  ]);
}, 60_000);

afterAll(async () => {
  await kamailio?.stop();
  await service?.dispose();
});

/** SIPp as the callee behind the proxy; `exited` says how its scenario went. */
function startCallee() {
  return startSippCallee(new URL('uas_proxied_hangup.xml', import.meta.url).pathname, calleePort, 25);
}

/** One call through the proxy to the SIPp callee, which hangs up; the proxy's request lines of it. */
async function proxiedCall(trunk: Omit<TrunkInput, 'name'>): Promise<string[]> {
  const before = kamailio.requests().length;
  const callee = await startCallee();
  const call = await callThroughTrunk(service, trunk);
  const sipp = await callee.exited;
  expect(sipp.code, sipp.output).toBe(0);
  expect(call).toMatchObject({ status: 'completed', endReason: 'callee_hangup' });
  return kamailio.requests().slice(before);
}

describe('kamailio as the carrier: TCP and TLS trunks with digest', () => {
  it('dials over TLS checked against the trunk CA; the callee BYE comes back over TLS', async () => {
    const seen = await proxiedCall({
      uri: `sips:127.0.0.1:${kamailio.tlsPort}`,
      username,
      password,
      tlsCaPem: testCertificates().caPem,
      // SIPp (the callee) has no SRTP, which a TLS trunk otherwise requires (baresipSrtp.test.ts).
      srtp: 'off',
    });
    // Challenged once (407), then authenticated; every request from us arrived over TLS.
    expect(seen.filter((line) => line === 'REQ INVITE tls')).toHaveLength(2);
    expect(seen).toContain('REQ ACK tls');
    expect(seen).toContain('REQ BYE udp');
    expect(seen.filter((line) => / (udp|tcp)$/.test(line) && !line.startsWith('REQ BYE'))).toEqual([]);
  }, 45_000);

  it('dials over TCP with ;transport=tcp; nothing of the call travels over UDP on our side', async () => {
    const seen = await proxiedCall({
      uri: `sip:127.0.0.1:${kamailio.port};transport=tcp`,
      username,
      password,
    });
    expect(seen.filter((line) => line === 'REQ INVITE tcp')).toHaveLength(2);
    expect(seen).toContain('REQ ACK tcp');
    expect(seen.filter((line) => line.endsWith(' udp') && !line.startsWith('REQ BYE'))).toEqual([]);
  }, 45_000);

  it('sends the call through an outbound proxy over TCP while the Request-URI names the trunk', async () => {
    const seen = await proxiedCall({
      uri: `sip:127.0.0.1:${calleePort}`,
      outboundProxy: `sip:127.0.0.1:${kamailio.port};transport=tcp`,
      username,
      password,
    });
    expect(seen.filter((line) => line === 'REQ INVITE tcp')).toHaveLength(2);
    expect(seen).toContain('REQ ACK tcp');
  }, 45_000);

  it('refuses a TLS proxy whose certificate no trusted CA signed: the call fails, nothing is sent in clear', async () => {
    const before = kamailio.requests().length;
    const call = await callThroughTrunk(service, {
      uri: `sips:127.0.0.1:${kamailio.tlsPort}`,
      username,
      password,
    });
    expect(call.status).toBe('failed');
    expect(kamailio.requests().slice(before)).toEqual([]);
  }, 45_000);
});
