// npm run bench:web — web calls as a visitor's browser has them: Debian's Chromium (one browser,
// one context per caller) loads `callwright/web` from the service and talks to the example
// appointment agent (examples/agents/appointment-confirmation.json) over WebRTC, the whole service
// on loopback (SQLite, offline stack: pocketsphinx + flite).
//
// The microphone: each page's getUserMedia gives a WebAudio stream that says flite kal's "yes that
// works" once the agent's greeting has ended (BENCH_REPLY_AFTER_QUIET_MS of quiet after it was
// audible), so every caller answers at the right moment whatever the load; the recogniser hears it
// as it would hear a person (uplink through Opus-less PCMU, as the SDK offers).
//
// Measured IN THE PAGE, on one AudioContext clock, by an AudioWorklet over 10 ms windows:
//   voice-to-voice = the microphone's last audible window -> the first audible window of the agent's
//   audio as received (the remote track after WebRTC's jitter buffer: what the visitor hears);
//   greeting = startWebCall() resolved -> the greeting's first audible window;
//   connect = startWebCall() called -> resolved (microphone, ICE, POST /connect).
// And from the service: each call's status, end reason, `confirmed`, and its own voice-to-voice
// (metrics.turns[].voice_to_voice_ms, on the recording).
//
// Settings: BENCH_LEVELS (default "1,20": concurrent calls per level), BENCH_ROUNDS_AT_ONE (calls in
// series at level 1, default 5), BENCH_START_SPREAD_MS (calls of a level start over this, default
// 2000), BENCH_REPLY_AFTER_QUIET_MS (default 900), BENCH_CALL_LIMIT_MS (a call's time limit, 60000).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { createAgent, parseVariableDeclaration } from '../dist/admin/agents.js';
import { createApiKey } from '../dist/admin/apiKeys.js';
import { loadConfig } from '../dist/config.js';
import { createLogger } from '../dist/logger.js';
import { startService } from '../dist/server.js';
import { encodeWav } from '../dist/voice/providers/audio/wav.js';
import { FliteTextToSpeech } from '../dist/voice/providers/index.js';
import { synthesizeWhole } from './callee.mjs';
import { webCallChromiumArgs, webCallsFromOnePage } from './webCallPage.mjs';

const levels = (process.env.BENCH_LEVELS ?? '1,20').split(',').map(Number);
const roundsAtOne = Number(process.env.BENCH_ROUNDS_AT_ONE ?? 5);
const startSpreadMs = Number(process.env.BENCH_START_SPREAD_MS ?? 2000);
const replyAfterQuietMs = Number(process.env.BENCH_REPLY_AFTER_QUIET_MS ?? 900);
const callLimitMs = Number(process.env.BENCH_CALL_LIMIT_MS ?? 60_000);
const maxLevel = Math.max(...levels);

const quantile = (values, q) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]);
};

const flite = await FliteTextToSpeech.start({ defaultVoice: 'kal', logger: createLogger('error') });
const answer = await synthesizeWhole(flite, 'yes that works');
await flite.close();
const answerWav = encodeWav(answer, 8000);

const dataDir = mkdtempSync(join(tmpdir(), 'callwright-bench-web-'));
const config = loadConfig({
  PORT: '0',
  HOST: '127.0.0.1',
  CALLWRIGHT_DATA_DIR: dataDir,
  CALLWRIGHT_SIP_BIND: '127.0.0.1',
  CALLWRIGHT_PUBLIC_IP: '127.0.0.1',
  CALLWRIGHT_SIP_PORT: '0',
  CALLWRIGHT_RTP_PORTS: '40000-40998',
  CALLWRIGHT_RATE_LIMIT: '100000/1s',
  CALLWRIGHT_WEB_CALL_CONNECT_LIMIT: '100000/1s',
});
const service = await startService(config, createLogger(process.env.BENCH_LOG_LEVEL ?? 'error'));
const account = await service.store.accounts.create({ name: 'bench-web', maxLiveCalls: maxLevel + 5 });
const { key } = await createApiKey(service.store, account.id, 'bench-web');
const script = JSON.parse(
  readFileSync(resolve(import.meta.dirname, '../examples/agents/appointment-confirmation.json'), 'utf8'),
);
const agent = await createAgent(service.store, account.id, {
  name: 'Dental',
  prompt: 'p',
  script,
  maxDurationS: 60,
  variables: ['customer_name', 'appointment_day'].map(parseVariableDeclaration),
});

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    ...webCallChromiumArgs,
  ],
  timeout: 20_000,
});

async function newToken() {
  const response = await fetch(`${service.url}/v1/web-calls`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
    body: JSON.stringify({
      agent_id: agent.id,
      variables: { customer_name: 'Ann', appointment_day: 'Tuesday' },
    }),
  });
  if (response.status !== 200)
    throw new Error(`POST /v1/web-calls: ${response.status} ${await response.text()}`);
  return (await response.json()).token;
}

