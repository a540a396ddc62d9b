import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { fakeToolCallDelta } from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { callFixture, startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall, request } from '../helpers/http.js';
import { startLlmTestService } from '../helpers/llmService.js';

/**
 * The do-not-call list through the public API, with the whole service on loopback: the list's
 * endpoints, a listed number accepted yet never dialled (no INVITE reaches the sandbox carrier),
 * and callees who ask to be left alone — by a script step and by the llm agent's built-in tool —
 * put on the list for every later call.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
let fixture: Awaited<ReturnType<typeof callFixture>>;

beforeAll(async () => {
  service = await startFullService();
  fixture = await callFixture(service, { maxDurationS: 3 });
});

afterAll(async () => {
  await service?.dispose();
});

const api = (path: string, init: { method?: string; body?: unknown; key?: string } = {}) =>
  request(`${service.url}/v1${path}`, {
    method: init.method ?? 'GET',
    headers: {
      'X-API-Key': init.key ?? fixture.key,
      ...(init.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });

describe('the do-not-call endpoints', () => {
  it('adds, pages, reads and removes numbers; another account sees none of them', async () => {
    const numbers = ['+15550300003', '+15550300001', '+15550300002', '+15550300001'];
    const added = await api('/do-not-call', { method: 'POST', body: { numbers, reason: 'asked by letter' } });
    expect(added).toMatchObject({ status: 200, body: { added: 3, already_listed: 0 } });
    const again = await api('/do-not-call', { method: 'POST', body: { numbers: ['+15550300001'] } });
    expect(again.body).toEqual({ added: 0, already_listed: 1 });

    const first = await api('/do-not-call?limit=2');
    const page = first.body as { data: { number: string }[]; next_cursor: string; has_more: boolean };
    expect(page.data.map((entry) => entry.number)).toEqual(['+15550300001', '+15550300002']);
    expect(page.has_more).toBe(true);
    const second = await api(`/do-not-call?limit=2&cursor=${page.next_cursor}`);
    expect(second.body).toMatchObject({
      data: [{ number: '+15550300003', reason: 'asked by letter', source: 'api' }],
      next_cursor: null,
      has_more: false,
    });

    expect(await api('/do-not-call/%2B15550300002')).toMatchObject({
      status: 200,
      body: { number: '+15550300002', source: 'api' },
    });
    expect((await api('/do-not-call/+15550300009')).status).toBe(404);
    expect(await api('/do-not-call/+15550300002', { method: 'DELETE' })).toMatchObject({
      status: 200,
      body: { number: '+15550300002', deleted: true },
    });
    expect((await api('/do-not-call/+15550300002', { method: 'DELETE' })).status).toBe(404);

    const other = await service.store.accounts.create({ name: 'elsewhere' });
    const { key: otherKey } = await createApiKey(service.store, other.id, 'k');
    expect((await api('/do-not-call', { key: otherKey })).body).toMatchObject({ data: [] });
    expect((await api('/do-not-call/+15550300001', { key: otherKey })).status).toBe(404);
    expect((await api('/do-not-call', { key: 'cw_live_nope' })).status).toBe(401);
  });

  it.each([
    [{ numbers: [] }, /numbers must be a list of 1 to 2000/],
    [{ numbers: ['+15550300001', '555-0100'] }, /numbers\[1\] is not an E\.164 number/],
    [{ numbers: ['+15550300001'], reason: 'x'.repeat(201) }, /reason must be a text of at most 200/],
    [{ numbers: ['+15550300001'], list: 'a' }, /unknown field: list/],
    [{ numbers: Array.from({ length: 2_001 }, () => '+15550300001') }, /1 to 2000/],
  ])('refuses %j with a 400 that says why', async (body, why) => {
    const refused = await api('/do-not-call', { method: 'POST', body });
    expect(refused.status).toBe(400);
    expect((refused.body as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'validation_error',
      message: expect.stringMatching(why),
    });
  });

  it('refuses a malformed number in the path and a foreign cursor', async () => {
    expect((await api('/do-not-call/12345')).status).toBe(400);
    expect((await api('/do-not-call?cursor=bm90LWEtbnVtYmVy')).status).toBe(400);
    expect((await api('/do-not-call?limit=0')).status).toBe(400);
  });
});

describe('a listed number', () => {
  it('is accepted, never dialled, and ends canceled / do_not_call with its event; off the list it is dialled', async () => {
    await api('/do-not-call', { method: 'POST', body: { numbers: ['+15550100006'] } });
    const created = await postCall(service.url, fixture.key, {
      agent_id: fixture.agentId,
      from_number: fixture.from,
      to_number: '+15550100006',
    });
    expect(created).toMatchObject({ status: 200, body: { status: 'queued' } });
    const callId = (created.body as { call_id: string }).call_id;
    const call = await waitForTerminal(service, callId);
    expect(call).toMatchObject({
      status: 'canceled',
      endReason: 'do_not_call',
      sipCallId: null,
      answeredBy: null,
    });
    const invites = await service.store.sandboxInvites.list();
    expect(invites.some((invite) => invite.toNumber === '+15550100006')).toBe(false);
    const event = (await service.store.events.list(fixture.accountId, { limit: 50 })).find(
      (candidate) => candidate.callId === callId,
    );
    expect(event?.type).toBe('call.completed');

    await api('/do-not-call/+15550100006', { method: 'DELETE' });
    const dialled = await postCall(service.url, fixture.key, {
      agent_id: fixture.agentId,
      from_number: fixture.from,
      to_number: '+15550100006',
    });
    const later = await waitForTerminal(service, (dialled.body as { call_id: string }).call_id);
    expect(later).toMatchObject({ status: 'completed', endReason: 'callee_hangup' });
  }, 30_000);
});

describe('a callee who asks to be left alone', () => {
  it('is put on the list by a script step, for every later call', async () => {
    const account = await service.store.accounts.create({ name: 'opt-outs' });
    const { key } = await createApiKey(service.store, account.id, 'k');
    const agent = await createAgent(service.store, account.id, {
      name: 'Reminder',
      prompt: 'p',
      script: {
        start: 'greet',
        nodes: {
          greet: {
            say: 'Press one to stop these calls.',
            listen: [{ phrases: ['stop'], next: 'optout' }],
            dtmf: { '1': 'optout' },
          },
          optout: { say: 'You will not be called again. Goodbye.', do_not_call: true, end: true },
        },
      },
      maxDurationS: 20,
    });
    await addPhoneNumber(service.store, account.id, '+15550009988');
    const place = async () => {
      const created = await postCall(service.url, key, {
        agent_id: agent.id,
        from_number: '+15550009988',
        to_number: '+15550100008',
      });
      return waitForTerminal(service, (created.body as { call_id: string }).call_id, 30_000);
    };
    const first = await place();
    expect(first).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    expect(
      first.transcript.filter((entry) => entry.event === 'do_not_call').map((entry) => entry.text),
    ).toEqual(['the number was put on the do-not-call list']);
    expect(await service.store.doNotCall.get(account.id, '+15550100008')).toMatchObject({
      source: 'callee_request',
    });
    expect(await place()).toMatchObject({ status: 'canceled', endReason: 'do_not_call' });
  }, 60_000);

  it("is put on the list by the llm agent's add_to_do_not_call tool", async () => {
    const llm = await startLlmTestService({
      chatStreamFor: ({ messages }) =>
        messages.at(-1)?.role === 'user'
          ? [
              { delta: { content: 'Of course, you will not hear from us again.' } },
              fakeToolCallDelta('add_to_do_not_call', '{}', 'call_dnc'),
            ]
          : messages.at(-1)?.role === 'tool'
            ? [{ delta: { content: 'Goodbye.' } }, fakeToolCallDelta('end_call', '{}', 'call_end')]
            : [{ delta: { content: 'Hello, press one if you want no more calls.' }, finishReason: 'stop' }],
    });
    try {
      const agent = await createAgent(llm.service.store, llm.accountId, {
        name: 'Collector',
        prompt: 'You call about an invoice.',
        brain: 'llm',
        settings: { llm: { model: 'test-model' } },
        maxDurationS: 8,
      });
      await addPhoneNumber(llm.service.store, llm.accountId, '+15550009987');
      const created = await postCall(llm.service.url, llm.key, {
        agent_id: agent.id,
        from_number: '+15550009987',
        to_number: '+15550100008',
      });
      const call = await waitForTerminal(llm.service, (created.body as { call_id: string }).call_id, 30_000);
      expect(call.transcript.some((entry) => entry.event === 'do_not_call')).toBe(true);
      expect(await llm.service.store.doNotCall.get(llm.accountId, '+15550100008')).toMatchObject({
        source: 'callee_request',
        reason: 'the callee asked not to be called',
      });
    } finally {
      await llm.dispose();
    }
  }, 60_000);
});
