import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { TestRunReport } from '../../src/agentTests/testRuns.js';
import {
  type AgentTestRun,
  CallwrightClient,
  NotFoundError,
  type Scenario,
  ValidationError,
} from '../../src/client/index.js';
import type { Scenario as ServiceScenario } from '../../src/domain/scenarios.js';
import { appointmentTestAccount, exampleScenario } from '../helpers/agentTests.js';
import { startFullService } from '../helpers/fullService.js';
import { type FetchRecord, recordingFetch } from './harness.js';

/**
 * `client.agentTests` and `client.calls.scenario` against the whole service on loopback: a real
 * scenario run as a sandbox call, every answer checked against the OpenAPI document.
 */

const confirms = exampleScenario('confirms.json') as unknown as Scenario;

let service: Awaited<ReturnType<typeof startFullService>>;
let client: CallwrightClient;
let agentId = '';
const log: FetchRecord[] = [];

beforeAll(async () => {
  service = await startFullService();
  const { key, agentId: id } = await appointmentTestAccount(service, {
    name: 'client tests',
    maxLiveCalls: 10,
  });
  agentId = id;
  client = new CallwrightClient({ apiKey: key, baseUrl: service.url, fetch: recordingFetch(log) });
});

afterAll(async () => {
  await service?.dispose();
});

describe('client.agentTests', () => {
  it("the client's types are the service's: a scenario it sends is one the service takes, a run it reads is what the service sends", () => {
    expectTypeOf<Scenario>().toExtend<ServiceScenario>();
    expectTypeOf<TestRunReport>().toExtend<AgentTestRun>();
  });

  it('runs a scenario, waits for it, reads it back and lists it; the call it placed becomes a scenario', async () => {
    const started = await client.agentTests.run(agentId, { scenarios: [confirms] });
    expect(started).toMatchObject({
      agent_id: agentId,
      status: 'running',
      replay_of: null,
      summary: { total: 1, running: 1, passed: 0, failed: 0 },
    });
    // No time to wait: the run as it stands.
    const early = await client.agentTests.waitFor(agentId, started.id, { timeoutMs: 0 });
    expect(early.status).toBe('running');

    const seen: string[] = [];
    const run = await client.agentTests.waitFor(agentId, started.id, {
      timeoutMs: 40_000,
      pollMs: 250,
      onProgress: (progress) => seen.push(progress.status),
    });
    expect(seen.at(-1)).toBe('completed');
    expect(seen.length).toBeGreaterThan(1);
    expect(run.status).toBe('completed');
    expect(run.summary).toEqual({ total: 1, passed: 1, failed: 0, running: 0, pass_rate: 1 });
    expect(run.scenarios).toEqual([{ name: 'confirms', runs: 1, passed: 1, failed: 0, pass_rate: 1 }]);
    const [result] = run.results;
    expect(result, JSON.stringify(run.results)).toMatchObject({
      scenario: 'confirms',
      repeat: 1,
      status: 'passed',
      failures: [],
      call_status: 'completed',
      end_reason: 'agent_hangup',
    });
    expect(result?.transcript).toBeUndefined();
    expect(result?.duration_s).toBeGreaterThan(0);

    expect(await client.agentTests.get(agentId, run.id)).toEqual(run);
    const listed = await client.agentTests.list(agentId);
    expect(listed.data[0]).toMatchObject({ id: run.id, calls: 1, replay_of: null });

    const replay = await client.calls.scenario(result?.call_id ?? '');
    expect(replay.name).toBe(`replay of ${result?.call_id}`);
    expect(replay.callee.answers).toBe('human');
    expect(replay.callee.turns?.[0]?.audio?.call_id).toBe(result?.call_id);
    expect(replay.call?.variables).toEqual(confirms.call?.variables);

    const paths = log.map((entry) => `${entry.method} ${new URL(entry.url).pathname}`);
    expect(paths).toContain(`POST /v1/agents/${agentId}/tests`);
    expect(paths).toContain(`GET /v1/calls/${result?.call_id}/scenario`);
  }, 60_000);

  it('a bad scenario is a ValidationError naming it and nothing is run; an unknown agent or run is a NotFoundError', async () => {
    const before = (await client.agentTests.list(agentId)).data.length;
    const bad = { ...confirms, callee: { answers: 'robot' } } as unknown as Scenario;
    const refused = await client.agentTests
      .run(agentId, { scenarios: [confirms, bad] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).message).toMatch(/scenarios\[1\].*callee\.answers/);
    expect((await client.agentTests.list(agentId)).data).toHaveLength(before);

    await expect(client.agentTests.run('agt_nobody', { scenarios: [confirms] })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await expect(client.agentTests.get(agentId, 'trn_nothing')).rejects.toBeInstanceOf(NotFoundError);
  });
});
