import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/openStore.js';
import { listenOnlyScript } from '../helpers/agentScripts.js';
import { callFixture, startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall, request } from '../helpers/http.js';

/**
 * Every sandbox persona, through the public API: the call is queued, dispatched, crosses real
 * SIP and RTP to the in-process sandbox carrier, and reaches the terminal status a carrier gives.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
let fixture: Awaited<ReturnType<typeof callFixture>>;

beforeAll(async () => {
  service = await startFullService();
  fixture = await callFixture(service, { maxDurationS: 12 });
});

afterAll(async () => {
  await service.dispose();
});

async function place(to: string): Promise<string> {
  const result = await postCall(service.url, fixture.key, {
    agent_id: fixture.agentId,
    from_number: fixture.from,
    to_number: to,
  });
  expect(result.status).toBe(200);
  return (result.body as { call_id: string }).call_id;
}

const personas: [string, string, string, string | null, boolean][] = [
  // number, persona, status, end_reason, answered
  [
    '+15550100001',
    'person (agent only plays a tone until the voice agent lands)',
    'completed',
    'max_duration',
    true,
  ],
  ['+15550100002', 'busy', 'busy', 'rejected', false],
  ['+15550100003', 'never answers (5 s ring timeout here)', 'no_answer', null, false],
  [
    '+15550100004',
    'voicemail: greeting, beep; this agent has no message, so it hangs up',
    'completed',
    'voicemail',
    true,
  ],
  ['+15550100005', 'unreachable', 'failed', 'unreachable', false],
  ['+15550100006', 'hangs up after 2 s', 'completed', 'callee_hangup', true],
  ['+15550100007', 'silent', 'completed', 'max_duration', true],
  ['+15550100008', 'presses 1', 'completed', 'max_duration', true],
  ['+15550123456', 'any other number: the person', 'completed', 'max_duration', true],
];

describe('sandbox personas through the public API', () => {
  it.concurrent.each(personas)(
    '%s (%s) ends %s / %s',
    async (to, _name, status, endReason, answered) => {
      const callId = await place(to);
      const call = await waitForTerminal(service, callId);
      expect(call.status).toBe(status);
      expect(call.endReason).toBe(endReason);
      expect(call.dialingAt).not.toBeNull();
      expect(call.endedAt).not.toBeNull();
      expect(call.sipCallId).not.toBeNull();
      if (answered) {
        expect(call.inProgressAt).not.toBeNull();
        expect(call.answeredBy).toBe(endReason === 'voicemail' ? 'machine' : 'unknown');
      } else {
        expect(call.inProgressAt).toBeNull();
      }
      // Exactly one INVITE reached the carrier for this call.
      const invites = (await service.store.sandboxInvites.list()).filter(
        (invite) => invite.sipCallId === call.sipCallId,
      );
      expect(invites).toHaveLength(1);
      expect(invites[0]?.toNumber).toBe(to);

      const fetched = await request(`${service.url}/v1/calls/${callId}`, {
        headers: { 'X-API-Key': fixture.key },
      });
      const body = fetched.body as { status: string; timeline: { status: string; at: string }[] };
      expect(body.status).toBe(status);
      const order = body.timeline.map((entry) => entry.status);
      expect(order[0]).toBe('queued');
      expect(order.at(-1)).toBe(status);
      expect(order).toContain('dialing');
      if (answered) expect(order).toContain('in_progress');
      const times = body.timeline.map((entry) => Date.parse(entry.at));
      expect([...times].sort((a, b) => a - b)).toEqual(times);
    },
    30_000,
  );
});

describe('cancel', () => {
  it('cancels a ringing call: CANCEL goes out and the call ends canceled', async () => {
    const callId = await place('+15550100003');
    for (let i = 0; i < 50; i++) {
      if ((await service.store.calls.getById(callId))?.status === 'ringing') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const result = await request(`${service.url}/v1/calls/${callId}/cancel`, {
      method: 'POST',
      headers: { 'X-API-Key': fixture.key },
    });
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ call_id: callId, status: 'canceled', end_reason: null });
    const again = await request(`${service.url}/v1/calls/${callId}/cancel`, {
      method: 'POST',
      headers: { 'X-API-Key': fixture.key },
    });
    expect(again.status).toBe(409);
  });

  it('hangs up a live call: it ends canceled / agent_hangup', async () => {
    const callId = await place('+15550100007');
    for (let i = 0; i < 50; i++) {
      if ((await service.store.calls.getById(callId))?.status === 'in_progress') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const result = await request(`${service.url}/v1/calls/${callId}/cancel`, {
      method: 'POST',
      headers: { 'X-API-Key': fixture.key },
    });
    expect(result.body).toMatchObject({ status: 'canceled', end_reason: 'agent_hangup' });
  });
});

describe('the per-account cap on live calls', () => {
  it('keeps calls over the cap queued until a live call ends, and a queued call can be cancelled', async () => {
    const capped = await callFixture(service, { maxDurationS: 2, maxLiveCalls: 1 });
    const post = async (to: string) =>
      (
        (
          await postCall(service.url, capped.key, {
            agent_id: capped.agentId,
            from_number: capped.from,
            to_number: to,
          })
        ).body as { call_id: string }
      ).call_id;
    const first = await post('+15550100007');
    const second = await post('+15550100007');
    const third = await post('+15550100007');
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect((await service.store.calls.getById(first))?.status).not.toBe('queued');
    expect((await service.store.calls.getById(second))?.status).toBe('queued');
    const canceled = await request(`${service.url}/v1/calls/${third}/cancel`, {
      method: 'POST',
      headers: { 'X-API-Key': capped.key },
    });
    expect(canceled.body).toMatchObject({ status: 'canceled', dialed_at: null });
    const firstDone = await waitForTerminal(service, first);
    const secondDone = await waitForTerminal(service, second);
    expect(Date.parse(secondDone.dialingAt as string)).toBeGreaterThanOrEqual(
      Date.parse(firstDone.endedAt as string),
    );
    expect((await service.store.calls.getById(third))?.sipCallId).toBeNull();
  }, 30_000);
});

describe('the silence timeout', () => {
  it('ends a call where nobody speaks for the agent’s silence timeout as completed / silence_timeout', async () => {
    const account = await service.store.accounts.create({ name: 'quiet' });
    const { createApiKey } = await import('../../src/admin/apiKeys.js');
    const { createAgent } = await import('../../src/admin/agents.js');
    const { addPhoneNumber } = await import('../../src/admin/numbers.js');
    const { key } = await createApiKey(service.store, account.id, 'quiet');
    const agent = await createAgent(service.store, account.id, {
      name: 'Quiet',
      prompt: 'p',
      script: listenOnlyScript,
      silenceTimeoutS: 2,
      maxDurationS: 30,
    });
    await addPhoneNumber(service.store, account.id, '+15550009999');
    const result = await postCall(service.url, key, {
      agent_id: agent.id,
      from_number: '+15550009999',
      to_number: '+15550100007',
    });
    const call = await waitForTerminal(service, (result.body as { call_id: string }).call_id);
    expect(call).toMatchObject({ status: 'completed', endReason: 'silence_timeout' });
    const talked = Date.parse(call.endedAt as string) - Date.parse(call.inProgressAt as string);
    expect(talked).toBeGreaterThanOrEqual(1_900);
    expect(talked).toBeLessThan(6_000);
  }, 30_000);
});

describe('graceful shutdown', () => {
  it('stops taking calls; a call in conversation ends after the agent sentence (completed / interrupted), a ringing one at the grace period (failed / interrupted)', async () => {
    const stopping = await startFullService({ CALLWRIGHT_SHUTDOWN_GRACE_S: '1' });
    const quiet = await callFixture(stopping, { maxDurationS: 60 });
    const place = async (to: string) =>
      (
        (
          await postCall(stopping.url, quiet.key, {
            agent_id: quiet.agentId,
            from_number: quiet.from,
            to_number: to,
          })
        ).body as { call_id: string }
      ).call_id;
    const callId = await place('+15550100007');
    const ringingId = await place('+15550100003');
    const statusOf = async (id: string) => (await stopping.store.calls.getById(id))?.status;
    for (
      let i = 0;
      i < 50 && ((await statusOf(callId)) !== 'in_progress' || (await statusOf(ringingId)) !== 'ringing');
      i++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const startedAt = Date.now();
    await stopping.close();
    const tookMs = Date.now() - startedAt;
    const check = openSqliteStore(join(stopping.dataDir, 'callwright.db'));
    const call = await check.calls.getById(callId);
    const ringing = await check.calls.getById(ringingId);
    await check.close();
    // The listen-only agent says nothing: its call ends at once, cleanly (test/calls/shutdownSentence.test.ts
    // has an agent speaking at the signal).
    expect(call).toMatchObject({ status: 'completed', endReason: 'interrupted' });
    expect(ringing).toMatchObject({ status: 'failed', endReason: 'interrupted' });
    expect(tookMs).toBeGreaterThanOrEqual(900);
    expect(tookMs).toBeLessThan(8_000);
    rmSync(stopping.dataDir, { recursive: true, force: true });
  }, 30_000);
});
