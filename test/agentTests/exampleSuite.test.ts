import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { startFullService } from '../helpers/fullService.js';
import { jsonApi } from '../helpers/http.js';

/**
 * The example appointment agent's scenario suite (examples/scenarios/appointment), run through the
 * public API as a user runs it: every scenario a real sandbox call in parallel, the callee's lines
 * spoken by flite over RTP, the agent's real pipeline, each call judged against its expectations.
 */

const examples = resolve(import.meta.dirname, '../../examples');
const scenarioDir = resolve(examples, 'scenarios/appointment');
const scenarios = readdirSync(scenarioDir)
  .filter((name) => name.endsWith('.json'))
  .map((name) => JSON.parse(readFileSync(resolve(scenarioDir, name), 'utf8')) as { name: string });
const script = JSON.parse(readFileSync(resolve(examples, 'agents/appointment-confirmation.json'), 'utf8'));

let service: Awaited<ReturnType<typeof startFullService>>;
let key = '';
let agentId = '';
const api = jsonApi(
  () => service.url,
  () => key,
);

interface Report {
  id: string;
  status: string;
  summary: { total: number; passed: number; failed: number; running: number };
  results: { scenario: string; status: string; failures: string[]; transcript?: unknown[] }[];
}

async function runToEnd(body: unknown, timeoutMs: number): Promise<Report> {
  const started = await api(`/agents/${agentId}/tests`, { method: 'POST', body });
  expect(started.status, started.text).toBe(201);
  const run = started.body as Report;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const read = await api(`/agents/${agentId}/tests/${run.id}`);
    expect(read.status).toBe(200);
    const report = read.body as Report;
    if (report.status === 'completed' || Date.now() > deadline) return report;
    await new Promise((done) => setTimeout(done, 500));
  }
}

beforeAll(async () => {
  service = await startFullService({ CALLWRIGHT_WORKER_MAX_CALLS: '30' });
  const account = await service.store.accounts.create({ name: 'tests', maxLiveCalls: 30 });
  key = (await createApiKey(service.store, account.id, 'tests')).key;
  agentId = (
    await createAgent(service.store, account.id, {
      name: 'Appointment confirmation',
      prompt: 'Confirm the appointment.',
      variables: ['customer_name', 'appointment_day=Tuesday'].map(parseVariableDeclaration),
      script,
      maxDurationS: 45,
    })
  ).id;
  await addPhoneNumber(service.store, account.id, '+15550009999');
});

afterAll(async () => {
  await service?.dispose();
});

describe('the example appointment suite', () => {
  it(`passes all ${scenarios.length} scenarios, run in parallel as sandbox calls`, async () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(8);
    const report = await runToEnd({ scenarios }, 120_000);
    const failed = report.results.filter((result) => result.status !== 'passed');
    expect(failed, JSON.stringify(failed, null, 1)).toEqual([]);
    expect(report.summary).toMatchObject({ total: scenarios.length, passed: scenarios.length, failed: 0 });
  }, 150_000);
});
