// npm run bench:webhooks — call.completed delivery: (1) latency from a call becoming terminal to the
// receiver's 2xx at idle, over real sandbox calls; (2) how fast a backlog of pending events drains.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgent } from '../dist/admin/agents.js';
import { createApiKey } from '../dist/admin/apiKeys.js';
import { addPhoneNumber } from '../dist/admin/numbers.js';
import { setWebhookEndpoint } from '../dist/admin/webhooks.js';
import { completedEventBuilder } from '../dist/calls/completedEvents.js';
import { loadConfig } from '../dist/config.js';
import { newId } from '../dist/domain/ids.js';
import { createLogger } from '../dist/logger.js';
import { openSqliteStore } from '../dist/openStore.js';
import { SecretBox } from '../dist/secrets/secretBox.js';
import { startService } from '../dist/server.js';
import { startDeliveryWorker } from '../dist/webhooks/deliveryWorker.js';

// Benchmarks measure the service, not the conversation: an agent that only listens.
const listenOnlyScript = JSON.parse(
  readFileSync(new URL('../test/fixtures/listen-only-script.json', import.meta.url), 'utf8'),
);

const latencyCalls = Number(process.env.BENCH_CALLS ?? 100);
const backlogEvents = Number(process.env.BENCH_BACKLOG ?? 10_000);
const logger = createLogger(process.env.LOG_LEVEL ?? 'silent');

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** A receiver on loopback that answers 204 and reports each webhook-id with the time of its answer. */
async function startReceiver(onDelivered) {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(204).end();
      onDelivered(req.headers['webhook-id'], Date.now());
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/hook`, close: () => server.close() };
}

async function idleLatency() {
  const dataDir = mkdtempSync(join(tmpdir(), 'callwright-bench-webhooks-'));
  const waiting = new Map();
  const receiver = await startReceiver((id, atMs) => waiting.get(id)?.(atMs));
  const service = await startService(
    loadConfig({
      PORT: '0',
      CALLWRIGHT_DATA_DIR: dataDir,
      CALLWRIGHT_SIP_BIND: '127.0.0.1',
      CALLWRIGHT_SIP_PORT: '0',
      CALLWRIGHT_RTP_PORTS: '40000-40098',
      CALLWRIGHT_RATE_LIMIT: '100000/10s',
      CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true',
    }),
    logger,
  );
  const { store } = service;
  const account = await store.accounts.create({ name: 'bench' });
  const { key } = await createApiKey(store, account.id, 'bench');
  const agent = await createAgent(store, account.id, {
    name: 'bench',
    prompt: 'p',
    script: listenOnlyScript,
    maxDurationS: 2,
  });
  await addPhoneNumber(store, account.id, '+15550009999');
  await setWebhookEndpoint(store, service.secretBox, account.id, receiver.url, { allowPrivate: true });
  const latenciesMs = [];
  for (let i = 0; i < latencyCalls; i++) {
    const response = await fetch(`${service.url}/v1/calls/outbound`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
      // The unreachable persona: the call becomes terminal as soon as the carrier answers 404.
      body: JSON.stringify({ agent_id: agent.id, from_number: '+15550009999', to_number: '+15550100005' }),
    });
    const { call_id: callId } = await response.json();
    let event;
    for (;;) {
      [event] = (await store.events.list(account.id, { limit: 1 })).filter((each) => each.callId === callId);
      if (event) break;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const deliveredAtMs = await new Promise((resolve) => {
      waiting.set(event.id, resolve);
      store.events.getById(event.id).then((current) => {
        if (current?.status === 'delivered' && current.deliveredAt) resolve(undefined);
      });
    });
    waiting.delete(event.id);
    const call = await store.calls.getById(callId);
    const endedAtMs = Date.parse(call.endedAt);
    // Fallback when the delivery finished before we listened: the stored attempt time plus its latency.
    const attempts = await store.events.attempts(event.id);
    const doneAtMs = deliveredAtMs ?? Date.parse(attempts[0].attemptedAt) + attempts[0].latencyMs;
    latenciesMs.push(doneAtMs - endedAtMs);
  }
  await service.close();
  receiver.close();
  rmSync(dataDir, { recursive: true, force: true });
  latenciesMs.sort((a, b) => a - b);
  return {
    calls: latencyCalls,
    p50Ms: percentile(latenciesMs, 50),
    p99Ms: percentile(latenciesMs, 99),
    maxMs: latenciesMs.at(-1),
  };
}

async function backlogDrain() {
  const dataDir = mkdtempSync(join(tmpdir(), 'callwright-bench-backlog-'));
  const store = openSqliteStore(join(dataDir, 'callwright.db'));
  const secretBox = new SecretBox(randomBytes(32));
  const account = await store.accounts.create({ name: 'backlog' });
  const { record } = await createApiKey(store, account.id, 'bench');
  const agent = await createAgent(store, account.id, {
    name: 'bench',
    prompt: 'p',
    script: listenOnlyScript,
  });
  const buildEvent = completedEventBuilder(() => null);
  // The pending backlog: terminal calls with their outbox rows and jobs, written before any worker runs.
  for (let start = 0; start < backlogEvents; start += 500) {
    const batch = [];
    for (let i = start; i < Math.min(backlogEvents, start + 500); i++) {
      const id = newId('call');
      const at = new Date().toISOString();
      batch.push(
        store.calls
          .createQueued({
            id,
            accountId: account.id,
            agentId: agent.id,
            apiKeyId: record.id,
            fromNumber: '+15550009999',
            toNumber: '+15550100001',
            firstMessage: null,
            context: null,
            variables: null,
            createdAt: at,
          })
          .then(() =>
            store.calls.finish(id, { status: 'busy', endReason: 'rejected', atIso: at }, buildEvent),
          ),
      );
    }
    await Promise.all(batch);
  }
  let delivered = 0;
  let resolveDone;
  const done = new Promise((resolve) => {
    resolveDone = resolve;
  });
  const receiver = await startReceiver(() => {
    delivered++;
  });
  await setWebhookEndpoint(store, secretBox, account.id, receiver.url, { allowPrivate: true });
  const startedAtMs = Date.now();
  const worker = startDeliveryWorker({
    events: store.events,
    endpoints: store.webhookEndpoints,
    queue: store.queue,
    logger,
    secretBox,
    allowPrivate: true,
    workerId: 'bench',
  });
  const timer = setInterval(async () => {
    if ((await store.queue.depth('webhook.deliver')).count === 0) resolveDone();
  }, 20);
  await done;
  const elapsedMs = Date.now() - startedAtMs;
  clearInterval(timer);
  await worker.stop();
  const failed = (await store.events.list(account.id, { limit: backlogEvents })).filter(
    (event) => event.status !== 'delivered',
  ).length;
  await store.close();
  receiver.close();
  rmSync(dataDir, { recursive: true, force: true });
  return {
    events: backlogEvents,
    receiverHits: delivered,
    notDelivered: failed,
    elapsedMs,
    eventsPerS: Math.round((backlogEvents / elapsedMs) * 1000),
  };
}

const idle = await idleLatency();
console.log(
  `idle latency, terminal → receiver 2xx (${idle.calls} sandbox calls): p50 ${idle.p50Ms} ms, p99 ${idle.p99Ms} ms, max ${idle.maxMs} ms (target p99 ≤ 500 ms: ${idle.p99Ms <= 500 ? 'met' : 'MISSED'})`,
);
const drain = await backlogDrain();
console.log(
  `backlog drain: ${drain.events} events in ${drain.elapsedMs} ms = ${drain.eventsPerS} events/s (target ≥ 500: ${drain.eventsPerS >= 500 ? 'met' : 'MISSED'}); receiver hits ${drain.receiverHits}, not delivered ${drain.notDelivered}`,
);
process.exit(0);
