// npm run bench:node — how many concurrent conversations one worker node holds on this machine
// before voice-to-voice p95 passes 1 s, and what each call-second costs in CPU, per stage.
//
// Four kinds of process, so that only the node's CPU is counted as the node's:
//  - the node (bench/nodeService.mjs): the service's voice stack as a worker holds it (VoiceStack:
//    pocketsphinx and flite each in child processes of their own, fvad, the vendors' credentials),
//    one Conversation per call built by VoiceStack.forCall, RTP on the shared media clock;
//  - the callees (bench/voiceCallees.mjs, one process per kind): the default sandbox person's
//    "yes … that works" after each agent reply, voice-to-voice measured at the callee's ear;
//  - the vendor fakes of bench:voice (bench/voiceVendors.mjs): Deepgram's final 150 ms after
//    Finalize, the model's first token after 250 ms then 50 tokens/s, ElevenLabs' first audio after
//    120 ms then real-time pace;
//  - this process: starts the others, relays the callee messages, samples /proc.
//
// Kinds: `offline` — a script agent on the service's defaults (pocketsphinx with its grammar and
// the language model's second pass, flite's kal voice); `streaming` — an llm agent on Deepgram, the
// OpenAI-compatible model and ElevenLabs (the fakes above); `realtime` — an llm agent whose
// settings.realtime is OpenAI Realtime (the fake on the model's port: server VAD with its 500 ms
// silence window, first audio 300 ms later), run through RealtimeConversation as a call session
// does (not in the default BENCH_KINDS: add it). For each kind the levels run in order
// until voice-to-voice p95 at the callee's ear passes 1 s at two levels in a row (capacity: the
// highest level held before them; a single miss is reported and the next level run, since the p95
// of a few dozen replies is their worst one or two), or the levels run out, or the run's time does.
//
// Per level: replies heard, voice-to-voice at the callee's ear and on the call's recording
// (p50/p95), turns per answer, turns that ended late (not a complete answer at the 250 ms decision)
// and whose final came late (> 200 ms after the turn's end: the offline second pass; for
// realtime every turn reads "ended late": the vendor's VAD decides, not ours), vendor failures;
// CPU ms per call-second of the node's main process, of its STT engine processes
// (callwright-pocketsphinx), of its TTS engine processes (callwright-flite), and their sum; the same for the callees and the vendor fakes (what they take
// from the same 2 cores); the node's peak RSS; the load average (`uptime`) before and after.
// CPU is read from /proc/<pid>/stat (utime + stime) of the node and every child it has, sampled
// every second, so an engine process replaced mid-level is counted too. A call-second is one
// second of one conversation, from its start (RTP open, greeting) to its end.
//
// Settings (environment):
//   BENCH_KINDS            kinds to run, in order (default offline,streaming)
//   BENCH_OFFLINE_LEVELS   default 1,4,8,16,24,32,40,48
//   BENCH_STREAMING_LEVELS default 1,16,32,64,96,128,160,200
//   BENCH_REALTIME_LEVELS  default 1,16,32,64,96,128,160,200
//   BENCH_TURNS            callee answers per conversation (default 6; a level lasts about
//                          turns × 4–5 s, and never more than turns × 8 s + 4 s)
//   BENCH_START_SPREAD_MS  the level's calls start spread over this (default 2000)
//   BENCH_STT_WORKERS      pocketsphinx processes (CALLWRIGHT_STT_WORKERS; default 1, the service's)
//   BENCH_P95_LIMIT_MS     the voice-to-voice p95 that ends a kind (default 1000)
//   BENCH_MAX_S            the whole run's budget: no level starts after it (default 840)
//   BENCH_DEBUG=1          the node prints each conversation's turns (the waterfall) and transcript
//                          on stderr
//   CALLEE_PAUSE_MS        the streaming and realtime callees' pause between "yes" and "that works" (default 300,
//                          bench:voice's)
//   BENCH_OFFLINE_CALLEE_PAUSE_MS  the offline callee's (default 60: a gap between words; the
//                          offline end of turn answers a complete phrase after 250 ms of quiet, so
//                          300 ms makes it answer "yes" and be talked over by "that works")
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createInterface } from 'node:readline';

