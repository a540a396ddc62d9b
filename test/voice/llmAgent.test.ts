import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { speechLikeTone } from '../../src/telephony/sandbox/index.js';
import {
  type FakeOpenAiServer,
  startFakeOpenAiServer,
} from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';

/**
 * An llm agent with HTTP speech providers, end to end on the sandbox, against a local fake of
 * the OpenAI-compatible wire protocol (streamed chat with a tool call, JSON-schema completion,
 * /audio/speech, /audio/transcriptions).
 */

let fake: FakeOpenAiServer;
let service: Awaited<ReturnType<typeof startFullService>>;
let key: string;
let agentId: string;

beforeAll(async () => {
  fake = await startFakeOpenAiServer({
    apiKey: 'sk-test',
    speechSamples: speechLikeTone(1200),
    speechSampleRateHz: 8000,
    transcriptionText: 'yes',
    chatStreamDeltas: [
      { delta: { role: 'assistant', content: 'Hello Ann, this is the clinic. ' } },
      { delta: { content: 'Your appointment is confirmed. Goodbye!' } },
      {
        delta: {
          tool_calls: [
            { index: 0, id: 'call_1', type: 'function', function: { name: 'end_call', arguments: '{}' } },
          ],
        },
        finishReason: 'tool_calls',
      },
    ],
    chatJsonContent: '{"confirmed":true,"unrelated":"dropped"}',
  });
  service = await startFullService({
    CALLWRIGHT_OPENAI_BASE_URL: fake.baseUrl,
    CALLWRIGHT_OPENAI_API_KEY: 'sk-test',
  });
  const account = await service.store.accounts.create({ name: 'llm' });
  key = (await createApiKey(service.store, account.id, 'llm')).key;
  agentId = (
    await createAgent(service.store, account.id, {
      name: 'LLM agent',
      prompt: 'You call {{customer_name}} about an appointment.',
      variables: ['customer_name'].map(parseVariableDeclaration),
      brain: 'llm',
      extraction: [{ name: 'confirmed', type: 'boolean', description: 'Did the customer confirm?' }],
      settings: {
        tts: { provider: 'openai', model: 'tts-1' },
        stt: { provider: 'openai' },
        llm: { model: 'test-model' },
      },
      maxDurationS: 30,
    })
  ).id;
  await addPhoneNumber(service.store, account.id, '+15550009999');
});

afterAll(async () => {
  await service?.dispose();
  await fake?.close();
});

describe('the llm brain with HTTP providers', () => {
  it('streams its reply sentence by sentence, ends the call with its tool, and extracts with a schema', async () => {
    const result = await postCall(service.url, key, {
      agent_id: agentId,
      from_number: '+15550009999',
      to_number: '+15550100007',
      context: 'She prefers mornings.',
      variables: { customer_name: 'Ann' },
    });
    const call = await waitForTerminal(service, (result.body as { call_id: string }).call_id, 40_000);
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    expect(call.transcript.map((entry) => [entry.role, entry.text])).toEqual([
      ['agent', 'Hello Ann, this is the clinic.'],
      ['agent', 'Your appointment is confirmed.'],
      ['agent', 'Goodbye!'],
    ]);
    // The callee never said a word: nothing is extracted, and the analysis says why.
    expect(call.extractedData).toEqual({});
    expect(call.analysis).toEqual({
      status: 'skipped',
      reason: 'the callee never spoke',
      summary: null,
      success: null,
    });

    const chats = fake.requests.filter((request) => request.path.endsWith('/chat/completions'));
    const streamed = chats[0]?.json as {
      model: string;
      stream: boolean;
      messages: { role: string; content: string }[];
      tools: { function: { name: string } }[];
    };
    expect(streamed.model).toBe('test-model');
    expect(streamed.stream).toBe(true);
    expect(streamed.messages[0]?.content).toBe(
      'You call Ann about an appointment.\n\nContext for this call:\nShe prefers mornings.',
    );
    expect(streamed.tools.map((tool) => tool.function.name).sort()).toEqual([
      'add_to_do_not_call',
      'end_call',
      'leave_voicemail',
      'schedule_callback',
      'send_dtmf',
    ]);
    expect(chats.some((request) => (request.json as { response_format?: unknown }).response_format)).toBe(
      false,
    );
    expect(
      fake.requests.filter((request) => request.path.endsWith('/audio/speech')).length,
    ).toBeGreaterThanOrEqual(3);
    expect(fake.requests.every((request) => request.authorization === 'Bearer sk-test')).toBe(true);
  }, 45_000);

  it('hears the callee through the HTTP transcription adapter and answers the turn', async () => {
    const ending = fake.script.chatStreamDeltas;
    fake.script.chatStreamDeltas = [
      { delta: { content: 'Can you make it on Tuesday?' }, finishReason: 'stop' },
    ];
    const before = fake.requests.length;
    const result = await postCall(service.url, key, {
      agent_id: agentId,
      from_number: '+15550009999',
      to_number: '+15550100001',
      variables: { customer_name: 'Ann' },
    });
    // Once the model has been asked for the opening, its next answer ends the call.
    for (
      let i = 0;
      i < 200 && !fake.requests.slice(before).some((r) => r.path.endsWith('/chat/completions'));
      i++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    fake.script.chatStreamDeltas = ending;
    const call = await waitForTerminal(service, (result.body as { call_id: string }).call_id, 40_000);
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup', answeredBy: 'human' });
    expect(call.transcript.map((entry) => entry.role)).toEqual([
      'agent',
      'callee',
      'agent',
      'agent',
      'agent',
    ]);
    expect(call.transcript[1]?.text).toBe('yes');
    const upload = fake.requests
      .slice(before)
      .find((request) => request.path.endsWith('/audio/transcriptions'));
    expect(upload?.uploadedFile?.type).toBe('audio/wav');
    const secondChat = fake.requests
      .slice(before)
      .filter((request) => request.path.endsWith('/chat/completions'))[1]?.json as {
      messages: { role: string; content: string }[];
    };
    expect(secondChat.messages.map((message) => message.role)).toEqual(['system', 'assistant', 'user']);
    expect(secondChat.messages[2]?.content).toBe('yes');
    // The callee spoke: a schema-constrained extraction, its unknown fields dropped.
    expect(call.extractedData).toEqual({ confirmed: true });
    expect(call.analysis).toMatchObject({ status: 'completed', reason: null });
    const extraction = fake.requests.filter((request) => request.path.endsWith('/chat/completions')).at(-1)
      ?.json as { response_format: { type: string; json_schema: { strict: boolean } } };
    expect(extraction.response_format.type).toBe('json_schema');
    expect(extraction.response_format.json_schema.strict).toBe(true);
  }, 45_000);
});
