// npm run bench:callerid — caller-ID health end to end (issue 37): a sandbox campaign dials from a
// pool of three caller IDs over real SIP and RTP; every callee answers (then hangs up after 2 s),
// except that one of the three numbers is "labelled as spam" after BENCH_ANSWERED_CALLS (10) calls:
// from its next call on, every callee lets it ring out (the sandbox's +15550199 + K caller IDs,
// src/telephony/sandbox/personas.ts). Prints after how many of that number's calls — unanswered
// ones, and all — and how long after its first unanswered call it was rested (`number.rested`),
// and how the calls placed after the rest spread over the pool. BENCH_CONTACTS (150), BENCH_PACE
// (calls/min, 120), BENCH_CONCURRENCY (10), BENCH_WINDOW / BENCH_MIN_ATTEMPTS / BENCH_MIN_SHARE
// (caller_id_health; the defaults 20 / 10 / 0.5), DATABASE_URL (PostgreSQL instead of SQLite).
import { createServer } from 'node:http';
import { startCampaignBenchService } from './benchService.mjs';

const contactCount = Number(process.env.BENCH_CONTACTS ?? 150);
const pace = Number(process.env.BENCH_PACE ?? 120);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 10);
const answeredCalls = Number(process.env.BENCH_ANSWERED_CALLS ?? 10);
const health = {
  window_attempts: Number(process.env.BENCH_WINDOW ?? 20),
  min_attempts: Number(process.env.BENCH_MIN_ATTEMPTS ?? 10),
  min_share_of_pool: Number(process.env.BENCH_MIN_SHARE ?? 0.5),
  rest_minutes: 60,
};
const labelled = `+15550199${String(answeredCalls).padStart(4, '0')}`;
const pool = ['+15550009991', labelled, '+15550009993'];
const storeName = process.env.DATABASE_URL ? 'PostgreSQL' : 'SQLite';

const bench = await startCampaignBenchService({
  name: 'callerid',
  concurrency,
  callerIds: pool,
  env: { CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true' },
});
const { service, key, agent } = bench;

const api = async (path, init = {}) => {
  const response = await fetch(`${service.url}/v1${path}`, {
    method: init.method ?? 'GET',
    headers: { 'X-API-Key': key, ...(init.body ? { 'Content-Type': 'application/json' } : {}) },
    ...(init.body ? { body: init.body } : {}),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(body).slice(0, 500)}`);
  return body;
};

// number.rested is an opt-in webhook: a receiver on loopback keeps the ones delivered.
const restedDeliveries = [];
const receiver = createServer((request, response) => {
  let text = '';
  request.on('data', (chunk) => {
    text += chunk;
  });
  request.on('end', () => {
    const event = JSON.parse(text);
    if (event.type === 'number.rested') restedDeliveries.push({ atMs: Date.now(), data: event.data });
    response.writeHead(204).end();
  });
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
await api('/webhook', {
  method: 'PUT',
  body: JSON.stringify({ url: `http://127.0.0.1:${receiver.address().port}/hooks` }),
});
await api('/webhook/events', { method: 'PUT', body: JSON.stringify({ events: ['number.rested'] }) });

// Callees who answer and hang up after 2 s (the answers_then_hangs_up persona, distinct numbers).
const contacts = Array.from({ length: contactCount }, (_, index) => ({
  to_number: `+15550100006${String(index).padStart(4, '0')}`,
}));
const startedAt = Date.now();
const campaign = await api('/campaigns', {
  method: 'POST',
  body: JSON.stringify({
    name: 'caller-ID health bench',
    agent_id: agent.id,
    caller_ids: pool,
    calling_window: { start: '00:00', end: '23:59' },
    time_zone: 'UTC',
    max_concurrency: concurrency,
    calls_per_minute: pace,
    max_daily_attempts: 10,
    retry: {},
    caller_id_health: health,
    contacts,
  }),
});

let restedAtMs = null;
for (;;) {
  const now = await api(`/campaigns/${campaign.campaign_id}`);
  const row = now.caller_id_status.find((status) => status.number === labelled);
  if (restedAtMs === null && row?.status === 'rested')
    restedAtMs = Date.parse(row.rested_until) - health.rest_minutes * 60_000;
  if (now.status === 'completed') break;
  if (Date.now() - startedAt > 15 * 60_000) throw new Error('the campaign did not complete in 15 minutes');
  await new Promise((resolve) => setTimeout(resolve, 250));
}
const totalMs = Date.now() - startedAt;

// Every attempt with its caller ID and outcome, in the order the calls were placed.
const calls = [];
for (let after = -1; ; ) {
  const page = await api(`/campaigns/${campaign.campaign_id}/contacts?limit=500&after=${after}`);
  for (const contact of page.data)
    for (const attempt of contact.calls) {
      const call = await service.store.calls.getById(attempt.call_id);
      calls.push({
        from: call.fromNumber,
        createdAtMs: Date.parse(attempt.created_at),
        answered: attempt.status === 'completed',
      });
    }
  if (page.next_after === null) break;
  after = page.next_after;
}
calls.sort((a, b) => a.createdAtMs - b.createdAtMs);
const fromLabelled = calls.filter((call) => call.from === labelled);
const firstUnanswered = fromLabelled.find((call) => !call.answered);
const beforeRest =
  restedAtMs === null ? fromLabelled : fromLabelled.filter((c) => c.createdAtMs <= restedAtMs);
const unansweredBeforeRest = beforeRest.filter((call) => !call.answered).length;
const afterRest = restedAtMs === null ? [] : calls.filter((call) => call.createdAtMs > restedAtMs);
const spread = pool.map((number) => afterRest.filter((call) => call.from === number).length);
// The delivery worker may still be on its way with the webhook.
for (
  let waitedMs = 0;
  restedAtMs !== null && restedDeliveries.length === 0 && waitedMs < 10_000;
  waitedMs += 100
)
  await new Promise((resolve) => setTimeout(resolve, 100));

console.log(
  `bench:callerid — ${contactCount} contacts on ${storeName}, sandbox carrier over SIP/RTP; pool of ${pool.length}, ` +
    `one number labelled after ${answeredCalls} answered calls; caller_id_health ${JSON.stringify(health)}; ` +
    `pace ${pace}/min, concurrency ${concurrency}`,
);
if (restedAtMs === null) {
  console.log(`  the labelled number was NOT rested (${fromLabelled.length} calls from it)`);
} else {
  console.log(
    `  rested after ${beforeRest.length} of its calls (${unansweredBeforeRest} unanswered), ` +
      `${((restedAtMs - (firstUnanswered?.createdAtMs ?? restedAtMs)) / 1000).toFixed(1)} s after its first unanswered call was placed, ` +
      `${((restedAtMs - startedAt) / 1000).toFixed(1)} s into the campaign`,
  );
  console.log(
    `  calls placed after the rest: ${afterRest.length} — ${pool
      .map((number, index) => `${number === labelled ? 'labelled' : number.slice(-4)} ${spread[index]}`)
      .join(', ')}`,
  );
}
const rest = restedDeliveries[0]?.data;
console.log(
  `  number.rested webhooks received: ${restedDeliveries.length}` +
    (rest
      ? ` — its window at the rest: ${rest.attempts} finished calls, answer rate ${rest.answer_rate} against the pool's ${rest.pool_answer_rate.toFixed(2)}`
      : ''),
);
console.log(`  campaign: ${calls.length} calls, ${(totalMs / 1000).toFixed(1)} s to complete`);

await bench.close();
receiver.close();