const numbers = (text) => text.split(',').filter(Boolean).map(Number);
const kinds = (process.env.BENCH_KINDS ?? 'offline,streaming').split(',').filter(Boolean);
const levelsOf = {
  offline: numbers(process.env.BENCH_OFFLINE_LEVELS ?? '1,4,8,16,24,32,40,48'),
  streaming: numbers(process.env.BENCH_STREAMING_LEVELS ?? '1,16,32,64,96,128,160,200'),
  realtime: numbers(process.env.BENCH_REALTIME_LEVELS ?? '1,16,32,64,96,128,160,200'),
};
const turns = Number(process.env.BENCH_TURNS ?? 6);
const startSpreadMs = Number(process.env.BENCH_START_SPREAD_MS ?? 2000);
const p95LimitMs = Number(process.env.BENCH_P95_LIMIT_MS ?? 1000);
const runBudgetMs = Number(process.env.BENCH_MAX_S ?? 840) * 1000;
const sttWorkers = process.env.BENCH_STT_WORKERS ?? '1';
const clockTicksPerS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
const runStartedAt = performance.now();
// However a level goes, the run ends: its processes are stopped a few minutes past the budget.
setTimeout(() => {
  console.log('bench:node: past its budget by 3 minutes, stopping');
  for (const child of started) child.kill('SIGKILL');
  process.exit(1);
}, runBudgetMs + 180_000).unref();

// The vendor fakes are the suite's TypeScript, bundled once as bench:voice does (esbuild comes with vitest).
execFileSync('node_modules/esbuild/bin/esbuild', [
  '--bundle',
  '--platform=node',
  '--format=esm',
  '--packages=external',
  '--log-level=warning',
  '--outfile=bench/.fakes.mjs',
  'bench/voiceFakes.ts',
]);
const started = [];
function startProcess(script, env = {}) {
  const child = spawn(process.execPath, [script], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  started.push(child);
  const lines = createInterface({ input: child.stdout });
  const firstLine = new Promise((resolve) => lines.once('line', (line) => resolve(JSON.parse(line))));
  return { child, lines, firstLine };
}

const vendors = startProcess('bench/voiceVendors.mjs');
const urls = await vendors.firstLine;
const node = startProcess('bench/nodeService.mjs', {
  BENCH_NODE_ENV: JSON.stringify({
    CALLWRIGHT_STT_WORKERS: sttWorkers,
    CALLWRIGHT_PROVIDER_ALLOW_PRIVATE: 'true',
    CALLWRIGHT_DEEPGRAM_API_KEY: 'bench-deepgram',
    CALLWRIGHT_DEEPGRAM_BASE_URL: urls.deepgram,
    CALLWRIGHT_ELEVENLABS_API_KEY: 'bench-elevenlabs',
    CALLWRIGHT_ELEVENLABS_BASE_URL: urls.elevenLabs,
    CALLWRIGHT_OPENAI_API_KEY: 'bench-llm',
    CALLWRIGHT_OPENAI_BASE_URL: urls.llm,
  }),
});
const calleePauseMs = {
  offline: process.env.BENCH_OFFLINE_CALLEE_PAUSE_MS ?? '60',
  streaming: process.env.CALLEE_PAUSE_MS ?? '300',
  realtime: process.env.CALLEE_PAUSE_MS ?? '300',
};
const callees = Object.fromEntries(
  kinds.map((kind) => [
    kind,
    startProcess('bench/voiceCallees.mjs', { CALLEE_PAUSE_MS: calleePauseMs[kind] }),
  ]),
);
await Promise.all([node.firstLine, ...Object.values(callees).map((callee) => callee.firstLine)]);
// Callee messages go to the node, the node's to its kind's callee process; a level's results end it.
let levelDone = null;
for (const callee of Object.values(callees))
  callee.lines.on('line', (line) =>
    node.child.stdin.write(`${JSON.stringify({ calleeSaid: JSON.parse(line) })}\n`),
  );
node.lines.on('line', (line) => {
  const message = JSON.parse(line);
  if (message.toCallee)
    callees[message.toCallee.kind].child.stdin.write(`${JSON.stringify(message.toCallee.message)}\n`);
  else if (message.levelDone) levelDone?.(message.levelDone);
});

/** Every process under `rootPid`, with what it is (its command line: the engines set their titles). */
function processTree(rootPid) {
  const parentOf = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone since the listing
    }
  }
  const tree = [rootPid];
  for (let index = 0; index < tree.length; index++)
    for (const [pid, parent] of parentOf) if (parent === tree[index]) tree.push(pid);
  return tree;
}

