import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import type { RunDiff } from '../../src/domain/callReplay.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { jsonApi, postCall } from '../helpers/http.js';

/**
 * Replay: a real call on the sandbox, recorded, becomes a scenario whose callee is its own
 * recorded words; replayed with a longer end-of-turn wait, the diff shows the agent waiting longer
 * at each turn — measured on the new call's audio, not assumed.
 */

const script = JSON.parse(
  readFileSync(resolve(import.meta.dirname, '../../examples/agents/appointment-confirmation.json'), 'utf8'),
);

let service: Awaited<ReturnType<typeof startFullService>>;
let key = '';
let agentId = '';
let recordedCallId = '';
const api = jsonApi(
  () => service.url,
  () => key,
);

interface Report {
  id: string;
  status: string;
  replay_of: string | null;
  results: { status: string; failures: string[]; call_id: string; diff?: RunDiff }[];
}

async function runToEnd(body: unknown): Promise<Report> {
  const started = await api(`/agents/${agentId}/tests`, { method: 'POST', body });
  expect(started.status, started.text).toBe(201);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const read = await api(`/agents/${agentId}/tests/${(started.body as Report).id}`);
    const report = read.body as Report;
    if (report.status === 'completed' || Date.now() > deadline) return report;
    await new Promise((done) => setTimeout(done, 400));
  }
}

beforeAll(async () => {
  service = await startFullService();
  const account = await service.store.accounts.create({ name: 'replay' });
  key = (await createApiKey(service.store, account.id, 'replay')).key;
  agentId = (
    await createAgent(service.store, account.id, {
      name: 'Appointment confirmation',
      prompt: 'Confirm the appointment.',
      variables: ['customer_name', 'appointment_day=Tuesday', 'reschedule_to='].map(parseVariableDeclaration),
      script,
      maxDurationS: 45,
    })
  ).id;
  await addPhoneNumber(service.store, account.id, '+15550009999');
  // A real call: the sandbox person asks to reschedule, then names Wednesday.
  const placed = await postCall(service.url, key, {
    agent_id: agentId,
    from_number: '+15550009999',
    to_number: '+15550100001',
    variables: { customer_name: 'Ann', reschedule_to: 'Wednesday' },
  });
  recordedCallId = (placed.body as { call_id: string }).call_id;
  const call = await waitForTerminal(service, recordedCallId, 60_000);
  expect(call.extractedData).toEqual({ confirmed: false, new_day: 'Wednesday' });
}, 90_000);

afterAll(async () => {
  await service?.dispose();
});

describe('replaying a recorded call', () => {
  it('derives a scenario whose turns are the callee channel cut at its turns', async () => {
    const read = await api(`/calls/${recordedCallId}/scenario`);
    expect(read.status).toBe(200);
    const scenario = read.body as {
      callee: { turns: { audio: { call_id: string; start_ms: number; end_ms: number } }[] };
      call: { variables: Record<string, string> };
    };
    expect(scenario.call.variables).toMatchObject({ customer_name: 'Ann' });
    expect(scenario.callee.turns).toHaveLength(2);
    for (const turn of scenario.callee.turns) {
      expect(turn.audio.call_id).toBe(recordedCallId);
      expect(turn.audio.end_ms).toBeGreaterThan(turn.audio.start_ms + 300);
    }
  });

  it('replayed with a longer end-of-turn wait, the same words get the same answers, each after a longer wait', async () => {
    const waitMs = 1_800;
    const [same, slower] = await Promise.all([
      runToEnd({ replay_of: recordedCallId }),
      runToEnd({
        replay_of: recordedCallId,
        agent_overrides: {
          settings: {
            turn_taking: { end_of_turn: { min_wait_ms: waitMs, wait_ms: waitMs, max_wait_ms: waitMs } },
          },
        },
      }),
    ]);
    for (const report of [same, slower]) {
      expect(report.replay_of).toBe(recordedCallId);
      expect(report.results[0]?.status, JSON.stringify(report.results[0]?.failures)).toBe('passed');
    }
    const sameDiff = same.results[0]?.diff as RunDiff;
    const slowerDiff = slower.results[0]?.diff as RunDiff;
    // The recorded words are understood again: the replays extract what the call did.
    expect(sameDiff.data).toEqual([]);
    expect(slowerDiff.data).toEqual([]);
    expect(slowerDiff.turns).toHaveLength(2);
    for (const turn of slowerDiff.turns) {
      const before = turn.before?.latency_ms as number;
      const after = turn.after?.latency_ms as number;
      expect(after - before, JSON.stringify(turn)).toBeGreaterThan(700);
      expect(turn.changes.join('; ')).toMatch(/waits \d+ ms longer/);
    }
    expect(slowerDiff.summary.join(' ')).toMatch(/replies slower by \d+ ms on average/);
    // Without the change, no turn waits noticeably longer.
    for (const turn of sameDiff.turns) {
      expect(Math.abs((turn.after?.latency_ms as number) - (turn.before?.latency_ms as number))).toBeLessThan(
        500,
      );
    }
  }, 90_000);

  it('refuses to replay a call of another agent, an unknown call, or overrides that are not valid settings', async () => {
    const bad = await api(`/agents/${agentId}/tests`, {
      method: 'POST',
      body: {
        replay_of: recordedCallId,
        agent_overrides: { settings: { turn_taking: { end_of_turn: { wait_ms: 99_999 } } } },
      },
    });
    expect(bad.status).toBe(400);
    expect((bad.body as { error: { message: string } }).error.message).toMatch(/wait_ms/);
    const unknown = await api(`/agents/${agentId}/tests`, {
      method: 'POST',
      body: { replay_of: 'call_nope' },
    });
    expect(unknown.status).toBe(404);
  });
});
