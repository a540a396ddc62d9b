// node bench/apiTraces.mjs (after npm run build) — what tracing costs the create path, and whether
// every request's span arrives: the same number of POST /v1/calls/outbound (AMOUNT, default
// 20,000, at 64 connections) against bench/apiServer.mjs with tracing off, then on, exporting to a
// real OTLP/HTTP receiver in this process that counts the request spans it decodes.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';

const amount = Number(process.env.AMOUNT ?? 20_000);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
let requestSpans = 0;
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const request = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    for (const resourceSpans of request.resourceSpans)
      for (const scopeSpans of resourceSpans.scopeSpans)
        requestSpans += scopeSpans.spans.filter((span) => span.name === 'POST /v1/calls/outbound').length;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const tracesUrl = `http://127.0.0.1:${receiver.address().port}/v1/traces`;

async function measure(tracing) {
  const dir = mkdtempSync(join(tmpdir(), 'callwright-bench-traces-'));
  const server = fork(new URL('./apiServer.mjs', import.meta.url), [join(dir, 'callwright.db'), 'warn'], {
    env: { ...process.env, ...(tracing ? { BENCH_OTLP_TRACES_URL: tracesUrl } : {}) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const { url, key, agentId } = await new Promise((resolve) => server.once('message', resolve));
  const options = {
    url: `${url}/v1/calls/outbound`,
    method: 'POST',
    connections,
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body: JSON.stringify({ agent_id: agentId, from_number: '+15550009999', to_number: '+15550100001' }),
  };
  const warmUp = await autocannon({ ...options, amount: Math.min(amount, 5_000) });
  const result = await autocannon({ ...options, amount });
  server.send('stop'); // closes the app, then shuts the tracer provider down (sends what is batched)
  await new Promise((resolve) => server.once('exit', resolve));
  rmSync(dir, { recursive: true, force: true });
  // Every span of the run, the warm-up's included (a batch may straddle the two).
  return { result, created: warmUp['2xx'] + result['2xx'], spans: requestSpans };
}

const off = await measure(false);
const on = await measure(true);
receiver.close();
const line = (name, { result }) =>
  `${name.padEnd(12)} ${String(Math.round(result.requests.average)).padStart(6)} req/s  p50 ${String(result.latency.p50).padStart(3)} ms  p99 ${String(result.latency.p99).padStart(4)} ms  2xx ${result['2xx']}`;
console.log(`bench apiTraces — ${amount} creates at ${connections} connections, Node ${process.version}`);
console.log(line('tracing off', off));
console.log(line('tracing on', on));
console.log(`request spans received ${on.spans} of ${on.created} creates (warm-up included)`);
if (on.spans !== on.created) process.exitCode = 1;
