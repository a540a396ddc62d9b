import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import type { TestRunReport } from '../../src/agentTests/testRuns.js';
import type { RunningService } from '../../src/server.js';
import type { HttpResult } from './http.js';

/** What the agent-test suites share: the example appointment agent, its scenarios, a run polled to its end. */

const examples = resolve(import.meta.dirname, '../../examples');

export const appointmentScript: unknown = JSON.parse(
  readFileSync(resolve(examples, 'agents/appointment-confirmation.json'), 'utf8'),
);

/** One of the example suite's scenario files (examples/scenarios/appointment/NAME). */
export function exampleScenario(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(resolve(examples, 'scenarios/appointment', file), 'utf8'));
}

/** The sandbox number every agent-test account calls from. */
export const testFromNumber = '+15550009999';

/**
 * An account with an API key, the example appointment agent (variables `customer_name`,
 * `appointment_day=Tuesday` and any `extraVariables`) and the sandbox number `testFromNumber`.
 */
export async function appointmentTestAccount(
  service: RunningService,
  options: { name: string; maxLiveCalls?: number; extraVariables?: string[] },
) {
  const account = await service.store.accounts.create({
    name: options.name,
    ...(options.maxLiveCalls ? { maxLiveCalls: options.maxLiveCalls } : {}),
  });
  const { key } = await createApiKey(service.store, account.id, options.name);
  const agent = await createAgent(service.store, account.id, {
    name: 'Appointment confirmation',
    prompt: 'Confirm the appointment.',
    variables: ['customer_name', 'appointment_day=Tuesday', ...(options.extraVariables ?? [])].map(
      parseVariableDeclaration,
    ),
    script: appointmentScript,
    maxDurationS: 45,
  });
  await addPhoneNumber(service.store, account.id, testFromNumber);
  return { accountId: account.id, key, agentId: agent.id };
}

/** Starts a run over the API (201 expected) and polls it until it completes or `timeoutMs` passes. */
export function testRunner(
  api: (path: string, init?: { method?: string; body?: unknown }) => Promise<HttpResult>,
) {
  return async (agentId: string, body: unknown, timeoutMs = 90_000): Promise<TestRunReport> => {
    const started = await api(`/agents/${agentId}/tests`, { method: 'POST', body });
    expect(started.status, started.text).toBe(201);
    const runId = (started.body as TestRunReport).id;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const read = await api(`/agents/${agentId}/tests/${runId}`);
      expect(read.status, read.text).toBe(200);
      const report = read.body as TestRunReport;
      if (report.status === 'completed' || Date.now() > deadline) return report;
      await new Promise((done) => setTimeout(done, 400));
    }
  };
}
