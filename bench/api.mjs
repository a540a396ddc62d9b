// npm run bench:api — the create-call endpoint against a bare Fastify route on the same server,
// at 64 connections, then a check that every 200 has its durable row.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';

const durationS = Number(process.env.BENCH_DURATION_S ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const dir = mkdtempSync(join(tmpdir(), 'callwright-bench-'));
const dbPath = join(dir, 'callwright.db');

const server = fork(new URL('./apiServer.mjs', import.meta.url), [dbPath, process.env.LOG_LEVEL ?? 'info'], {
  execArgv: process.env.BENCH_CPU_PROF_DIR
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`]
    : [],
  stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
});
const { url, key, agentId } = await new Promise((resolve) => server.once('message', resolve));
const body = JSON.stringify({ agent_id: agentId, from_number: '+15550009999', to_number: '+15550100001' });
const headers = { 'X-API-Key': key, 'Content-Type': 'application/json' };

function run(path, onBody) {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `${url}${path}`,
        method: 'POST',
        headers,
        body,
        connections,
        duration: durationS,
        requests: onBody
          ? [{ method: 'POST', onResponse: (status, responseBody) => onBody(status, responseBody) }]
          : undefined,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

const acceptedCallIds = [];
// Warm both paths up (JIT, SQLite page cache), then measure.
await run('/bench/bare');
await run('/v1/calls/outbound');
const bare = await run('/bench/bare');
const create = await run('/v1/calls/outbound', (status, responseBody) => {
  if (status === 200) acceptedCallIds.push(JSON.parse(responseBody).call_id);
});

server.send('stop');
await new Promise((resolve) => server.once('exit', resolve));

const db = new Database(dbPath, { readonly: true });
// Two set lookups per call (a JSON scan of the jobs table per call would be quadratic).
const queuedRows = new Set(db.prepare("SELECT id FROM calls WHERE status = 'queued'").pluck().all());
const dispatchJobs = new Set(
  db
    .prepare("SELECT json_extract(payload, '$.call_id') FROM jobs WHERE queue = 'call.dispatch'")
    .pluck()
    .all(),
);
let missingRows = 0;
let missingJobs = 0;
for (const id of acceptedCallIds) {
  if (!queuedRows.has(id)) missingRows++;
  if (!dispatchJobs.has(id)) missingJobs++;
}
db.close();
rmSync(dir, { recursive: true, force: true });

const line = (name, r) =>
  `${name.padEnd(22)} ${String(Math.round(r.requests.average)).padStart(7)} req/s  p50 ${String(r.latency.p50).padStart(4)} ms  p99 ${String(r.latency.p99).padStart(4)} ms  non-2xx ${r.non2xx}  errors ${r.errors}`;
const ratio = create.requests.average / bare.requests.average;
console.log(
  `bench:api — ${connections} connections, ${durationS} s per run, Node ${process.version}, log level ${process.env.LOG_LEVEL ?? 'info'}`,
);
console.log(line('bare Fastify route', bare));
console.log(line('POST /v1/calls/outbound', create));
console.log(
  `throughput ratio ${ratio.toFixed(2)} (target >= 0.5); create p99 ${create.latency.p99} ms (target <= 25 ms)`,
);
console.log(
  `durability: ${acceptedCallIds.length} calls answered 200; ${missingRows} without their row, ${missingJobs} without their dispatch job`,
);
if (missingRows > 0 || missingJobs > 0 || create.non2xx > 0) process.exitCode = 1;

if (process.argv.includes('--postgres')) {
  const { benchPostgres } = await import('./apiPostgres.mjs');
  const figures = await benchPostgres({ durationS, connections });
  console.log(
    `${'PostgreSQL, 2 API procs'.padEnd(22)} ${String(Math.round(figures.requestsPerSecond)).padStart(7)} req/s  p50 ${String(figures.p50Ms).padStart(4)} ms  p99 ${String(figures.p99Ms).padStart(4)} ms  non-2xx ${figures.non2xx}  (embedded: ${Math.round(create.requests.average)} req/s, p99 ${create.latency.p99} ms)`,
  );
  console.log(
    `PostgreSQL throughput per 5 s: ${figures.requestsPerSecondBy5s.map((perSecond) => Math.round(perSecond)).join(', ')} req/s`,
  );
  const postgresRatio = figures.requestsPerSecond / create.requests.average;
  console.log(
    `PostgreSQL / embedded ${postgresRatio.toFixed(2)} (target >= 0.30); PostgreSQL p99 ${figures.p99Ms} ms (target <= 50 ms)`,
  );
  console.log(
    `durability (PostgreSQL): ${figures.accepted} calls answered 200; ${figures.missingRows} without their row, ${figures.missingJobs} without their dispatch job`,
  );
  if (figures.missingRows > 0 || figures.missingJobs > 0 || figures.non2xx > 0) process.exitCode = 1;
}
