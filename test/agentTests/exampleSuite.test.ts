import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appointmentTestAccount, exampleScenario, testRunner } from '../helpers/agentTests.js';
import { startFullService } from '../helpers/fullService.js';
import { jsonApi } from '../helpers/http.js';

/**
 * The example appointment agent's scenario suite (examples/scenarios/appointment), run through the
 * public API as a user runs it: every scenario a real sandbox call in parallel, the callee's lines
 * spoken by flite over RTP, the agent's real pipeline, each call judged against its expectations.
 */

const scenarios = readdirSync(resolve(import.meta.dirname, '../../examples/scenarios/appointment'))
  .filter((name) => name.endsWith('.json'))
  .map(exampleScenario);

let service: Awaited<ReturnType<typeof startFullService>>;
let key = '';
let agentId = '';
const runToEnd = testRunner(
  jsonApi(
    () => service.url,
    () => key,
  ),
);

beforeAll(async () => {
  service = await startFullService({ CALLWRIGHT_WORKER_MAX_CALLS: '30' });
  ({ key, agentId } = await appointmentTestAccount(service, { name: 'tests', maxLiveCalls: 30 }));
});

afterAll(async () => {
  await service?.dispose();
});

describe('the example appointment suite', () => {
  it(`passes all ${scenarios.length} scenarios, run in parallel as sandbox calls`, async () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(8);
    const report = await runToEnd(agentId, { scenarios }, 120_000);
    const failed = report.results.filter((result) => result.status !== 'passed');
    expect(failed, JSON.stringify(failed, null, 1)).toEqual([]);
    expect(report.summary).toMatchObject({ total: scenarios.length, passed: scenarios.length, failed: 0 });
  }, 150_000);
});
