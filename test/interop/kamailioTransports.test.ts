import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { addTrunk, type TrunkInput } from '../../src/admin/trunks.js';
import { loadSecretBox } from '../../src/secrets/secretBox.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';
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

let accountSeq = 0;

/** An account whose caller ID leaves through a trunk to the proxy; places one call through it. */
async function callThrough(trunk: Omit<TrunkInput, 'name'>) {
  accountSeq++;
  const account = await service.store.accounts.create({ name: `carrier ${accountSeq}` });
  const secretBox = loadSecretBox({ configuredKeyBase64: null, dataDir: service.dataDir });
  await addTrunk(service.store, secretBox, account.id, { name: 'carrier', ...trunk }, { allowPrivate: true });
  const from = `+1555000${1000 + accountSeq}`;
  await addPhoneNumber(service.store, account.id, from, 'carrier');
  const { key } = await createApiKey(service.store, account.id, 'interop');
  const agent = await createAgent(service.store, account.id, {
    name: 'Interop',
    prompt: 'You check a line.',
    firstMessage: 'Hello, this is a line check.',
    maxDurationS: 20,
  });
  const placed = await postCall(service.url, key, {
    agent_id: agent.id,
    from_number: from,
    to_number: '+14155550123',
  });
  expect(placed.status).toBe(200);
  return waitForTerminal(service, (placed.body as { call_id: string }).call_id, 30_000);
}

/** One call through the proxy to the SIPp callee, which hangs up; the proxy's request lines of it. */
async function proxiedCall(trunk: Omit<TrunkInput, 'name'>): Promise<string[]> {
  const before = kamailio.requests().length;
  const callee = await startCallee();
  const call = await callThrough(trunk);
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
    const call = await callThrough({ uri: `sips:127.0.0.1:${kamailio.tlsPort}`, username, password });
    expect(call.status).toBe('failed');
    expect(kamailio.requests().slice(before)).toEqual([]);
  }, 45_000);
});
