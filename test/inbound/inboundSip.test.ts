import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { addTrunk } from '../../src/admin/trunks.js';
import type { CallRecord } from '../../src/domain/records.js';
import { loadSecretBox } from '../../src/secrets/secretBox.js';
import { startFullService } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';
import { freeEvenUdpPort, freeUdpPort } from '../sipp/harness.js';

/**
 * Inbound calls over real SIP (issue 40): SIPp, as a carrier sending from the trunk's listed
 * address, calls the service's number and talks to the inbound agent; a callback from the callee
 * of an earlier outbound call is linked to it; an INVITE from an address no trunk lists gets a 403
 * and no dialog, no call, and is counted.
 */

const ourNumber = '+15550009999';
const carrierAddress = '127.0.0.2';
const metricsToken = 'metrics-token-0123456789abcdef';
const scenario = new URL('./uac_inbound_call.xml', import.meta.url).pathname;

let service: Awaited<ReturnType<typeof startFullService>>;
let accountId: string;
let key: string;
let agentId: string;

beforeAll(async () => {
  service = await startFullService({ CALLWRIGHT_METRICS_PORT: '0', CALLWRIGHT_METRICS_TOKEN: metricsToken });
  const account = await service.store.accounts.create({ name: 'inbound', maxLiveCalls: 5 });
  accountId = account.id;
  key = (await createApiKey(service.store, account.id, 'inbound')).key;
  const agent = await createAgent(service.store, account.id, {
    name: 'Front desk',
    prompt: 'You answer the phone.',
    firstMessage: 'Hello, thanks for calling.',
    maxDurationS: 20,
  });
  agentId = agent.id;
  const secretBox = loadSecretBox({ configuredKeyBase64: null, dataDir: service.dataDir });
  await addTrunk(
    service.store,
    secretBox,
    account.id,
    { name: 'carrier', uri: `sip:${carrierAddress}:5099`, inboundSources: [`${carrierAddress}/32`] },
    { allowPrivate: true },
  );
  await addPhoneNumber(service.store, account.id, ourNumber, 'carrier');
  await service.store.inboundCalls.setNumberInbound(account.id, ourNumber, {
    inboundAgentId: agent.id,
    inboundFallback: 'refuse',
    maxLiveCalls: null,
  });
  await service.calls?.inbound.syncRules();
}, 60_000);

afterAll(async () => {
  await service?.dispose();
});

function sipPort(): number {
  const port = service.calls?.ua.boundPort;
  if (port === undefined) throw new Error('the service runs no call worker');
  return port;
}

/** SIPp as the carrier: one inbound call from `carrierAddress` to our number. */
async function carrierCall(
  options: { from?: string; to?: string; scenario?: string; extra?: string[] } = {},
): Promise<{ code: number | null; output: string }> {
  const from = options.from ?? carrierAddress;
  const port = await freeUdpPort();
  const mediaPort = await freeEvenUdpPort();
  const child = spawn(
    'sipp',
    [
      ...['-sf', options.scenario ?? scenario, '-s', options.to ?? ourNumber, `127.0.0.1:${sipPort()}`],
      ...['-i', from, '-p', String(port), '-mi', from, '-mp', String(mediaPort)],
      ...(options.extra ?? []),
      ...['-m', '1', '-timeout', '20s', '-timeout_error', '-nostdin', '-rtp_echo'],
    ],
    { cwd: tmpdir(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output: output.slice(-2_000) });
    }),
  );
}

