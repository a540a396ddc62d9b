import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import type { CallRecord } from '../../src/domain/records.js';
import {
  type FakeOpenAiServer,
  startFakeOpenAiServer,
} from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';

/**
 * The language model chosen per agent with its own base URL (issue 14): an account holds two
 * OpenAI-compatible credentials — say OpenAI's and Groq's — and each agent's `settings.llm.credential`
 * names the one it talks to. Without a name the account's first is used; a name the account does not
 * have leaves the agent without a brain, so the call is not dialled (failed/provider_error).
 */

let first: FakeOpenAiServer;
let second: FakeOpenAiServer;
let service: Awaited<ReturnType<typeof startFullService>>;
let accountId: string;
let key: string;

const sayingThenHangingUp = (words: string) => [
  { delta: { role: 'assistant', content: words } },
  {
    delta: {
      tool_calls: [
        { index: 0, id: 'call_1', type: 'function', function: { name: 'end_call', arguments: '{}' } },
      ],
    },
    finishReason: 'tool_calls',
  },
];

beforeAll(async () => {
  [first, second] = await Promise.all([
    startFakeOpenAiServer({
      apiKey: 'sk-first-0001',
      chatStreamDeltas: sayingThenHangingUp('This is the first model.'),
    }),
    startFakeOpenAiServer({
      apiKey: 'gsk-second-0002',
      chatStreamDeltas: sayingThenHangingUp('This is the second model.'),
    }),
  ]);
  service = await startFullService({
    CALLWRIGHT_SERVICE_VENDOR_KEYS: 'false',
    CALLWRIGHT_PROVIDER_ALLOW_PRIVATE: 'true',
  });
  const account = await service.store.accounts.create({ name: 'two models' });
  accountId = account.id;
  key = (await createApiKey(service.store, account.id, 'two models')).key;
  await addPhoneNumber(service.store, account.id, '+15550009999');
  // Named so that "a-openai" is the account's first openai credential.
  for (const [name, apiKey, baseUrl] of [
    ['a-openai', 'sk-first-0001', first.baseUrl],
    ['groq', 'gsk-second-0002', second.baseUrl],
  ] as const) {
    await service.store.credentials.create({
      accountId,
      name,
      provider: 'openai',
      apiKeyCiphertext: service.secretBox.seal(apiKey),
      apiKeyLast4: apiKey.slice(-4),
      baseUrl,
    });
  }
});

afterAll(async () => {
  await service?.dispose();
  await Promise.all([first?.close(), second?.close()]);
});

async function callWith(llm: Record<string, unknown>): Promise<CallRecord> {
  const agent = await createAgent(service.store, accountId, {
    name: `Model ${JSON.stringify(llm)}`,
    prompt: 'Say who you are.',
    brain: 'llm',
    settings: { llm },
    maxDurationS: 30,
  });
  const placed = await postCall(service.url, key, {
    agent_id: agent.id,
    from_number: '+15550009999',
    to_number: '+15550100001',
  });
  expect(placed.status).toBe(200);
  return waitForTerminal(service, (placed.body as { call_id: string }).call_id, 30_000);
}

describe('the language model chosen per agent, by credential', () => {
  it('talks to the endpoint of the credential the agent names, else the account’s first', async () => {
    const named = await callWith({
      provider: 'openai',
      credential: 'groq',
      model: 'llama-3.3-70b-versatile',
    });
    expect(named).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    expect(named.transcript[0]?.text).toBe('This is the second model.');
    const chat = second.requests.find((request) => request.path === '/v1/chat/completions');
    expect(chat?.authorization).toBe('Bearer gsk-second-0002');
    expect((chat?.json as { model?: string } | undefined)?.model).toBe('llama-3.3-70b-versatile');

    const unnamed = await callWith({ provider: 'openai' });
    expect(unnamed.transcript[0]?.text).toBe('This is the first model.');
  });

  it('a credential the account does not have: not dialled, failed/provider_error', async () => {
    const call = await callWith({ provider: 'openai', credential: 'azure-eu' });
    expect(call).toMatchObject({ status: 'failed', endReason: 'provider_error', sipCallId: null });
  });
});
