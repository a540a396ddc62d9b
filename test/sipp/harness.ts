import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { expect } from 'vitest';
import type { CallOutcome, InviteOptions, OutgoingCall } from '../../src/telephony/sip/index.js';
import { SipUserAgent } from '../../src/telephony/sip/index.js';

/**
 * Shared harness of the SIPp interop suite: SIPp (Debian package `sip-tester`) as the callee on
 * loopback, our SipUserAgent as the caller. Every SIPp run is `-m 1`, bounded by SIPp's own
 * `-timeout` and by a SIGKILL of its pid, and everything started here is stopped by `stopAll()`.
 */

const scenarioDirectory = fileURLToPath(new URL('.', import.meta.url));
export const logger = pino({ level: 'silent' });
const sippRunLimitMs = 25_000;

/** Asks the system for a free UDP port on loopback, then releases it for SIPp. */
export async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const port = socket.address().port;
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

/** A free even UDP port (RTP convention), found by binding port 0 until the system gives one. */
export async function freeEvenUdpPort(): Promise<number> {
  for (let attempt = 0; attempt < 64; attempt++) {
    const port = await freeUdpPort();
    if (port % 2 === 0 && port <= 65_000) return port;
  }
  throw new Error('no free even UDP port in 64 tries');
}

export interface SippRun {
  readonly exited: Promise<{ code: number | null; output: string }>;
  stop(): void;
}

export interface StartedSipp {
  readonly port: number;
  /** SIPp's media port (`-mp`); its SDP advertises it as `[media_port]` on 127.0.0.1 (`-mi`). */
  readonly mediaPort: number;
  readonly run: SippRun;
}

const runs: SippRun[] = [];
const agents: SipUserAgent[] = [];
const cleanups: (() => Promise<void>)[] = [];

/** Registers something to close when the test ends (RTP sessions and the like). */
export function onCleanup(cleanup: () => Promise<void>): void {
  cleanups.push(cleanup);
}

/** Stops every SIPp and closes every agent and session started by the current test. */
export async function stopAll(): Promise<void> {
  for (const run of runs.splice(0)) run.stop();
  for (const cleanup of cleanups.splice(0)) await cleanup();
  for (const agent of agents.splice(0)) await agent.close();
}

export async function startSipp(
  scenario: string,
  extraArgs: readonly string[] = [],
  runLimitMs = sippRunLimitMs,
): Promise<StartedSipp> {
  const port = await freeUdpPort();
  const mediaPort = await freeEvenUdpPort();
  const controlPort = await freeUdpPort();
  const child = spawn(
    'sipp',
    [
      ...['-sf', `${scenarioDirectory}${scenario}`],
      ...['-i', '127.0.0.1', '-p', String(port), '-cp', String(controlPort)],
      ...['-mi', '127.0.0.1', '-mp', String(mediaPort)],
      ...['-m', '1', '-timeout', '20s', '-timeout_error', '-nostdin'],
      ...extraArgs,
    ],
    { cwd: tmpdir(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // Kept apart: SIPp's error lines (e.g. "Can't create raw IPv4 socket" from play_pcap_audio when
  // not root) must not be pushed out of the report by its final statistics screens.
  let screens = '';
  let errors = '';
  child.stdout.on('data', (chunk: Buffer) => {
    screens = (screens + chunk.toString('utf8')).slice(-4_000);
  });
  child.stderr.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString('utf8')).slice(-2_000);
  });
  const output = (): string => `${screens}\n--- SIPp stderr ---\n${errors}`;
  let finished = false;
  const exited = new Promise<{ code: number | null; output: string }>((resolve) => {
    const limit = setTimeout(() => {
      if (child.pid !== undefined && !finished) process.kill(child.pid, 'SIGKILL');
    }, runLimitMs);
    child.on('exit', (code) => {
      finished = true;
      clearTimeout(limit);
      resolve({ code, output: output() });
    });
    child.on('error', (error) => {
      finished = true;
      clearTimeout(limit);
      resolve({ code: null, output: `${output()}\n${error.message}` });
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
  return { port, mediaPort, run };
}

export async function startCaller(): Promise<SipUserAgent> {
  const agent = await SipUserAgent.start({
    bindAddress: '127.0.0.1',
    port: 0,
    logger,
    timers: { t1Ms: 100 },
  });
  agents.push(agent);
  return agent;
}

export function inviteOptions(
  sippPort: number,
  sdpOffer: string,
  overrides: Partial<InviteOptions> = {},
): InviteOptions {
  return {
    requestUri: `sip:+15550100001@127.0.0.1:${sippPort}`,
    from: { uri: 'sip:+15557654321@127.0.0.1', displayName: 'callwright' },
    to: { uri: 'sip:+15550100001@127.0.0.1' },
    sdpOffer,
    ringTimeoutMs: 10_000,
    ...overrides,
  };
}

/**
 * Our outcome, unless SIPp fails first (then its output explains why), bounded in time either way.
 */
export async function outcomeOf(call: OutgoingCall, run: SippRun): Promise<CallOutcome> {
  const sippFailed = run.exited.then(async (result) => {
    if (result.code !== 0) throw new Error(`SIPp exited with ${result.code} first:\n${result.output}`);
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    throw new Error('SIPp passed but the call did not settle within 5 s');
  });
  sippFailed.catch(() => {}); // the verdict is checked on its own once the outcome is in
  return Promise.race([call.outcome, sippFailed]);
}

export async function expectSippPassed(run: SippRun): Promise<void> {
  const result = await run.exited;
  if (result.code !== 0) throw new Error(`SIPp exited with ${result.code}:\n${result.output}`);
  expect(result.code).toBe(0);
}

/**
 * SIPp as a callee for one call of `scenarioPath` on `sipPort` (a trunk or a proxy points there),
 * echoing RTP, bounded by SIPp's own timeout and a SIGKILL after it; resolves once it listens.
 */
export async function startSippCallee(
  scenarioPath: string,
  sipPort: number,
  timeoutS = 20,
  /** More SIPp arguments, e.g. `['-t', 't1']` for TCP. */
  extraArgs: readonly string[] = [],
): Promise<{ mediaPort: number; exited: Promise<{ code: number | null; output: string }> }> {
  const mediaPort = await freeEvenUdpPort();
  const controlPort = await freeUdpPort();
  const child = spawn(
    'sipp',
    [
      ...['-sf', scenarioPath, '-i', '127.0.0.1', '-p', String(sipPort), '-cp', String(controlPort)],
      ...['-mi', '127.0.0.1', '-mp', String(mediaPort), '-rtp_echo'],
      ...['-m', '1', '-timeout', `${timeoutS}s`, '-timeout_error', '-nostdin'],
      ...extraArgs,
    ],
    { cwd: tmpdir(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4_000);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const killer = setTimeout(() => child.kill('SIGKILL'), (timeoutS + 5) * 1000);
  const exited = new Promise<{ code: number | null; output: string }>((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(killer);
      resolve({ code, output });
    }),
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  return { mediaPort, exited };
}
