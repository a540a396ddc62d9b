import { readFileSync } from 'node:fs';
// The server side of `npm run bench:api`: the real application (real SQLite file, real hooks)
// plus one bare Fastify route that answers the same JSON without touching the store.

import { createAgent } from '../dist/admin/agents.js';
import { createApiKey } from '../dist/admin/apiKeys.js';
import { addPhoneNumber } from '../dist/admin/numbers.js';
import { buildApp } from '../dist/api/app.js';
import { MemoryRateLimiter } from '../dist/limits/rateLimiter.js';
import { createLogger } from '../dist/logger.js';
import { openSqliteStore } from '../dist/openStore.js';
import { startTracing } from '../dist/telemetry/tracing.js';

// Benchmarks measure the service, not the conversation: an agent that only listens.
const listenOnlyScript = JSON.parse(
  readFileSync(new URL('../test/fixtures/listen-only-script.json', import.meta.url), 'utf8'),
);

const [dbPath, logLevel = 'info'] = process.argv.slice(2);
const store = openSqliteStore(dbPath);
const account = await store.accounts.create({
  name: 'bench',
  ratePolicy: { requests: 100_000_000, windowS: 1 },
});
const { key } = await createApiKey(store, account.id, 'bench');
const agent = await createAgent(store, account.id, { name: 'bench', prompt: 'p', script: listenOnlyScript });
await addPhoneNumber(store, account.id, '+15550009999');

// BENCH_OTLP_TRACES_URL: tracing on, each create request a span exported there (its cost measured).
const tracing = process.env.BENCH_OTLP_TRACES_URL
  ? await startTracing(
      { otlpTracesUrl: process.env.BENCH_OTLP_TRACES_URL, serviceName: 'bench' },
      createLogger(logLevel),
    )
  : null;
const app = await buildApp({
  ...(tracing ? { tracer: tracing.tracer } : {}),
  store,
  config: {
    ratePolicy: { requests: 100_000_000, windowS: 1 },
    authFailurePolicy: { requests: 20, windowS: 60 },
    publicUrl: 'http://localhost',
    trustProxy: false,
  },
  logger: createLogger(logLevel),
  limiter: new MemoryRateLimiter(),
  version: 'bench',
});
const sample = {
  call_id: 'call_01JF3Z8V0Q4T7N5W2X9Y6B1C3D',
  status: 'queued',
  agent_id: agent.id,
  to_number: '+15550100001',
  from_number: '+15550009999',
  created_at: new Date().toISOString(),
};
app.post('/bench/bare', async () => sample);
const url = await app.listen({ port: 0, host: '127.0.0.1' });
process.send?.({ url, key, agentId: agent.id });
process.on('message', async (message) => {
  if (message === 'stop') {
    await app.close();
    await tracing?.shutdown();
    await store.close();
    process.exit(0);
  }
});
