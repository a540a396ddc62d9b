import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { CallOutcome, InviteOptions, OutgoingCall } from '../../src/telephony/sip/index.js';
import { SipUserAgent } from '../../src/telephony/sip/index.js';

/**
 * Interoperability: our UAC against SIPp (Debian package `sip-tester`) acting as the callee, on
 * loopback. Each scenario's verdict is SIPp's exit code (0 = every step matched), and our own
 * reported outcome must agree.
 */

const scenarioDirectory = fileURLToPath(new URL('.', import.meta.url));
const logger = pino({ level: 'silent' });
const sippRunLimitMs = 25_000;

const offer = [
  'v=0',
  'o=callwright 1 1 IN IP4 127.0.0.1',
  's=callwright',
  'c=IN IP4 127.0.0.1',
  't=0 0',
  'm=audio 41000 RTP/AVP 0 8 101',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:8 PCMA/8000',
  'a=rtpmap:101 telephone-event/8000',
  'a=fmtp:101 0-16',
  'a=ptime:20',
  'a=sendrecv',
  '',
].join('\r\n');

/** Asks the system for a free UDP port on loopback, then releases it for SIPp. */
async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const port = socket.address().port;
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

interface SippRun {
  readonly exited: Promise<{ code: number | null; output: string }>;
  stop(): void;
}

const runs: SippRun[] = [];
const agents: SipUserAgent[] = [];

afterEach(async () => {
  for (const run of runs.splice(0)) run.stop();
  for (const agent of agents.splice(0)) await agent.close();
});

async function startSipp(scenario: string): Promise<{ port: number; run: SippRun }> {
  const port = await freeUdpPort();
  const mediaPort = await freeUdpPort();
  const controlPort = await freeUdpPort();
  const child = spawn(
    'sipp',
    [
      ...['-sf', `${scenarioDirectory}${scenario}`],
      ...['-i', '127.0.0.1', '-p', String(port), '-mp', String(mediaPort), '-cp', String(controlPort)],
      ...['-m', '1', '-timeout', '20s', '-timeout_error', '-nostdin'],
    ],
    { cwd: tmpdir(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4_000);
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4_000);
  });
  let finished = false;
  const exited = new Promise<{ code: number | null; output: string }>((resolve) => {
    const limit = setTimeout(() => {
      if (child.pid !== undefined && !finished) process.kill(child.pid, 'SIGKILL');
    }, sippRunLimitMs);
    child.on('exit', (code) => {
      finished = true;
      clearTimeout(limit);
      resolve({ code, output });
    });
    child.on('error', (error) => {
      finished = true;
      clearTimeout(limit);
      resolve({ code: null, output: `${output}\n${error.message}` });
    });
  });
  const run: SippRun = {
    exited,
    stop: () => {
      if (!finished && child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
    },
  };
  runs.push(run);
  // SIPp binds within a few milliseconds; the INVITE is retransmitted (T1 = 100 ms) if it is early.
  await new Promise((resolve) => setTimeout(resolve, 150));
  return { port, run };
}

async function startCaller(): Promise<SipUserAgent> {
  const agent = await SipUserAgent.start({
    bindAddress: '127.0.0.1',
    port: 0,
    logger,
    timers: { t1Ms: 100 },
  });
  agents.push(agent);
  return agent;
}

function inviteOptions(sippPort: number, overrides: Partial<InviteOptions> = {}): InviteOptions {
  return {
    requestUri: `sip:+15550100001@127.0.0.1:${sippPort}`,
    from: { uri: 'sip:+15557654321@127.0.0.1', displayName: 'callwright' },
    to: { uri: 'sip:+15550100001@127.0.0.1' },
    sdpOffer: offer,
    ringTimeoutMs: 10_000,
    ...overrides,
  };
}

/**
 * Our outcome, unless SIPp fails first (then its output explains why), bounded in time either way.
 */
async function outcomeOf(call: OutgoingCall, run: SippRun): Promise<CallOutcome> {
  const sippFailed = run.exited.then(async (result) => {
    if (result.code !== 0) throw new Error(`SIPp exited with ${result.code} first:\n${result.output}`);
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    throw new Error('SIPp passed but the call did not settle within 5 s');
  });
  sippFailed.catch(() => {}); // the verdict is checked on its own once the outcome is in
  return Promise.race([call.outcome, sippFailed]);
}