async function latestInbound(): Promise<CallRecord> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const [call] = await service.store.inboundCalls.list(accountId, { direction: 'inbound', limit: 1 });
    if (call && ['completed', 'canceled', 'failed'].includes(call.status)) return call;
    if (Date.now() > deadline) throw new Error(`no ended inbound call (${call?.status})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('inbound calls from a trunk', () => {
  it('answers a call from the trunk address with the inbound agent, recorded as an inbound call', async () => {
    const run = await carrierCall();
    expect(run.code, run.output).toBe(0);
    const call = await latestInbound();
    expect(call).toMatchObject({
      direction: 'inbound',
      callbackOf: null,
      agentId,
      fromNumber: '+15550100001',
      toNumber: ourNumber,
      status: 'completed',
      endReason: 'callee_hangup',
    });
    expect(call.transcript.filter((line) => line.role === 'agent').length).toBeGreaterThan(0);
    expect(call.recordingPath).not.toBeNull();
  }, 60_000);

  it('answers over TCP as over UDP', async () => {
    const run = await carrierCall({ extra: ['-t', 't1'] });
    expect(run.code, run.output).toBe(0);
    const call = await latestInbound();
    expect(call).toMatchObject({ direction: 'inbound', status: 'completed', endReason: 'callee_hangup' });
  }, 60_000);

  it('links a callback to the outbound call that reached the caller from that number', async () => {
    const placed = await postCall(service.url, key, {
      agent_id: agentId,
      from_number: ourNumber,
      to_number: '+15550100001',
      variables: {},
    });
    expect(placed.status).toBe(200);
    const earlierId = (placed.body as { call_id: string }).call_id;
    // The outbound call goes through the trunk to nobody (5099 is closed): it only has to exist.
    const run = await carrierCall();
    expect(run.code, run.output).toBe(0);
    const call = await latestInbound();
    expect(call.callbackOf).toBe(earlierId);
    expect(call.context).toContain('calling back');
  }, 60_000);

  it("challenges a trunk's INVITEs with digest when it asks to, and answers the right credentials only", async () => {
    const secretBox = loadSecretBox({ configuredKeyBase64: null, dataDir: service.dataDir });
    const secureNumber = '+15550008888';
    await addTrunk(
      service.store,
      secretBox,
      accountId,
      {
        name: 'secure',
        uri: 'sip:127.0.0.4:5099',
        username: 'carrier-user',
        password: 'carrier-secret-40',
        inboundSources: ['127.0.0.4'],
        inboundChallenge: true,
      },
      { allowPrivate: true },
    );
    await addPhoneNumber(service.store, accountId, secureNumber, 'secure');
    await service.store.inboundCalls.setNumberInbound(accountId, secureNumber, {
      inboundAgentId: agentId,
      inboundFallback: 'refuse',
      maxLiveCalls: null,
    });
    await service.calls?.inbound.syncRules();
    const digest = new URL('./uac_inbound_digest.xml', import.meta.url).pathname;
    const wrong = await carrierCall({
      from: '127.0.0.4',
      to: secureNumber,
      scenario: digest,
      extra: ['-au', 'carrier-user', '-ap', 'not-the-secret', '-timeout', '6s'],
    });
    // The INVITE with the wrong answer is challenged again (401), which this scenario does not expect.
    expect(wrong.code).not.toBe(0);
    // Without the challenge answered nothing was written.
    expect(
      (await service.store.inboundCalls.list(accountId, { direction: 'inbound', limit: 10 })).filter(
        (call) => call.toNumber === secureNumber,
      ),
    ).toEqual([]);
    const right = await carrierCall({
      from: '127.0.0.4',
      to: secureNumber,
      scenario: digest,
      extra: ['-au', 'carrier-user', '-ap', 'carrier-secret-40'],
    });
    expect(right.code, right.output).toBe(0);
    const call = await latestInbound();
    expect(call).toMatchObject({ toNumber: secureNumber, status: 'completed', direction: 'inbound' });
  }, 60_000);

  it('refuses an INVITE from an address no trunk lists: 403, no dialog, no call, counted', async () => {
    const before = await service.store.inboundCalls.list(accountId, { limit: 100 });
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.3', resolve));
    const local = socket.address();
    const invite = [
      `INVITE sip:${ourNumber}@127.0.0.1:${sipPort()} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.3:${local.port};branch=z9hG4bK-outsider-1`,
      `From: <sip:+15550100002@127.0.0.3>;tag=outsider`,
      `To: <sip:${ourNumber}@127.0.0.1>`,
      'Call-ID: outsider-call-1',
      'CSeq: 1 INVITE',
      `Contact: <sip:+15550100002@127.0.0.3:${local.port}>`,
      'Max-Forwards: 70',
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
    // The transaction layer may say 100 Trying first; the final response is what counts.
    const response = new Promise<string>((resolve) => {
      const onMessage = (data: Buffer) => {
        if (/^SIP\/2\.0 1\d\d /.test(data.toString())) return;
        socket.off('message', onMessage);
        resolve(data.toString());
      };
      socket.on('message', onMessage);
    });
    socket.send(invite, sipPort(), '127.0.0.1');
    const text = await response;
    expect(text.split('\r\n')[0]).toBe('SIP/2.0 403 Source Not Allowed');
    expect(text).not.toMatch(/^Contact:/m);
    // A BYE for what would have been the dialog finds none.
    const bye = new Promise<string>((resolve) => socket.once('message', (data) => resolve(data.toString())));
    const toTag = /^To:.*;tag=([^;\r\n]+)/m.exec(text)?.[1] ?? '';
    socket.send(
      [
        `BYE sip:${ourNumber}@127.0.0.1:${sipPort()} SIP/2.0`,
        `Via: SIP/2.0/UDP 127.0.0.3:${local.port};branch=z9hG4bK-outsider-2`,
        'From: <sip:+15550100002@127.0.0.3>;tag=outsider',
        `To: <sip:${ourNumber}@127.0.0.1>;tag=${toTag}`,
        'Call-ID: outsider-call-1',
        'CSeq: 2 BYE',
        'Max-Forwards: 70',
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n'),
      sipPort(),
      '127.0.0.1',
    );
    expect((await bye).split('\r\n')[0]).toMatch(/^SIP\/2\.0 481 /);
    socket.close();
    const after = await service.store.inboundCalls.list(accountId, { limit: 100 });
    expect(after.length).toBe(before.length);
    const metrics = await fetch(`${service.metricsUrl}/metrics`, {
      headers: { Authorization: `Bearer ${metricsToken}` },
    }).then((result) => result.text());
    expect(metrics).toMatch(/callwright_sip_inbound_refused_total\{reason="unknown_source"\} 1/);
  });
});
