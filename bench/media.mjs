#!/usr/bin/env node
// Media load benchmark: N concurrent RtpSessions in this process, each sending 20 ms PCMU through
// the shared MediaClock to an echo peer on loopback, for a fixed duration.
//
//   npx tsc -p tsconfig.build.json && node bench/media.mjs --calls 500 --seconds 20 [--echo sipp|node]
//     [--srtp-share 0.5]
//
// The echo peer is SIPp (Debian sip-tester) with -rtp_echo by default: one media port that echoes
// every datagram to its sender, so all N sessions share it (each session latches on to its
// source). `--echo node` uses a small Node echo process instead. Either way it is a separate
// process, started and stopped (by pid) here. Prints N, packets sent/received, loss, send-clock
// lateness p50/p99, and CPU time per call. `--srtp-share F` makes that share of the sessions SRTP
// (AES_CM_128_HMAC_SHA1_80, both directions: the echo sends each packet back as it was, so a
// session decrypts under the key it encrypted with, authentication and replay checks included).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { MediaClock, PortAllocator, prepareG711, RtpSession } from '../dist/telephony/rtp/index.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '2' },
    echo: { type: 'string', default: 'sipp' },
    'media-port': { type: 'string', default: '36000' },
    'srtp-share': { type: 'string', default: '0' },
    processes: { type: 'string', default: '1' },
    'rtp-ports': { type: 'string', default: '20000-29998' },
  },
});
const processes = Number(values.processes);
if (processes > 1) {
  // As the scale-out path runs it: N worker processes, each with calls/N sessions and its own
  // echo peer, started together; the figures are summed (CPU) or the worst taken (lateness).
  const runs = await Promise.all(
    Array.from({ length: processes }, (_, i) => {
      const args = [
        new URL(import.meta.url).pathname,
        ...['--calls', String(Math.round(Number(values.calls) / processes)), '--seconds', values.seconds],
        ...['--warmup', values.warmup, '--echo', values.echo, '--srtp-share', values['srtp-share']],
        ...['--media-port', String(Number(values['media-port']) + i * 10)],
        ...['--rtp-ports', `${20000 + i * 4000}-${20000 + i * 4000 + 3998}`],
      ];
      return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.on('data', (chunk) => {
          out += chunk;
        });
        child.on('exit', (code) =>
          code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`run ${i} exited ${code}`)),
        );
      });
    }),
  );
  const sum = (pick) => runs.reduce((total, run) => total + pick(run), 0);
  const worst = (pick) => Math.max(...runs.map(pick));
  console.log(
    JSON.stringify(
      {
        calls: sum((r) => r.calls),
        processes,
        packetsSent: sum((r) => r.packetsSent),
        packetsReceived: sum((r) => r.packetsReceived),
        lost: sum((r) => r.lost),
        kernelReceiveBufferDrops: {
          echo: sum((r) => r.kernelReceiveBufferDrops.echo),
          sessions: sum((r) => r.kernelReceiveBufferDrops.sessions),
        },
        srtpSessions: sum((r) => r.srtpSessions),
        srtpUnauthenticated: sum((r) => r.srtpUnauthenticated),
        skippedTicks: sum((r) => r.clockLatenessMs.skippedTicks),
        clockLatenessMs: {
          p50: worst((r) => r.clockLatenessMs.p50),
          p99: worst((r) => r.clockLatenessMs.p99),
          max: worst((r) => r.clockLatenessMs.max),
        },
        cpu: {
          processCores: Number(sum((r) => r.cpu.processCores).toFixed(3)),
          echoPeerCores: Number(sum((r) => r.cpu.echoPeerCores).toFixed(3)),
        },
      },
      null,
      2,
    ),
  );
  process.exit(0);
}
const calls = Number(values.calls);
const seconds = Number(values.seconds);
const warmupSeconds = Number(values.warmup);
const mediaPort = Number(values['media-port']);
const srtpShare = Number(values['srtp-share']);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const logger = pino({ level: 'warn' });

function startEcho() {
  if (values.echo === 'sipp') {
    const sipPort = mediaPort - 2;
    const args = ['-sn', 'uas', '-i', '127.0.0.1', '-p', String(sipPort), '-mi', '127.0.0.1'];
    args.push('-mp', String(mediaPort), '-rtp_echo', '-rtp_buffsize', String(8 * 1024 * 1024));
    args.push('-nostdin', '-timeout', `${seconds + warmupSeconds + 60}s`);
    return spawn('sipp', args, { cwd: tmpdir(), stdio: 'ignore' });
  }
  const script = `
    const s = require('node:dgram').createSocket({ type: 'udp4', recvBufferSize: 8 << 20, sendBufferSize: 8 << 20 });
    s.on('message', (m, r) => s.send(m, r.port, r.address));
    s.bind(${mediaPort}, '127.0.0.1');`;
  return spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
}

/** utime + stime of another process, in ms (Linux /proc). */
function processCpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // USER_HZ = 100
  } catch {
    return Number.NaN;
  }
}

/** Kernel receive-buffer drops (Linux /proc/net/udp) on the echo port and on our session ports. */
function socketDrops(isOurs) {
  const drops = { echo: 0, sessions: 0 };
  try {
    for (const line of readFileSync('/proc/net/udp', 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 13) continue;
      const port = Number.parseInt(fields[1].split(':')[1], 16);
      const dropped = Number(fields.at(-1));
      if (port === mediaPort) drops.echo += dropped;
      else if (isOurs(port)) drops.sessions += dropped;
    }
  } catch {
    return { echo: Number.NaN, sessions: Number.NaN };
  }
  return drops;
}

