// npm run demo — one real sandbox conversation, end to end: starts the embedded service, creates
// an account, a key, the example appointment agent and a caller ID, places a call to the sandbox
// person through the HTTP API, receives the signed call.completed event on a local receiver,
// verifies it, and prints the transcript, the extracted data and the recording, which it copies to
// ./demo-call.wav. Exits 0 only if all of that happened. Its data folder lives only while it runs.
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgent, parseVariableDeclaration } from '../dist/admin/agents.js';
import { createApiKey } from '../dist/admin/apiKeys.js';
import { addPhoneNumber } from '../dist/admin/numbers.js';
import { setWebhookEndpoint } from '../dist/admin/webhooks.js';
import { loadConfig } from '../dist/config.js';
import { createLogger } from '../dist/logger.js';
import { startService } from '../dist/server.js';
import { verifyWebhook } from '../dist/webhooks/verify.js';

const step = (text) => console.log(`\u25b8 ${text}`);
const fail = (text) => {
  console.error(`\u2717 ${text}`);
  process.exit(1);
};
const overallTimer = setTimeout(() => fail('the demo did not finish within 120 s'), 120_000);

const dataDir = mkdtempSync(join(tmpdir(), 'callwright-demo-'));
// However the demo ends (done, failed, Ctrl-C), its database, key and recordings go with it.
process.on('exit', () => rmSync(dataDir, { recursive: true, force: true }));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));
step(`starting callwright (embedded SQLite in ${dataDir}; loading the offline speech engines)`);
// A free port chosen up front, so the signed recording link names the real address.
const port = await new Promise((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port: free } = probe.address();
    probe.close(() => resolve(free));
  });
});
const config = loadConfig({
  PORT: String(port),
  CALLWRIGHT_PUBLIC_URL: `http://127.0.0.1:${port}`,
  CALLWRIGHT_DATA_DIR: dataDir,
  CALLWRIGHT_SIP_BIND: '127.0.0.1',
  CALLWRIGHT_SIP_PORT: '0',
  CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true',
  LOG_LEVEL: 'warn',
});
// The service's warnings, as readable lines among the demo's own. The dashboard's setup token is
// left out: the demo's database, and any account made with it, is gone when the demo ends.
const readableLog = {
  write(line) {
    let entry;
    try {
      entry = JSON.parse(line);
    } catch {
      return;
    }
    if (entry.event === 'dashboard_setup_token') return;
    console.log(`! ${entry.level >= 50 ? 'error' : 'warning'}: ${entry.msg}`);
  },
};
const service = await startService(config, createLogger('warn', readableLog));
step(`API listening on ${service.url}; sandbox carrier at ${service.calls.sandbox.sipUri}`);

let receivedEvent;
const received = new Promise((resolve) => {
  receivedEvent = resolve;
});
const receiver = createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    response.writeHead(204).end();
    receivedEvent({ headers: request.headers, body: Buffer.concat(chunks) });
  });
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const hookUrl = `http://127.0.0.1:${receiver.address().port}/hooks/callwright`;

const account = await service.store.accounts.create({ name: 'Demo clinic' });
const { key } = await createApiKey(service.store, account.id, 'demo');
const script = JSON.parse(
  readFileSync(new URL('../examples/agents/appointment-confirmation.json', import.meta.url), 'utf8'),
);
const agent = await createAgent(service.store, account.id, {
  name: 'Appointment confirmation',
  prompt: 'Confirm the appointment, or reschedule it to another weekday, or take a message.',
  variables: ['customer_name', 'appointment_day=Tuesday', 'reschedule_to='].map(parseVariableDeclaration),
  extraction: [],
  script,
  maxDurationS: 90,
});
await addPhoneNumber(service.store, account.id, '+15550009999');
const endpoint = await setWebhookEndpoint(service.store, service.secretBox, account.id, hookUrl, {
  allowPrivate: true,
});
step(`created an API key, the example agent ${agent.id}, caller ID +15550009999, webhook ${hookUrl}`);

const response = await fetch(`${service.url}/v1/calls/outbound`, {
  method: 'POST',
  headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
  body: JSON.stringify({
    agent_id: agent.id,
    from_number: '+15550009999',
    to_number: '+15550100001',
    variables: { customer_name: 'Ann', appointment_day: 'Tuesday', reschedule_to: 'Wednesday' },
  }),
});
const created = await response.json();
if (response.status !== 200)
  fail(`POST /v1/calls/outbound answered ${response.status}: ${JSON.stringify(created)}`);
step(`POST /v1/calls/outbound -> 200 ${created.call_id} (${created.status})`);

let lastStatus = created.status;
const watcher = setInterval(async () => {
  const record = await (
    await fetch(`${service.url}/v1/calls/${created.call_id}`, { headers: { 'X-API-Key': key } })
  ).json();
  if (record.status !== lastStatus) {
    lastStatus = record.status;
    step(`call is ${record.status}${record.end_reason ? ` (${record.end_reason})` : ''}`);
  }
}, 200);

const delivery = await received;
clearInterval(watcher);
let event;
try {
  event = verifyWebhook(endpoint.secret, delivery.headers, delivery.body);
} catch (error) {
  fail(`the webhook signature did not verify: ${error.message}`);
}
step(
  `received call.completed ${event.id} (webhook-id ${delivery.headers['webhook-id']}); signature verified`,
);
if (event.data.call_id !== created.call_id) fail('the event is for another call');

console.log('\nTranscript:');
for (const entry of event.data.transcript) {
  const at = `${(entry.start_ms / 1000).toFixed(1).padStart(5)} s`;
  console.log(`  ${at}  ${entry.role === 'agent' ? 'agent ' : 'callee'}  ${entry.text}`);
}
console.log(
  `\nStatus: ${event.data.status} / ${event.data.end_reason}, answered by ${event.data.answered_by}, ${event.data.duration_seconds} s`,
);
console.log(`Extracted data: ${JSON.stringify(event.data.extracted_data)}`);
console.log(
  `Response latency: p50 ${event.data.metrics.response_latency_ms.p50} ms, p95 ${event.data.metrics.response_latency_ms.p95} ms`,
);
const call = await service.store.calls.getById(created.call_id);
const recordingCopy = join(process.cwd(), 'demo-call.wav');
if (call.recordingPath) copyFileSync(call.recordingPath, recordingCopy);
console.log(`Recording: ${recordingCopy} (stereo WAV: callee left, agent right)`);

const ok =
  event.data.status === 'completed' &&
  event.data.transcript.length >= 3 &&
  call.recordingPath &&
  Object.keys(event.data.extracted_data).length > 0;
clearTimeout(overallTimer);
receiver.close();
await service.close();
if (!ok) fail('the conversation did not complete as expected');
console.log('\n\u2713 demo complete');
process.exit(0);
