import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';

/**
 * Issue 14, per-agent choice: settings naming an unknown provider, voice or field are refused when
 * the agent is saved; at call time the first choice of each stage whose credentials this process
 * has is used, and a call whose agent has none for a stage is never dialled — it ends
 * failed/provider_error instead of ringing someone it cannot speak to.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
let key: string;
let accountId: string;

const speaks = {
  start: 'greet',
  nodes: { greet: { say: 'Hello, this is a test call. Goodbye!', end: true } },
};

beforeAll(async () => {
  // No vendor credentials in this process: ElevenLabs and Deepgram cannot be used.
  service = await startFullService();
  const account = await service.store.accounts.create({ name: 'providers' });
  accountId = account.id;
  key = (await createApiKey(service.store, account.id, 'providers')).key;
  await addPhoneNumber(service.store, account.id, '+15550009999');
});

afterAll(async () => {
  await service.dispose();
});

async function callWith(settings: Record<string, unknown>) {
  const agent = await createAgent(service.store, accountId, {
    name: 'Chooser',
    prompt: 'p',
    script: speaks,
    settings,
    maxDurationS: 30,
  });
  const result = await postCall(service.url, key, {
    agent_id: agent.id,
    from_number: '+15550009999',
    to_number: '+15550100001',
  });
  expect(result.status).toBe(200);
  return waitForTerminal(service, (result.body as { call_id: string }).call_id, 40_000);
}

describe('an agent that names its providers', () => {
  it('is refused on save when a provider, voice or field does not exist', async () => {
    for (const [settings, message] of [
      [{ tts: { provider: 'polly' } }, /settings\.tts\.provider must be one of/],
      [{ tts: { provider: 'flite', voice: 'nobody' } }, /is not a flite voice/],
      [{ stt: { provider: 'deepgram', punctuation: true } }, /settings\.stt\.punctuation is not a setting/],
    ] as const) {
      await expect(
        createAgent(service.store, accountId, { name: 'x', prompt: 'p', script: speaks, settings }),
      ).rejects.toThrow(message);
    }
  });

  it('is not dialled when no choice of a stage can be used here: failed/provider_error', async () => {
    const call = await callWith({ tts: { provider: 'elevenlabs', voice: '21m00Tcm4TlvDq8ikWAM' } });
    expect(call).toMatchObject({ status: 'failed', endReason: 'provider_error', sipCallId: null });
    expect(call.transcript ?? []).toEqual([]);
  });

  it('falls back to the next choice whose credentials it has, and speaks', async () => {
    const call = await callWith({
      tts: {
        provider: 'elevenlabs',
        voice: '21m00Tcm4TlvDq8ikWAM',
        fallback: [{ provider: 'flite', voice: 'slt' }],
      },
      stt: { provider: 'deepgram', fallback: [{ provider: 'pocketsphinx' }] },
    });
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    expect(call.transcript?.[0]).toMatchObject({
      role: 'agent',
      text: 'Hello, this is a test call. Goodbye!',
    });
  });
});
