// npm run bench:amd — the early answering-machine decision, end to end: real calls through the
// sandbox carrier (SIP, RTP, the sandbox's flite voice saying each greeting), a script agent that
// waits for the decision. For each greeting: who callwright decided answered, how sure it was, and
// when it knew (ms from the answer). Classes: people who say little, people who say more, voicemail
// greetings followed by a beep and the same greetings with no beep. Prints accuracy per class,
// decision times, and every miss. BENCH_MACHINE_SPEECH_MS sets the agent's machine_speech_ms.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgent, parseVariableDeclaration } from '../dist/admin/agents.js';
import { createApiKey } from '../dist/admin/apiKeys.js';
import { addPhoneNumber } from '../dist/admin/numbers.js';
import { loadConfig } from '../dist/config.js';
import { createLogger } from '../dist/logger.js';
import { startService } from '../dist/server.js';

const briefGreetings = [
  'Hello?',
  'Hi.',
  'Yes?',
  'Hello, who is this?',
  'Hey.',
  'Good morning.',
  'Yeah, hello?',
  'Speaking.',
];
const longerGreetings = [
  'Hello, Sam speaking.',
  'Hi, this is Dana.',
  'Good afternoon, Acme Plumbing.',
  'Hello, this is Robert.',
  'Hi there, how can I help?',
  'Morning, Jenny here.',
  'Hello, front desk.',
  'Yes, hello, who is calling?',
];
const voicemailGreetings = [
  'Hi, you have reached Sam. I cannot take your call right now. Please leave a message after the tone.',
  'The person you are calling is not available. Please leave a message.',
  "Hello, you've reached the Miller family. We're not home right now, leave us a message and we'll call you back.",
  'This is Dana. Sorry I missed your call. Leave your name and number and I will get back to you.',
  'You have reached the voicemail box of five five five, zero one two three. Please record your message.',
  'Thanks for calling Acme Plumbing. Our office is closed. Please leave a message.',
  "Hey, it's Robert. Leave a message.",
  "Hi, this is Jenny. I can't come to the phone right now.",
];

const classes = [
  { name: 'person, brief greeting', to: '+15550100015', expected: 'human', greetings: briefGreetings },
  { name: 'person, longer greeting', to: '+15550100016', expected: 'human', greetings: longerGreetings },
  { name: 'voicemail with beep', to: '+15550100004', expected: 'machine', greetings: voicemailGreetings },
  { name: 'voicemail, no beep', to: '+15550100014', expected: 'machine', greetings: voicemailGreetings },
];
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 4);

const dataDir = mkdtempSync(join(tmpdir(), 'callwright-bench-amd-'));
const config = loadConfig({
  PORT: '0',
  HOST: '127.0.0.1',
  CALLWRIGHT_DATA_DIR: dataDir,
  CALLWRIGHT_SIP_BIND: '127.0.0.1',
  CALLWRIGHT_PUBLIC_IP: '127.0.0.1',
  CALLWRIGHT_SIP_PORT: '0',
  CALLWRIGHT_RTP_PORTS: '41000-41998',
  CALLWRIGHT_RATE_LIMIT: '100000/1s',
});
const service = await startService(config, createLogger('warn'));
const account = await service.store.accounts.create({ name: 'bench', maxLiveCalls: 100 });
const { key } = await createApiKey(service.store, account.id, 'bench');
const agent = await createAgent(service.store, account.id, {
  name: 'bench',
  prompt: 'p',
  variables: ['sandbox_greeting='].map(parseVariableDeclaration),
  script: {
    start: 'greet',
    nodes: { greet: { say: 'Hello, this is the clinic. Goodbye.', end: true } },
  },
  settings: {
    voicemail: {
      action: 'hang_up',
      wait_for_decision: true,
      ...(process.env.BENCH_MACHINE_SPEECH_MS
        ? { machine_speech_ms: Number(process.env.BENCH_MACHINE_SPEECH_MS) }
        : {}),
    },
  },
  maxDurationS: 20,
});
await addPhoneNumber(service.store, account.id, '+15550009999');

async function placeAndWait(to, greeting) {
  const response = await fetch(`${service.url}/v1/calls/outbound`, {
    method: 'POST',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      agent_id: agent.id,
      from_number: '+15550009999',
      to_number: to,
      variables: { sandbox_greeting: greeting },
    }),
  });
  const { call_id: callId } = await response.json();
  for (;;) {
    const call = await service.store.calls.getById(callId);
    if (call && ['completed', 'busy', 'no_answer', 'failed', 'canceled'].includes(call.status)) return call;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const jobs = classes.flatMap((kind) => kind.greetings.map((greeting) => ({ kind, greeting })));
const results = [];
let next = 0;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < jobs.length) {
      const job = jobs[next++];
      const call = await placeAndWait(job.kind.to, job.greeting);
      const figures = call.metrics?.answering_machine ?? null;
      results.push({ ...job, answeredBy: call.answeredBy, figures });
    }
  }),
);

const percentile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : null;
};
console.log(
  `bench:amd — ${results.length} calls through the sandbox, ${concurrency} at a time, machine_speech_ms ${process.env.BENCH_MACHINE_SPEECH_MS ?? 'default'}\n`,
);
console.log('class                      | right | of | decision ms p50 / p95 / max | confidence (mean)');
let right = 0;
for (const kind of classes) {
  const mine = results.filter((result) => result.kind === kind);
  const correct = mine.filter((result) => result.answeredBy === kind.expected);
  right += correct.length;
  const times = mine.map((result) => result.figures?.decision_ms).filter((value) => value !== undefined);
  const confidence =
    mine.reduce((sum, result) => sum + (result.figures?.confidence ?? 0), 0) / Math.max(1, mine.length);
  console.log(
    `${kind.name.padEnd(26)} | ${String(correct.length).padStart(5)} | ${String(mine.length).padStart(2)} | ${[
      percentile(times, 0.5),
      percentile(times, 0.95),
      Math.max(...times),
    ].join(' / ')} | ${confidence.toFixed(2)}`,
  );
}
console.log(`\naccuracy: ${right} of ${results.length} (${((100 * right) / results.length).toFixed(1)} %)`);
const misses = results.filter((result) => result.answeredBy !== result.kind.expected);
if (misses.length) console.log('\nmisses:');
for (const miss of misses)
  console.log(
    `  ${miss.kind.name}: "${miss.greeting}" → ${miss.answeredBy} (${miss.figures?.reason}, ${miss.figures?.decision_ms} ms)`,
  );
await service.close();
rmSync(dataDir, { recursive: true, force: true });
