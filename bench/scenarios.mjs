// npm run bench:scenarios — agent tests on this machine with the offline stack (flite speaking for
// the callee, pocketsphinx hearing it): (1) the example appointment suite
// (examples/scenarios/appointment, every scenario a sandbox call, all at once) — its wall time;
// (2) BENCH_CONCURRENT (24) scenario calls at once (the suite's human scenarios repeated) — the
// most calls in progress at the same moment (from the call records), the pass rate, the wall time
// and the slowest reply. A scenario that fails under load is counted and its first reason printed.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createAgent, parseVariableDeclaration } from '../dist/admin/agents.js';
import { createApiKey } from '../dist/admin/apiKeys.js';
import { addPhoneNumber } from '../dist/admin/numbers.js';
import { loadConfig } from '../dist/config.js';
import { createLogger } from '../dist/logger.js';
import { startService } from '../dist/server.js';

const concurrent = Number(process.env.BENCH_CONCURRENT ?? 24);
const root = resolve(import.meta.dirname, '..');
const scenarioDir = join(root, 'examples/scenarios/appointment');
const suite = readdirSync(scenarioDir)
  .filter((name) => name.endsWith('.json'))
  .sort()
  .map((name) => JSON.parse(readFileSync(join(scenarioDir, name), 'utf8')));

const dataDir = mkdtempSync(join(tmpdir(), 'callwright-bench-scenarios-'));
const config = loadConfig({
  PORT: '0',
  HOST: '127.0.0.1',
  CALLWRIGHT_DATA_DIR: dataDir,
  CALLWRIGHT_SIP_BIND: '127.0.0.1',
  CALLWRIGHT_PUBLIC_IP: '127.0.0.1',
  CALLWRIGHT_SIP_PORT: '0',
  CALLWRIGHT_RTP_PORTS: '30000-31998',
  CALLWRIGHT_RATE_LIMIT: '100000/1s',
  CALLWRIGHT_RING_TIMEOUT_S: '5',
});
const service = await startService(config, createLogger('error'));
const account = await service.store.accounts.create({ name: 'bench', maxLiveCalls: concurrent + 10 });
const { key } = await createApiKey(service.store, account.id, 'bench');
const agent = await createAgent(service.store, account.id, {
  name: 'Appointment confirmation',
  prompt: 'Confirm the appointment.',
  variables: ['customer_name', 'appointment_day=Tuesday'].map(parseVariableDeclaration),
  script: JSON.parse(readFileSync(join(root, 'examples/agents/appointment-confirmation.json'), 'utf8')),
  maxDurationS: 60,
});
await addPhoneNumber(service.store, account.id, '+15550009999');

async function api(path, body) {
  const response = await fetch(`${service.url}/v1${path}`, {
    method: body ? 'POST' : 'GET',
    headers: { 'X-API-Key': key, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/** Most calls in progress at once, from the answer and end times of the run's calls. */
async function mostAtOnce(callIds) {
  const edges = [];
  for (const id of callIds) {
    const call = await service.store.calls.get(account.id, id);
    if (!call?.inProgressAt || !call.endedAt) continue;
    edges.push([Date.parse(call.inProgressAt), 1], [Date.parse(call.endedAt), -1]);
  }
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let live = 0;
  let most = 0;
  for (const [, step] of edges) {
    live += step;
    most = Math.max(most, live);
  }
  return most;
}

async function run(label, body) {
  const startedAt = performance.now();
  const started = await api(`/agents/${agent.id}/tests`, body);
  let report = started;
  while (report.status !== 'completed') {
    await new Promise((done) => setTimeout(done, 250));
    report = await api(`/agents/${agent.id}/tests/${started.id}`);
  }
  const wallS = (performance.now() - startedAt) / 1000;
  const latencies = report.results.map((result) => result.max_latency_ms).filter((value) => value !== null);
  const atOnce = await mostAtOnce(report.results.map((result) => result.call_id));
  console.log(
    `${label}: ${report.summary.total} scenario calls, ${report.summary.passed} passed, ${report.summary.failed} failed, ` +
      `wall ${wallS.toFixed(1)} s, most in progress at once ${atOnce}, slowest reply ${Math.max(...latencies)} ms`,
  );
  for (const result of report.results.filter((entry) => entry.status === 'failed'))
    console.log(`  FAIL ${result.scenario} #${result.repeat}: ${result.failures[0]}`);
  return report;
}

try {
  console.log(`bench:scenarios — ${new Date().toISOString()}, ${suite.length} example scenarios`);
  await run('example suite', { scenarios: suite });
  const humans = suite.filter((scenario) => scenario.callee.answers === 'human');
  const repeat = Math.ceil(concurrent / humans.length);
  const scenarios = humans.slice(0, Math.ceil(concurrent / repeat));
  await run(`${scenarios.length} scenarios × ${repeat}`, { scenarios, repeat });
} finally {
  await service.close();
  rmSync(dataDir, { recursive: true, force: true });
}
