import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import type { CallRecord } from '../../src/domain/records.js';
import {
  type FakeChatDelta,
  type FakeOpenAiServer,
  fakeToolCallDelta,
} from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { type startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall, request } from '../helpers/http.js';
import { startLlmTestService } from '../helpers/llmService.js';

/**
 * Post-call analysis end to end: an llm agent with a data schema (an enum, a required field), a
 * summary and a success rubric; the callee presses a key (the sandbox persona +15550100008) and the
 * agent says goodbye. The model (a fake of OpenAI's chat protocol) answers the extraction and the
 * review; what fits the schema arrives in the call record and `call.completed`, what does not is
 * reported `failed` with its reason — never as empty answers.
 */

let fake: FakeOpenAiServer;
let service: Awaited<ReturnType<typeof startFullService>>;
let key: string;
let accountId: string;
let agentId: string;

const dataSchema = {
  type: 'object',
  properties: {
    outcome: { type: 'string', enum: ['confirmed', 'rescheduled', 'declined'] },
    new_day: { type: ['string', 'null'] },
  },
  required: ['outcome'],
  additionalProperties: false,
};

/** Which data the model "extracts", by the case named in the call's system prompt. */
const extractedByCase: Record<string, unknown> = {
  good: { outcome: 'confirmed', new_day: null },
  off_enum: { outcome: 'maybe', new_day: null },
};

function caseOf(messages: Array<Record<string, unknown>>): string {
  const text = messages.map((message) => String(message.content ?? '')).join('\n');
  return /Case: (\w+)/.exec(text)?.[1] ?? 'good';
}

beforeAll(async () => {
  ({ fake, service, key, accountId } = await startLlmTestService({
    chatStreamFor: ({ messages }): FakeChatDelta[] =>
      messages.at(-1)?.role === 'user'
        ? [{ delta: { content: 'Thank you, goodbye!' } }, fakeToolCallDelta('end_call', '{}', 'call_end')]
        : [{ delta: { content: 'Press one to confirm your appointment.' }, finishReason: 'stop' }],
    chatJsonFor: (request) => {
      const which = request.response_format?.json_schema?.name;
      // The transcript is the user message of an analysis request; the case is in the agent's
      // prompt, which the analysis does not see: it is said in the transcript's first line instead.
      const transcript = String(request.messages.at(-1)?.content ?? '');
      const name = /Case (\w+)/.exec(transcript)?.[1] ?? caseOf(request.messages);
      if (which === 'extracted_data') return JSON.stringify(extractedByCase[name]);
      return JSON.stringify({
        summary: 'The agent asked to confirm; the callee pressed 1.',
        success: { passed: true, explanation: 'The callee confirmed.' },
      });
    },
  }));
  agentId = (
    await createAgent(service.store, accountId, {
      name: 'Confirmer',
      prompt: 'You confirm an appointment.',
      firstMessage: 'Hello, this is the clinic. Case {{case}}.',
      variables: ['case'].map(parseVariableDeclaration),
      brain: 'llm',
      settings: {
        llm: { model: 'test-model' },
        analysis: { data_schema: dataSchema, summary: true, success_rubric: 'The callee confirmed.' },
      },
      maxDurationS: 30,
      silenceTimeoutS: 2,
    })
  ).id;
  await addPhoneNumber(service.store, accountId, '+15550009997');
});

afterAll(async () => {
  await service?.dispose();
  await fake?.close();
});

async function callWithCase(name: string, to = '+15550100008'): Promise<CallRecord> {
  const result = await postCall(service.url, key, {
    agent_id: agentId,
    from_number: '+15550009997',
    to_number: to,
    variables: { case: name },
  });
  expect(result.status).toBe(200);
  return waitForTerminal(service, (result.body as { call_id: string }).call_id, 40_000);
}

describe('post-call analysis', () => {
  it('fills the data by its schema, writes a summary and judges success; the record and call.completed carry them', async () => {
    const call = await callWithCase('good');
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    expect(call.extractedData).toEqual({ outcome: 'confirmed', new_day: null });
    expect(call.analysis).toEqual({
      status: 'completed',
      reason: null,
      summary: 'The agent asked to confirm; the callee pressed 1.',
      success: { passed: true, explanation: 'The callee confirmed.' },
    });
    const extraction = fake.requests.find(
      (entry) =>
        (entry.json as { response_format?: { json_schema?: { name?: string } } })?.response_format
          ?.json_schema?.name === 'extracted_data',
    )?.json as { response_format: { json_schema: { schema: unknown; strict: boolean } } };
    // The agent's own schema goes to the model as it is (outside strict mode), checked here after.
    expect(extraction.response_format.json_schema).toMatchObject({ schema: dataSchema, strict: false });
    const resource = await request(`${service.url}/v1/calls/${call.id}`, { headers: { 'X-API-Key': key } });
    expect(resource.status, resource.text).toBe(200);
    expect((resource.body as { analysis: unknown }).analysis).toEqual(call.analysis);
    const event = (await service.store.events.list(call.accountId, { limit: 50 })).find(
      (entry) => entry.callId === call.id,
    );
    const body = JSON.parse(event?.body ?? '{}') as { data: { analysis: unknown; extracted_data: unknown } };
    expect(body.data.analysis).toEqual(call.analysis);
    expect(body.data.extracted_data).toEqual({ outcome: 'confirmed', new_day: null });
  }, 45_000);

  it('reports data that does not fit the schema as a failed analysis with the reason, not as answers', async () => {
    const call = await callWithCase('off_enum');
    expect(call.extractedData).toEqual({});
    expect(call.analysis?.status).toBe('failed');
    expect(call.analysis?.reason).toMatch(
      /does not fit the data schema: \/outcome must be equal to one of the allowed values/,
    );
  }, 45_000);

  it('does not analyse a call whose callee never spoke', async () => {
    const before = fake.requests.length;
    const call = await callWithCase('good', '+15550100007');
    expect(call.extractedData).toEqual({});
    expect(call.analysis).toMatchObject({ status: 'skipped', reason: 'the callee never spoke' });
    expect(
      fake.requests
        .slice(before)
        .some((entry) => (entry.json as { response_format?: unknown } | undefined)?.response_format),
    ).toBe(false);
  }, 45_000);
});