function totals(sessions) {
  const sum = {
    sent: 0,
    received: 0,
    lost: 0,
    late: 0,
    concealed: 0,
    sendErrors: 0,
    latched: 0,
    unauthenticated: 0,
    srtp: 0,
  };
  for (const s of sessions) {
    const st = s.stats();
    sum.sent += st.audioPacketsSent;
    sum.received += st.packetsReceived;
    sum.lost += st.packetsLost;
    sum.late += st.packetsLate;
    sum.concealed += st.concealedFrames;
    sum.sendErrors += st.sendErrors;
    if (s.isLatched) sum.latched++;
    sum.unauthenticated += st.packetsUnauthenticated;
    if (s.secure) sum.srtp++;
  }
  return sum;
}

const echo = startEcho();
const echoExited = new Promise((resolve) => echo.once('exit', resolve));
const sessions = [];
const remotes = [];
try {
  await sleep(500);
  if (echo.exitCode !== null) throw new Error(`echo peer (${values.echo}) exited early: ${echo.exitCode}`);
  prepareG711();
  const clock = new MediaClock({ logger });
  const [minPort, maxPort] = values['rtp-ports'].split('-').map(Number);
  const ports = new PortAllocator({ minPort, maxPort });
  const remote = {
    address: '127.0.0.1',
    port: mediaPort,
    codec: 'PCMU',
    payloadType: 0,
    telephoneEventPayloadType: null,
    ptimeMs: 20,
    direction: 'sendrecv',
    srtp: null,
  };
  // One shared tone long enough for the whole run (play() only reads it).
  const totalSeconds = seconds + warmupSeconds + 2;
  const tone = Int16Array.from({ length: totalSeconds * 8000 }, (_, i) =>
    Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 8000) * (0.6 + 0.4 * Math.sin(i / 4000))),
  );
  const srtpCalls = Math.round(calls * srtpShare);
  for (let i = 0; i < calls; i++) {
    const session = await RtpSession.open({ logger, clock, ports, bindAddress: '127.0.0.1' });
    session.on('audio', () => {}); // as the voice pipeline would: decode every received frame
    // SRTP sessions spread evenly over the clock's slots.
    const secure =
      srtpCalls > 0 && Math.floor(((i + 1) * srtpCalls) / calls) > Math.floor((i * srtpCalls) / calls);
    const key = randomBytes(30);
    const sessionRemote = secure
      ? { ...remote, srtp: { suite: 'AES_CM_128_HMAC_SHA1_80', localKey: key, remoteKey: key } }
      : remote;
    session.start(sessionRemote);
    remotes.push(sessionRemote);
    void session.play(tone);
    sessions.push(session);
  }
  await sleep(warmupSeconds * 1000);

  clock.resetStats();
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  const before = totals(sessions);
  const cpuBefore = process.cpuUsage();
  const echoCpuBefore = processCpuMs(echo.pid);
  const wallBefore = performance.now();
  await sleep(seconds * 1000);
  const wallMs = performance.now() - wallBefore;
  const cpu = process.cpuUsage(cpuBefore);
  const echoCpuMs = processCpuMs(echo.pid) - echoCpuBefore;
  loopDelay.disable();
  const clockStats = clock.stats();

  // Stop sending (as on hold) but keep receiving, so packets in flight are counted before totals.
  for (const [i, s] of sessions.entries()) s.start({ ...remotes[i], direction: 'sendonly' });
  await sleep(500);
  const after = totals(sessions);
  const ourPorts = new Set(sessions.map((s) => s.localPort));
  const drops = socketDrops((port) => ourPorts.has(port));

  const cpuMs = (cpu.user + cpu.system) / 1000;
  const sentInWindow = after.sent - before.sent;
  const report = {
    calls,
    echo: values.echo,
    seconds: Math.round(wallMs / 100) / 10,
    packetsSent: after.sent,
    packetsReceived: after.received,
    lost: after.sent - after.received,
    lossPercent: Number((((after.sent - after.received) / Math.max(1, after.sent)) * 100).toFixed(3)),
    rfc3550Lost: after.lost,
    late: after.late,
    kernelReceiveBufferDrops: drops,
    sendErrors: after.sendErrors,
    latchedSessions: after.latched,
    srtpSessions: after.srtp,
    srtpUnauthenticated: after.unauthenticated,
    sendRatePerCall: Number((sentInWindow / calls / (wallMs / 1000)).toFixed(2)),
    clockLatenessMs: {
      p50: clockStats.lateness.p50Ms,
      p99: clockStats.lateness.p99Ms,
      max: Number(clockStats.lateness.maxMs.toFixed(2)),
      ticks: clockStats.ticks,
      skippedTicks: clockStats.skippedTicks,
    },
    slotRunMs: {
      p50: Number(clockStats.slotRun.p50Ms.toFixed(2)),
      p99: Number(clockStats.slotRun.p99Ms.toFixed(2)),
      max: Number(clockStats.slotRun.maxMs.toFixed(2)),
    },
    eventLoopDelayMs: {
      p50: Number((loopDelay.percentile(50) / 1e6).toFixed(2)),
      p99: Number((loopDelay.percentile(99) / 1e6).toFixed(2)),
    },
    cpu: {
      processCores: Number((cpuMs / wallMs).toFixed(3)),
      msPerCallSecond: Number((cpuMs / calls / (wallMs / 1000)).toFixed(3)),
      echoPeerCores: Number((echoCpuMs / wallMs).toFixed(3)),
    },
  };
  console.log(JSON.stringify(report, null, 2));
} finally {
  await Promise.all(sessions.map((s) => s.close()));
  if (echo.exitCode === null && echo.signalCode === null) echo.kill('SIGTERM');
  await Promise.race([echoExited, sleep(2000)]);
  if (echo.exitCode === null && echo.signalCode === null) process.kill(echo.pid, 'SIGKILL');
}
