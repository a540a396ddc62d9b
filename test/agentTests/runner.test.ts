import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { appointmentTestAccount, exampleScenario, testRunner } from '../helpers/agentTests.js';
import { startFullService } from '../helpers/fullService.js';
import { jsonApi } from '../helpers/http.js';

/**
 * The test runner over the public API: a scenario that must fail does, with its reason; repeats
 * give a pass rate; keys, pauses and hang-ups of the scripted callee reach the agent; nothing is
 * dialled for a run that does not validate; runs are private to their account.
 */

const confirms = exampleScenario('confirms.json');
const menuScript = {
  start: 'menu',
  nodes: {
    menu: {
      say: 'Press one for yes, or two for no.',
      dtmf: { '1': 'yes', '2': 'no' },
      listen: [{ phrases: ['yes'], next: 'yes' }],
    },
    yes: { set: { choice: 'yes' }, say: 'You chose yes. Goodbye!', end: true },
    no: { set: { choice: 'no' }, say: 'You chose no. Goodbye!', end: true },
  },
};

let service: Awaited<ReturnType<typeof startFullService>>;
let key = '';
let otherKey = '';
let agentId = '';
let menuAgentId = '';
let accountId = '';
const api = jsonApi(
  () => service.url,
  () => key,
);

const runToEnd = testRunner(api);

beforeAll(async () => {
  service = await startFullService();
  ({ accountId, key, agentId } = await appointmentTestAccount(service, { name: 'runner', maxLiveCalls: 20 }));
  menuAgentId = (
    await createAgent(service.store, accountId, {
      name: 'Menu',
      prompt: 'Menu.',
      script: menuScript,
      maxDurationS: 30,
    })
  ).id;
  const other = await service.store.accounts.create({ name: 'other' });
  otherKey = (await createApiKey(service.store, other.id, 'other')).key;
});

afterAll(async () => {
  await service?.dispose();
});

describe('agent test runs', () => {
  it('fail a scenario whose expected data is wrong, with the reason, and give a pass rate over repeats', async () => {
    const wrong = { ...confirms, name: 'expects the wrong answer', expect: { data: { confirmed: false } } };
    const report = await runToEnd(agentId, { scenarios: [confirms, wrong], repeat: 2 });
    expect(report.summary).toEqual({ total: 4, passed: 2, failed: 2, running: 0, pass_rate: 0.5 });
    expect(report.scenarios).toEqual([
      { name: 'confirms', runs: 2, passed: 2, failed: 0, pass_rate: 1 },
      { name: 'expects the wrong answer', runs: 2, passed: 0, failed: 2, pass_rate: 0 },
    ]);
    for (const result of report.results) {
      if (result.scenario === 'confirms') {
        expect(result.status).toBe('passed');
        expect(result.transcript).toBeUndefined();
      } else {
        expect(result.status).toBe('failed');
        expect(result.failures).toEqual(['data.confirmed: expected false, got true']);
        expect(result.transcript?.length).toBeGreaterThanOrEqual(3);
      }
    }
    expect(report.results.map((result) => result.repeat)).toEqual([1, 2, 1, 2]);
    const runs = await api(`/agents/${agentId}/tests`);
    expect((runs.body as { data: { id: string; calls: number }[] }).data).toContainEqual(
      expect.objectContaining({ id: report.id, calls: 4 }),
    );
  }, 100_000);

  it("plays the callee's keys after a pause, and hangs up after a line when told", async () => {
    const report = await runToEnd(menuAgentId, {
      scenarios: [
        {
          name: 'presses one',
          callee: { answers: 'human', turns: [{ dtmf: '1', pause_ms: 400 }] },
          expect: { end_reason: 'agent_hangup', data: { choice: 'yes' }, says: ['you chose yes'] },
        },
        {
          name: 'says goodbye and hangs up',
          callee: { answers: 'human', turns: [{ say: 'Not now, goodbye.', hang_up: 'after' }] },
          expect: { end_reason: 'callee_hangup', data: { choice: { present: false } } },
        },
      ],
    });
    expect(report.results.map((result) => [result.scenario, result.status, result.failures])).toEqual([
      ['presses one', 'passed', []],
      ['says goodbye and hangs up', 'passed', []],
    ]);
  }, 100_000);

  it('dials nothing for a run that does not validate, and says why', async () => {
    const before = (await service.store.calls.list(accountId, { limit: 200 })).length;
    const cases: [unknown, number, RegExp][] = [
      [
        { scenarios: [confirms, { name: 'bad', callee: { answers: 'human', turns: [{}] } }] },
        400,
        /scenarios\[1\]/,
      ],
      [{ scenarios: [confirms, confirms] }, 400, /two scenarios are named "confirms"/],
      [{ scenarios: [{ ...confirms, call: { variables: { nickname: 'x' } } }] }, 400, /confirms: .*nickname/],
      [{ scenarios: [confirms], repeat: 21 }, 400, /repeat/],
      [{ scenarios: [confirms], replay_of: 'call_x' }, 400, /either scenarios/],
      [{ scenarios: [confirms], from_number: '+15550000000' }, 400, /from_number/],
      [
        { scenarios: [confirms], agent_overrides: { voice: 'x' } },
        400,
        /agent_overrides.voice is not a setting/,
      ],
      [{ scenarios: [] }, 400, /1 to 50/],
    ];
    for (const [body, status, reason] of cases) {
      const refused = await api(`/agents/${agentId}/tests`, { method: 'POST', body });
      expect(refused.status, JSON.stringify(body)).toBe(status);
      expect((refused.body as { error: { message: string } }).error.message).toMatch(reason);
    }
    const missing = await api('/agents/agt_missing/tests', {
      method: 'POST',
      body: { scenarios: [confirms] },
    });
    expect(missing.status).toBe(404);
    expect((await service.store.calls.list(accountId, { limit: 200 })).length).toBe(before);
  });

  it("keeps a run to its account: another account's key reads 404", async () => {
    const started = await api(`/agents/${agentId}/tests`, {
      method: 'POST',
      body: { scenarios: [{ name: 'busy', callee: { answers: 'busy' }, expect: { status: 'busy' } }] },
    });
    const runId = (started.body as { id: string }).id;
    const foreign = jsonApi(
      () => service.url,
      () => otherKey,
    );
    expect((await foreign(`/agents/${agentId}/tests/${runId}`)).status).toBe(404);
    expect((await foreign(`/agents/${agentId}/tests`)).status).toBe(404);
    expect((await api(`/agents/${menuAgentId}/tests/${runId}`)).status).toBe(404);
  });
});