/** CPU ms (user + system) and RSS bytes of one process; null once it has gone. */
function usageOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the command: state is field 3, utime 14 and stime 15, rss (pages) 24.
    const cpuMs = ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicksPerS;
    const rssBytes = Number(fields[21]) * 4096;
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0];
    return { cpuMs, rssBytes, command };
  } catch {
    return null;
  }
}

/** Which figure a process's CPU goes to. */
function stageOf(pid, command) {
  if (pid === node.child.pid) return 'node main';
  if (command.includes('pocketsphinx')) return 'node STT';
  if (command.includes('flite')) return 'node TTS';
  if (Object.values(callees).some((callee) => callee.child.pid === pid)) return 'callees';
  if (pid === vendors.child.pid) return 'vendor fakes';
  return `node other (${command.slice(0, 40)})`;
}

/** Samples CPU per stage from now until stop(): per pid, the last reading less the first. */
function startCpuSampler() {
  const first = new Map();
  const last = new Map();
  let peakNodeRss = 0;
  const roots = [node.child.pid, vendors.child.pid, ...Object.values(callees).map((c) => c.child.pid)];
  const sample = () => {
    let nodeRss = 0;
    for (const root of roots)
      for (const pid of processTree(root)) {
        const usage = usageOf(pid);
        if (!usage) continue;
        const stage = stageOf(pid, usage.command);
        // A process born during the level started from zero.
        if (!first.has(pid)) first.set(pid, { stage, cpuMs: sampling ? 0 : usage.cpuMs });
        last.set(pid, usage.cpuMs);
        if (stage.startsWith('node')) nodeRss += usage.rssBytes;
      }
    peakNodeRss = Math.max(peakNodeRss, nodeRss);
  };
  let sampling = false;
  sample();
  sampling = true;
  const timer = setInterval(sample, 1000);
  return () => {
    clearInterval(timer);
    sample();
    const cpuMsByStage = {};
    for (const [pid, { stage, cpuMs }] of first)
      cpuMsByStage[stage] = (cpuMsByStage[stage] ?? 0) + (last.get(pid) - cpuMs);
    return { cpuMsByStage, peakNodeRss };
  };
}

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0
    ? NaN
    : Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
};
const load = () => loadavg()[0].toFixed(1);

