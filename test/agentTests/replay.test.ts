import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunDiff } from '../../src/domain/callReplay.js';
import { appointmentTestAccount, testFromNumber, testRunner } from '../helpers/agentTests.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { jsonApi, postCall } from '../helpers/http.js';

/**
 * Replay: a real call on the sandbox, recorded, becomes a scenario whose callee is its own
 * recorded words; replayed with a longer end-of-turn wait, the diff shows the agent waiting longer
 * at each turn — measured on the new call's audio, not assumed.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
let accountId = '';
let key = '';
let agentId = '';
let recordedCallId = '';
const recordedNumber = '+155501000010042';
const replayRunIds: string[] = [];
const api = jsonApi(
  () => service.url,
  () => key,
);

const runTests = testRunner(api);

async function runToEnd(body: unknown) {
  const report = await runTests(agentId, body, 60_000);
  replayRunIds.push(report.id);
  return report;
}

beforeAll(async () => {
  service = await startFullService();
  ({ accountId, key, agentId } = await appointmentTestAccount(service, {
    name: 'replay',
    extraVariables: ['reschedule_to=', 'sandbox_wording='],
  }));
  // A real call: the sandbox person asks to reschedule, then names Wednesday.
  const placed = await postCall(service.url, key, {
    agent_id: agentId,
    from_number: testFromNumber,
    // The sandbox person, at a number of its own (the replays call +15550100001).
    to_number: recordedNumber,
    // The listed phrases alone: the turns this suite counts must not depend on a wording re-asked.
    variables: { customer_name: 'Ann', reschedule_to: 'Wednesday', sandbox_wording: 'exact' },
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
      // The wait the agent chose is the setting (in audio time, whatever the machine's load), where
      // the original waited by the shape of the words (at most 1.5 s); the reply comes after it.
      expect(turn.after?.wait_ms, JSON.stringify(turn)).toBeGreaterThanOrEqual(waitMs);
      expect(turn.before?.wait_ms, JSON.stringify(turn)).toBeLessThanOrEqual(1_500);
      expect(turn.after?.latency_ms, JSON.stringify(turn)).toBeGreaterThanOrEqual(waitMs);
      expect(turn.changes.join('; ')).toMatch(/waits \d+ ms longer for the end of the turn/);
    }
    // Without the change the replay runs the same turns to the same data (its timing varies with
    // the recogniser's partial words, and with the machine's load).
    expect(sameDiff.turns).toHaveLength(2);
    expect(sameDiff.turns.map((turn) => turn.after?.agent_text)).toEqual(
      sameDiff.turns.map((turn) => turn.before?.agent_text),
    );
    // Each side says what the script understood of the turn: which step, which option, why.
    for (const side of sameDiff.turns.flatMap((turn) => [turn.before, turn.after]))
      expect(side?.understood, JSON.stringify(side)).toMatch(/^(greet|ask_day): option \d+ \(".+"\) — /);
    expect(sameDiff.turns.map((turn) => turn.before?.understood?.split(':')[0])).toEqual([
      'greet',
      'ask_day',
    ]);
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

  it("erasing the recorded callee's number erases the replays of its calls too (they played its voice)", async () => {
    const replays = (
      await Promise.all(replayRunIds.map((runId) => service.store.agentTests.run(accountId, runId)))
    )
      .flat()
      .map((test) => test.callId);
    expect(replays.length).toBeGreaterThanOrEqual(2);
    const erased = await api('/erasures', { method: 'POST', body: { number: recordedNumber } });
    expect(erased.status).toBe(200);
    expect((erased.body as { calls_erased: number }).calls_erased).toBe(1 + replays.length);
    for (const callId of [recordedCallId, ...replays])
      expect((await api(`/calls/${callId}`)).status).toBe(404);
    for (const runId of replayRunIds)
      expect((await api(`/agents/${agentId}/tests/${runId}`)).status).toBe(404);
  });
});
