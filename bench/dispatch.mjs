// npm run bench:dispatch — at idle, the time from the 200 of POST /v1/calls/outbound to the INVITE
// arriving at the carrier (the in-process sandbox records each INVITE as it receives it).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgent } from '../dist/admin/agents.js';
import { createApiKey } from '../dist/admin/apiKeys.js';
import { addPhoneNumber } from '../dist/admin/numbers.js';
import { loadConfig } from '../dist/config.js';
import { createLogger } from '../dist/logger.js';
import { startService } from '../dist/server.js';

// Benchmarks measure the service, not the conversation: an agent that only listens.
const listenOnlyScript = JSON.parse(
  readFileSync(new URL('../test/fixtures/listen-only-script.json', import.meta.url), 'utf8'),
);

const calls = Number(process.env.BENCH_CALLS ?? 200);
const dataDir = mkdtempSync(join(tmpdir(), 'callwright-bench-dispatch-'));
const config = loadConfig({
  PORT: '0',
  CALLWRIGHT_DATA_DIR: dataDir,
  CALLWRIGHT_SIP_BIND: '127.0.0.1',
  CALLWRIGHT_SIP_PORT: '0',
  CALLWRIGHT_RTP_PORTS: '40000-40998',
  CALLWRIGHT_RATE_LIMIT: '100000/1s',
});
const service = await startService(config, createLogger('warn'));
const account = await service.store.accounts.create({ name: 'bench', maxLiveCalls: 1000 });
const { key } = await createApiKey(service.store, account.id, 'bench');
const agent = await createAgent(service.store, account.id, {
  name: 'bench',
  prompt: 'p',
  script: listenOnlyScript,
  maxDurationS: 1,
});
await addPhoneNumber(service.store, account.id, '+15550009999');

// The unreachable persona answers 404 at once, so calls end quickly and the machine stays idle.
const body = JSON.stringify({ agent_id: agent.id, from_number: '+15550009999', to_number: '+15550100005' });
const delaysMs = [];
for (let i = 0; i < calls; i++) {
  const before = (await service.store.sandboxInvites.list()).length;
  const response = await fetch(`${service.url}/v1/calls/outbound`, {
    method: 'POST',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body,
  });
  const answeredAt = performance.timeOrigin + performance.now();
  await response.json();
  let invite;
  for (;;) {
    const invites = await service.store.sandboxInvites.list();
    if (invites.length > before) {
      invite = invites.at(-1);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  delaysMs.push(Date.parse(invite.receivedAt) - answeredAt);
  await new Promise((resolve) => setTimeout(resolve, 20));
}
await service.close();
rmSync(dataDir, { recursive: true, force: true });

delaysMs.sort((a, b) => a - b);
const at = (q) => delaysMs[Math.min(delaysMs.length - 1, Math.floor(q * delaysMs.length))];
console.log(`bench:dispatch — ${calls} calls one at a time, Node ${process.version}`);
console.log(
  `200 -> INVITE at the carrier: p50 ${Math.max(0, at(0.5)).toFixed(1)} ms, p99 ${Math.max(0, at(0.99)).toFixed(1)} ms, max ${at(1).toFixed(1)} ms (target p99 <= 100 ms)`,
);
console.log('(timestamps have 1 ms resolution: the INVITE time comes from the sandbox record)');