async function runLevel(kind, conversations) {
  const loadBefore = load();
  const stopSampler = startCpuSampler();
  const wallStartedAt = performance.now();
  const results = await new Promise((resolve) => {
    levelDone = resolve;
    node.child.stdin.write(`${JSON.stringify({ level: { kind, conversations, turns, startSpreadMs } })}\n`);
  });
  const wallS = (performance.now() - wallStartedAt) / 1000;
  const { cpuMsByStage, peakNodeRss } = stopSampler();
  const heard = results.flatMap((result) => result.heardMs);
  const own = results.flatMap((result) => result.ownMs);
  const sum = (key) => results.reduce((total, result) => total + result[key], 0);
  const callSeconds = sum('callSeconds');
  const perCallSecond = (stage) => ((cpuMsByStage[stage] ?? 0) / callSeconds).toFixed(1);
  const nodeCpuMs = Object.entries(cpuMsByStage)
    .filter(([stage]) => stage.startsWith('node'))
    .reduce((total, [, cpuMs]) => total + cpuMs, 0);
  const others = Object.keys(cpuMsByStage).filter((stage) => stage.startsWith('node other'));
  const row = {
    kind,
    conversations,
    replies: heard.length,
    earP50: quantile(heard, 0.5),
    earP95: quantile(heard, 0.95),
    recordingP50: quantile(own, 0.5),
    recordingP95: quantile(own, 0.95),
    turnsPerAnswer: (sum('turns') / sum('answers')).toFixed(2),
    slowEndTurns: sum('slowEndTurns'),
    lateFinalTurns: sum('lateFinalTurns'),
    failures: sum('failures'),
    nodeCpuMsPerCallS: (nodeCpuMs / callSeconds).toFixed(1),
    nodeCoresBusy: (nodeCpuMs / 1000 / wallS).toFixed(2),
  };
  console.log(
    `${kind.padEnd(9)} ${String(conversations).padStart(3)} calls ${String(heard.length).padStart(4)} replies  ` +
      `ear p50 ${row.earP50} p95 ${row.earP95} ms  recording p50 ${row.recordingP50} p95 ${row.recordingP95} ms  ` +
      `turns/answer ${row.turnsPerAnswer}  ended late ${row.slowEndTurns}, final late ${row.lateFinalTurns}  failures ${row.failures}  | CPU ms per call-second: node ${row.nodeCpuMsPerCallS} ` +
      `(main ${perCallSecond('node main')}, STT ${perCallSecond('node STT')}, TTS ${perCallSecond('node TTS')}` +
      `${others.map((stage) => `, ${stage} ${perCallSecond(stage)}`).join('')}) = ${row.nodeCoresBusy} cores; ` +
      `callees ${perCallSecond('callees')}, fakes ${perCallSecond('vendor fakes')}  | node RSS peak ${(peakNodeRss / 1e6).toFixed(0)} MB  ` +
      `| ${callSeconds.toFixed(0)} call-s in ${wallS.toFixed(1)} s, load ${loadBefore} -> ${load()}`,
  );
  return row;
}

console.log(
  `bench:node — Node ${process.version}, ${readFileSync('/proc/cpuinfo', 'utf8').match(/^processor/gm).length} cores; ` +
    `${turns} answers per conversation, starts spread over ${startSpreadMs} ms, ${sttWorkers} STT process(es); ` +
    `the callee's pause inside its answer: offline ${calleePauseMs.offline} ms, streaming and realtime ${calleePauseMs.streaming} ms; ` +
    `voice-to-voice p95 limit ${p95LimitMs} ms; load average ${loadavg()
      .map((value) => value.toFixed(1))
      .join(' ')}`,
);
const capacity = {};
for (const kind of kinds) {
  // A warm-up, not counted: the first calls compile the hot paths and open the clients' pools.
  await runLevel(kind, 2).then(() => console.log(`(${kind}: the level above was the warm-up, not counted)`));
  let held = 0;
  let missed = null;
  for (const conversations of levelsOf[kind]) {
    if (performance.now() - runStartedAt > runBudgetMs) {
      console.log(
        `${kind}: the run's ${runBudgetMs / 1000} s are spent; levels from ${conversations} not run`,
      );
      break;
    }
    const row = await runLevel(kind, conversations);
    if (row.earP95 <= p95LimitMs) {
      if (missed)
        console.log(`(${kind}: the miss at ${missed.conversations} was not repeated at ${conversations})`);
      missed = null;
      held = conversations;
      capacity[kind] = `at least ${held} (the highest level run)`;
      continue;
    }
    // One miss may be one slow turn in a few dozen (p95 of 6-24 replies is their worst one or two):
    // the kind ends at the second level in a row over the limit.
    if (missed) {
      capacity[kind] =
        `${held} (p95 ${missed.earP95} ms at ${missed.conversations}, ${row.earP95} ms at ${conversations})`;
      break;
    }
    missed = row;
    capacity[kind] = `${held} (p95 ${row.earP95} ms at ${conversations}; no higher level run)`;
  }
}
for (const [kind, held] of Object.entries(capacity))
  console.log(
    `capacity, ${kind}: voice-to-voice p95 at the callee's ear held ≤ ${p95LimitMs} ms up to ${held}`,
  );
for (const callee of Object.values(callees)) callee.child.stdin.end();
node.child.stdin.end();
vendors.child.kill('SIGTERM');
await Promise.all(
  started.map((child) => (child.exitCode === null ? new Promise((r) => child.once('exit', r)) : null)),
);
console.log(`bench:node done in ${((performance.now() - runStartedAt) / 1000).toFixed(0)} s`);
process.exit(0);
