import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, updateAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { CallwrightClient, ConflictError } from '../../src/client/index.js';
import {
  type FakeChatDelta,
  type FakeOpenAiServer,
  fakeToolCallDelta,
} from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { type startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall, request } from '../helpers/http.js';
import { startLlmTestService } from '../helpers/llmService.js';

/**
 * POST /v1/calls/{id}/analysis end to end: a sandbox call of an llm agent asking only for a
 * summary; the operator then adds a success rubric, and the re-run (through the published client)
 * judges the past call by it, stores the new analysis and returns it. The model is a fake of
 * OpenAI's chat protocol that answers what it is asked for. Another account's key gets 404; a call
 * still ringing and a call never answered get 409.
 */

let fake: FakeOpenAiServer;
let service: Awaited<ReturnType<typeof startFullService>>;
let key: string;
let accountId: string;
let agentId: string;

const llm = { model: 'test-model' };

beforeAll(async () => {
  ({ fake, service, key, accountId } = await startLlmTestService({
    chatStreamFor: ({ messages }): FakeChatDelta[] =>
      messages.at(-1)?.role === 'user'
        ? [{ delta: { content: 'Thank you, goodbye!' } }, fakeToolCallDelta('end_call', '{}', 'call_end')]
        : [{ delta: { content: 'Press one to confirm your appointment.' }, finishReason: 'stop' }],
    chatJsonFor: (request) => {
      const judged = String(request.messages[0]?.content ?? '').includes('Judge whether');
      return JSON.stringify(
        judged
          ? {
              summary: 'The callee confirmed by pressing 1.',
              success: { passed: true, explanation: 'The callee confirmed.' },
            }
          : { summary: 'The agent asked; the callee pressed 1.' },
      );
    },
  }));
  agentId = (
    await createAgent(service.store, accountId, {
      name: 'Confirmer',
      prompt: 'You confirm an appointment.',
      firstMessage: 'Hello, this is the clinic.',
      brain: 'llm',
      settings: { llm, analysis: { summary: true } },
      maxDurationS: 30,
      silenceTimeoutS: 2,
    })
  ).id;
  await addPhoneNumber(service.store, accountId, '+15550009996');
});

afterAll(async () => {
  await service?.dispose();
  await fake?.close();
});

async function placeCall(to: string): Promise<string> {
  const result = await postCall(service.url, key, {
    agent_id: agentId,
    from_number: '+15550009996',
    to_number: to,
  });
  expect(result.status).toBe(200);
  return (result.body as { call_id: string }).call_id;
}

const analyse = (callId: string, apiKey = key) =>
  request(`${service.url}/v1/calls/${callId}/analysis`, { method: 'POST', headers: { 'X-API-Key': apiKey } });

describe('POST /v1/calls/{id}/analysis', () => {
  it("re-runs an ended call's analysis with the agent's current settings and stores it", async () => {
    const call = await waitForTerminal(service, await placeCall('+15550100008'), 40_000);
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    expect(call.analysis).toEqual({
      status: 'completed',
      reason: null,
      summary: 'The agent asked; the callee pressed 1.',
      success: null,
    });
    await updateAgent(service.store, accountId, agentId, {
      settings: { llm, analysis: { summary: true, success_rubric: 'The callee confirmed.' } },
    });
    const client = new CallwrightClient({ apiKey: key, baseUrl: service.url, maxRetries: 0 });
    const again = await client.calls.reanalyze(call.id);
    const expected = {
      status: 'completed',
      reason: null,
      summary: 'The callee confirmed by pressing 1.',
      success: { passed: true, explanation: 'The callee confirmed.' },
    };
    expect(again).toMatchObject({ call_id: call.id, status: 'completed', analysis: expected });
    // The model was asked by the rubric saved after the call, over the call's stored transcript.
    const review = fake.requests.at(-1)?.json as { messages: Array<{ content: string }> };
    expect(review.messages[0]?.content).toContain('The callee confirmed.');
    expect(review.messages[1]?.content).toContain('agent: Hello, this is the clinic.');
    const stored = await request(`${service.url}/v1/calls/${call.id}`, { headers: { 'X-API-Key': key } });
    expect((stored.body as { analysis: unknown }).analysis).toEqual(expected);
  }, 60_000);

  it("is 404 for another account's call and for an id that is not a call", async () => {
    const [ended] = await service.store.calls.list(accountId, { limit: 1 });
    const other = await service.store.accounts.create({ name: 'someone else' });
    const { key: otherKey } = await createApiKey(service.store, other.id, 'other');
    const refused = await analyse(ended?.id as string, otherKey);
    expect(refused.status).toBe(404);
    expect(refused.body).toMatchObject({ error: { code: 'not_found' } });
    expect((await analyse('call_nope')).status).toBe(404);
  });

  it('is 409 for a call that has not ended, and for one never answered', async () => {
    // +15550100003 rings until the caller gives up.
    const callId = await placeCall('+15550100003');
    const live = await analyse(callId);
    expect(live.status, live.text).toBe(409);
    expect(live.body).toMatchObject({ error: { code: 'conflict' } });
    expect(live.text).toContain('has not ended');
    const canceled = await request(`${service.url}/v1/calls/${callId}/cancel`, {
      method: 'POST',
      headers: { 'X-API-Key': key },
    });
    expect(canceled.status, canceled.text).toBe(200);
    const client = new CallwrightClient({ apiKey: key, baseUrl: service.url, maxRetries: 0 });
    const error = await client.calls.reanalyze(callId).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConflictError);
    expect(String((error as Error).message)).toContain('never answered');
    const record = await service.store.calls.get(accountId, callId);
    expect(record?.analysis).toBeNull();
  }, 60_000);
});