async function waitForRecord(callId) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const call = await service.store.calls.getById(callId);
    if (call && ['completed', 'failed', 'canceled', 'busy', 'no_answer'].includes(call.status)) return call;
    if (Date.now() > deadline) return call;
    await new Promise((done) => setTimeout(done, 200));
  }
}

/** Loud 20 ms frames on a stereo recording's callee channel (left): did the visitor's voice arrive? */
function calleeLoudFrames(path) {
  try {
    const bytes = readFileSync(path);
    const data = bytes.indexOf('data') + 8;
    const samples = new Int16Array(
      bytes.buffer.slice(
        bytes.byteOffset + data,
        bytes.byteOffset + bytes.length - ((bytes.length - data) % 4),
      ),
    );
    let frames = 0;
    for (let at = 0; at + 320 <= samples.length; at += 320) {
      let energy = 0;
      for (let i = at; i < at + 320; i += 2) energy += samples[i] ** 2;
      if (energy / 160 > 300 ** 2) frames++;
    }
    return frames;
  } catch {
    return null;
  }
}

function loadAverage() {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

console.log(
  `bench:web — Node ${process.version}, Chromium ${browser.version()}; voice-to-voice measured in the page: the microphone's last audible 10 ms -> the agent's first audible 10 ms as received`,
);
for (const level of levels) {
  const runs = [];
  const rounds = level === 1 ? roundsAtOne : 1;
  const cpuBefore = process.cpuUsage();
  const wallBefore = Date.now();
  for (let round = 0; round < rounds; round++) {
    const page = await webCallsFromOnePage(browser, {
      serviceUrl: service.url,
      tokens: await Promise.all(Array.from({ length: level }, () => newToken())),
      agentId: agent.id,
      answerWav,
      spreadMs: level === 1 ? 0 : startSpreadMs,
      calibrate: round === 0,
      replyAfterQuietMs,
      callLimitMs,
    });
    runs.push(...page.results);
    if (round === 0)
      console.log(
        `  (the browser's own PCMU path, page to page without the service: ${page.browserOwnPathMs} ms onset to onset; AudioContext base latency ${page.baseLatencyMs} ms)`,
      );
  }
  const cpu = process.cpuUsage(cpuBefore);
  const failures = runs.filter((r) => r.error);
  const records = await Promise.all(runs.filter((r) => r.callId).map((r) => waitForRecord(r.callId)));
  const confirmed = records.filter(
    (c) => c?.status === 'completed' && c.endReason === 'agent_hangup' && c.extractedData?.confirmed === true,
  ).length;
  const serviceV2v = records.flatMap((c) =>
    (c?.metrics?.turns ?? []).map((t) => t.voice_to_voice_ms).filter((ms) => typeof ms === 'number'),
  );
  const v2v = runs.map((r) => r.voiceToVoiceMs).filter((ms) => typeof ms === 'number');
  const greeting = runs.map((r) => r.greetingMs).filter((ms) => typeof ms === 'number');
  const connect = runs.map((r) => r.connectMs).filter((ms) => typeof ms === 'number');
  const jitter = runs.map((r) => r.jitterBufferMs).filter((ms) => typeof ms === 'number');
  console.log(
    [
      `${level} concurrent × ${rounds}: ${runs.length} calls, ${failures.length} failed to start, ${confirmed} completed agent_hangup with confirmed: true`,
      `  voice-to-voice in the browser p50 ${quantile(v2v, 0.5)} / p95 ${quantile(v2v, 0.95)} ms (n=${v2v.length}); the calls' own (recording) p50 ${quantile(serviceV2v, 0.5)} / p95 ${quantile(serviceV2v, 0.95)} ms`,
      `  connect p50 ${quantile(connect, 0.5)} / p95 ${quantile(connect, 0.95)} ms; greeting's first audio after connect p50 ${quantile(greeting, 0.5)} / p95 ${quantile(greeting, 0.95)} ms; the browser's jitter buffer (mean per call) p50 ${quantile(jitter, 0.5)} / p95 ${quantile(jitter, 0.95)} ms`,
      `  service process CPU ${Math.round((cpu.user + cpu.system) / 1000)} ms over ${Date.now() - wallBefore} ms wall; load ${loadAverage()}`,
    ].join('\n'),
  );
  for (const failure of failures) console.log(`  failed: ${failure.error}`);
  const unconfirmed = records.filter(
    (c) => c && !(c.status === 'completed' && c.extractedData?.confirmed === true),
  );
  for (const c of unconfirmed.slice(0, 5)) {
    const run = runs.find((r) => r.callId === c.id);
    console.log(
      `  not confirmed: ${c.status}/${c.endReason}, page answered ${run?.answers} time(s), page ended ${run?.ended}, visitor's loud frames on the recording ${c.recordingPath ? calleeLoudFrames(c.recordingPath) : 'none'}; heard ${JSON.stringify(c.transcript.map((l) => l.text))}`,
    );
  }
}

await browser.close();
await service.close();
rmSync(dataDir, { recursive: true, force: true });
