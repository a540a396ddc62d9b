/**
 * Test support (not shipped behaviour): drives the sandbox the way the dispatcher will, with our
 * own SIP user agent as the caller and a real RTP session on loopback.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Logger } from '../../logger.js';
import {
  createOffer,
  type G711Codec,
  MediaClock,
  PortAllocator,
  parseAnswer,
  RtpSession,
  sampleRateHz,
} from '../rtp/index.js';
import { type CallOutcome, type OutgoingCall, SipUserAgent } from '../sip/index.js';
import { MemoryInviteLog } from './inviteLog.js';
import type { PersonaTiming } from './personas.js';
import { frameRms, toneMix } from './sandboxAudio.js';
import { SandboxCarrier } from './sandboxCarrier.js';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `condition` every 10 ms; throws with `what` when it is still false after `timeoutMs`. */
export async function waitUntil(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

/** Rejects when `promise` has not settled after `timeoutMs`. */
export async function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Share of a frame's energy at `frequencyHz` (Goertzel): 1 for a pure tone, about 0 without it. */
export function toneShare(samples: Int16Array, frequencyHz: number): number {
  let energy = 0;
  for (const sample of samples) energy += sample * sample;
  if (energy === 0) return 0;
  const coefficient = 2 * Math.cos((2 * Math.PI * frequencyHz) / sampleRateHz);
  let previous = 0;
  let beforePrevious = 0;
  for (const sample of samples) {
    const current = sample + coefficient * previous - beforePrevious;
    beforePrevious = previous;
    previous = current;
  }
  const power =
    previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious;
  return (2 * power) / (samples.length * energy);
}

export interface ReceivedFrame {
  readonly samples: Int16Array;
  readonly rms: number;
  readonly atMs: number;
}

/** Runs of loud frames (rms ≥ threshold), as [start, end) frame indices. */
export function loudRuns(
  frames: readonly ReceivedFrame[],
  threshold = 500,
): Array<{ start: number; end: number }> {
  const runs: Array<{ start: number; end: number }> = [];
  let start = -1;
  frames.forEach((frame, index) => {
    if (frame.rms >= threshold && start < 0) start = index;
    if (frame.rms < threshold && start >= 0) {
      runs.push({ start, end: index });
      start = -1;
    }
  });
  if (start >= 0) runs.push({ start, end: frames.length });
  return runs;
}

/** A caller's view of one call to the sandbox. */
export class TestCall {
  readonly sip: OutgoingCall;
  readonly rtp: RtpSession;
  readonly provisionalStatuses: number[] = [];
  /** The sandbox's audio as the caller heard it, from the answer on. */
  readonly received: ReceivedFrame[] = [];
  readonly digits: string[] = [];
  answeredAtMs: number | null = null;
  endedAtMs: number | null = null;
  readonly outcome: Promise<CallOutcome>;

  constructor(sip: OutgoingCall, rtp: RtpSession, codecs: readonly G711Codec[]) {
    this.sip = sip;
    this.rtp = rtp;
    sip.on('provisional', (info) => this.provisionalStatuses.push(info.status));
    sip.on('answered', (info) => {
      this.answeredAtMs = performance.now();
      rtp.start(parseAnswer(info.sdpAnswer, { offeredCodecs: codecs }));
    });
    rtp.on('audio', (samples) => {
      this.received.push({ samples, rms: frameRms(samples), atMs: performance.now() });
    });
    rtp.on('dtmf', ({ digit }) => this.digits.push(digit));
    this.outcome = sip.outcome.then(async (outcome) => {
      this.endedAtMs = performance.now();
      await rtp.close();
      return outcome;
    });
  }

  get answered(): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.answeredAtMs !== null) resolve();
      this.sip.on('answered', () => resolve());
      void this.sip.outcome.then(() => reject(new Error('the call ended unanswered')));
    });
  }

  /** The agent "speaks": a 300 Hz + 1.2 kHz tone at speech level. Resolves when the last sample is sent. */
  async speak(durationMs: number): Promise<number> {
    await this.rtp.play(toneMix([300, 1_200], durationMs, 5_000));
    return performance.now();
  }

  loudRuns(): Array<{ start: number; end: number }> {
    return loudRuns(this.received);
  }
}

export interface Harness {
  readonly carrier: SandboxCarrier;
  readonly inviteLog: MemoryInviteLog;
  readonly caller: SipUserAgent;
  readonly sandboxPorts: PortAllocator;
  readonly callerPorts: PortAllocator;
  readonly logLines: string[];
  dial(
    number: string,
    options?: { ringTimeoutMs?: number; codecs?: readonly G711Codec[]; fromNumber?: string },
  ): Promise<TestCall>;
  close(): Promise<void>;
}

const clock = new MediaClock({ logger: pino({ level: 'silent' }) });
// Each test file runs in its own process: start at a random block so two files rarely share ports.
let portBase = 42_000 + 200 * Math.floor(Math.random() * 30);

/** A sandbox carrier plus a caller, both on loopback, each with its own RTP port range. */
export async function startHarness(
  timing: Partial<PersonaTiming> = {},
  options: { callerT1Ms?: number; inviteLog?: MemoryInviteLog } = {},
): Promise<Harness> {
  const logLines: string[] = [];
  const logger: Logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString('utf8'));
        done();
      },
    }),
  );
  const sandboxPorts = new PortAllocator({ minPort: portBase, maxPort: portBase + 98 });
  const callerPorts = new PortAllocator({ minPort: portBase + 100, maxPort: portBase + 198 });
  portBase = portBase >= 48_000 ? 42_000 : portBase + 200;
  const inviteLog = options.inviteLog ?? new MemoryInviteLog();
  const carrier = await SandboxCarrier.start({
    logger,
    clock,
    ports: sandboxPorts,
    bindAddress: '127.0.0.1',
    sipPort: 0,
    inviteLog,
    timing,
    sipTimers: { t1Ms: 20 },
  });
  const callerLogger = pino({ level: 'silent' });
  const caller = await SipUserAgent.start({
    bindAddress: '127.0.0.1',
    port: 0,
    logger: callerLogger,
    timers: { t1Ms: options.callerT1Ms ?? 20 },
  });
  const calls: TestCall[] = [];
  return {
    carrier,
    inviteLog,
    caller,
    sandboxPorts,
    callerPorts,
    logLines,
    async dial(number, dialOptions = {}) {
      const codecs = dialOptions.codecs ?? ['PCMU', 'PCMA'];
      const rtp = await RtpSession.open({
        logger: callerLogger,
        clock,
        ports: callerPorts,
        bindAddress: '127.0.0.1',
      });
      const sip = caller.invite({
        requestUri: carrier.requestUriFor(number),
        from: { uri: `sip:${dialOptions.fromNumber ?? '+15557654321'}@127.0.0.1` },
        to: { uri: carrier.requestUriFor(number) },
        sdpOffer: createOffer({ address: '127.0.0.1', port: rtp.localPort, codecs }),
        ringTimeoutMs: dialOptions.ringTimeoutMs ?? 5_000,
      });
      const call = new TestCall(sip, rtp, codecs);
      calls.push(call);
      return call;
    },
    async close() {
      await carrier.close();
      await Promise.all(calls.map((call) => call.sip.hangUp()));
      await caller.close();
      await Promise.all(calls.map((call) => call.rtp.close()));
    },
  };
}