function hangUpAfterAnswer(call: OutgoingCall, delayMs: number): void {
  call.on('answered', () => {
    setTimeout(() => void call.hangUp(), delayMs);
  });
}

async function expectSippPassed(run: SippRun): Promise<void> {
  const result = await run.exited;
  if (result.code !== 0) throw new Error(`SIPp exited with ${result.code}:\n${result.output}`);
  expect(result.code).toBe(0);
}

function expectEnded(outcome: CallOutcome, by: 'local' | 'remote'): void {
  expect(outcome.kind).toBe('ended');
  if (outcome.kind !== 'ended') return;
  expect(outcome.ended.by).toBe(by);
  expect(outcome.answered.sdpAnswer).toMatch(/^m=audio \d+ RTP\/AVP 0/m);
}

describe('SIPp as the callee', () => {
  it('answered call: ACK, then our BYE', async () => {
    const { port, run } = await startSipp('uas_answer.xml');
    const caller = await startCaller();
    const call = caller.invite(inviteOptions(port));
    const provisional: number[] = [];
    call.on('provisional', (info) => provisional.push(info.status));
    hangUpAfterAnswer(call, 200);
    expectEnded(await outcomeOf(call, run), 'local');
    expect(provisional).toContain(180);
    await expectSippPassed(run);
  });

  it('callee hangs up: SIPp sends BYE and we answer 200', async () => {
    const { port, run } = await startSipp('uas_callee_hangup.xml');
    const caller = await startCaller();
    const call = caller.invite(inviteOptions(port));
    expectEnded(await outcomeOf(call, run), 'remote');
    await expectSippPassed(run);
  });

  it('486 busy: reported as rejected 486 and ACKed', async () => {
    const { port, run } = await startSipp('uas_busy.xml');
    const caller = await startCaller();
    const call = caller.invite(inviteOptions(port));
    expect(await outcomeOf(call, run)).toEqual({
      kind: 'failed',
      failure: { cause: 'rejected', status: 486, reason: 'Busy Here', timedOut: false },
    });
    await expectSippPassed(run);
  });

  it('ring forever: our ring timeout sends CANCEL, SIPp answers 487, we ACK', async () => {
    const { port, run } = await startSipp('uas_ring_forever.xml');
    const caller = await startCaller();
    const call = caller.invite(inviteOptions(port, { ringTimeoutMs: 700 }));
    expect(await outcomeOf(call, run)).toEqual({
      kind: 'failed',
      failure: { cause: 'ring_timeout', status: 487, reason: 'Request Terminated', timedOut: false },
    });
    await expectSippPassed(run);
  });

  it('401 digest challenge: SIPp verifyauth accepts our Authorization', async () => {
    const { port, run } = await startSipp('uas_digest_401.xml');
    const caller = await startCaller();
    const call = caller.invite(
      inviteOptions(port, { credentials: { username: 'trunkuser', password: 's3cret' } }),
    );
    hangUpAfterAnswer(call, 100);
    expectEnded(await outcomeOf(call, run), 'local');
    await expectSippPassed(run);
  });

  it('401 digest challenge with a wrong password: SIPp refuses it and fails', async () => {
    const { port, run } = await startSipp('uas_digest_401.xml');
    const caller = await startCaller();
    const call = caller.invite(
      inviteOptions(port, { credentials: { username: 'trunkuser', password: 'wrong' } }),
    );
    const outcome = await outcomeOf(call, run);
    expect(outcome).toMatchObject({ kind: 'failed', failure: { cause: 'rejected', status: 403 } });
    const result = await run.exited;
    expect(result.code).not.toBe(0);
  });

  it('in-dialog requests: INFO gets 501, a refresh re-INVITE 200, OPTIONS 200, then the callee BYE', async () => {
    const { port, run } = await startSipp('uas_in_dialog.xml');
    const caller = await startCaller();
    const call = caller.invite(inviteOptions(port));
    expectEnded(await outcomeOf(call, run), 'remote');
    await expectSippPassed(run);
  });
});
