import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { speechLikeTone } from '../../src/telephony/sandbox/index.js';
import { providerApology } from '../../src/voice/conversation.js';
import {
  type FakeOpenAiServer,
  startFakeOpenAiServer,
} from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';

/**
 * Issue 14, "failures are a call's, not the process's": a vendor that refuses every request (here
 * an OpenAI-compatible server that answers 401 to the service's key) is skipped for the agent's
 * next choice; when a stage has no choice left, or the language model fails, the callee hears a
 * short apology in the offline voice and the call ends failed/provider_error — never a silent line
 * until the silence timeout. Which vendor failed, at which stage and with which status is in the
 * call's metrics; the key is not.
 */

let fake: FakeOpenAiServer;
let service: Awaited<ReturnType<typeof startFullService>>;
let key: string;
let accountId: string;
const serviceKey = 'sk-this-key-is-refused';

const greetAndEnd = {
  start: 'greet',
  nodes: { greet: { say: 'Hello, this is a test call. Goodbye!', end: true } },
};

beforeAll(async () => {
  fake = await startFakeOpenAiServer({
    apiKey: 'sk-the-right-one',
    speechSamples: speechLikeTone(800),
    speechSampleRateHz: 8000,
    transcriptionText: 'yes',
    chatStreamDeltas: [{ delta: { role: 'assistant', content: 'Hello!' }, finishReason: 'stop' }],
    chatJsonContent: '{}',
  });
  service = await startFullService({
    CALLWRIGHT_OPENAI_BASE_URL: fake.baseUrl,
    CALLWRIGHT_OPENAI_API_KEY: serviceKey,
  });
  const account = await service.store.accounts.create({ name: 'failures' });
  accountId = account.id;
  key = (await createApiKey(service.store, account.id, 'failures')).key;
  await addPhoneNumber(service.store, account.id, '+15550009999');
});

afterAll(async () => {
  await service?.dispose();
  await fake?.close();
});

async function call(agent: Parameters<typeof createAgent>[2]) {
  const created = await createAgent(service.store, accountId, { maxDurationS: 30, ...agent });
  const result = await postCall(service.url, key, {
    agent_id: created.id,
    from_number: '+15550009999',
    to_number: '+15550100001',
  });
  expect(result.status).toBe(200);
  return waitForTerminal(service, (result.body as { call_id: string }).call_id, 40_000);
}

interface FailureMetric {
  stage: string;
  provider: string;
  status: number | null;
  reason: string;
}

function failuresOf(call: { metrics: unknown }): FailureMetric[] {
  return ((call.metrics as { provider_failures?: FailureMetric[] }).provider_failures ??
    []) as FailureMetric[];
}

describe('a vendor that refuses every request', () => {
  it('is skipped for the next text-to-speech choice: the call goes on in flite and says what failed', async () => {
    const result = await call({
      name: 'Falls back',
      prompt: 'p',
      script: greetAndEnd,
      settings: { tts: { provider: 'openai', fallback: [{ provider: 'flite', voice: 'slt' }] } },
    });
    expect(result).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    expect(result.transcript?.[0]).toMatchObject({
      role: 'agent',
      text: 'Hello, this is a test call. Goodbye!',
    });
    const failures = failuresOf(result);
    expect(failures[0]).toMatchObject({ stage: 'tts', provider: 'openai', status: 401 });
    expect(JSON.stringify(result.metrics)).not.toContain(serviceKey);
  });

  it('with no choice left for its voice: an apology in the offline voice, then failed/provider_error', async () => {
    const result = await call({
      name: 'No voice left',
      prompt: 'p',
      script: greetAndEnd,
      settings: { tts: { provider: 'openai' } },
    });
    expect(result).toMatchObject({ status: 'failed', endReason: 'provider_error' });
    expect(result.transcript).toEqual([expect.objectContaining({ role: 'agent', text: providerApology })]);
    expect(failuresOf(result)).toEqual([
      expect.objectContaining({ stage: 'tts', provider: 'openai', status: 401 }),
    ]);
  });

  it('as the language model: an apology instead of silence, then failed/provider_error', async () => {
    const result = await call({ name: 'No brain', prompt: 'Talk.', brain: 'llm', silenceTimeoutS: 20 });
    expect(result).toMatchObject({ status: 'failed', endReason: 'provider_error' });
    expect(result.transcript?.map((entry) => entry.text)).toEqual([providerApology]);
    expect(failuresOf(result)).toEqual([expect.objectContaining({ stage: 'llm', status: 401 })]);
  });
});
