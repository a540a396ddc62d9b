import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { ProviderError } from '../../src/voice/providers/providerError.js';
import { DeepgramTextToSpeech } from '../../src/voice/providers/tts/deepgramTextToSpeech.js';
import { type FakeDeepgramSpeak, startFakeDeepgramSpeak } from '../fakes/deepgramSpeakServer.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';

/** The Deepgram Aura adapter against a fake of Aura's documented streaming WebSocket. */

const apiKey = 'dg-aura-key-0123456789';
let fake: FakeDeepgramSpeak | undefined;

afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const tts = (key = apiKey) => new DeepgramTextToSpeech({ apiKey: key, baseUrl: fake?.baseUrl ?? '' });

async function until(check: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('DeepgramTextToSpeech (Aura)', () => {
  it('asks for 8 kHz μ-law with the voice as the model, sends Speak and Flush, yields the binary audio until Flushed', async () => {
    fake = await startFakeDeepgramSpeak({ apiKey, chunkIntervalMs: 20 });
    const text = 'Your appointment is on Tuesday.';
    const chunks: Int16Array[] = [];
    const arrivals: number[] = [];
    for await (const chunk of tts().synthesize(text, { voice: 'aura-2-orion-en' })) {
      expect(chunk.sampleRateHz).toBe(8000);
      chunks.push(chunk.samples);
      arrivals.push(performance.now());
    }
    expect(chunks.reduce((sum, chunk) => sum + chunk.length, 0)).toBe(8 * 60 * text.length);
    expect((arrivals.at(-1) ?? 0) - (arrivals[0] ?? 0)).toBeGreaterThan(60);
    const [connection] = fake.connections;
    expect(Object.fromEntries(connection?.query ?? [])).toEqual({
      model: 'aura-2-orion-en',
      encoding: 'mulaw',
      sample_rate: '8000',
    });
    expect(connection?.messages).toEqual([{ type: 'Speak', text }, { type: 'Flush' }]);
    await until(() => connection?.closeCode === 1000);
  });

  it('a barge-in sends Clear and drops the socket; the iterator throws the abort reason', async () => {
    fake = await startFakeDeepgramSpeak({ apiKey, chunkIntervalMs: 30 });
    const controller = new AbortController();
    let received = 0;
    const reason = new Error('barge-in');
    await expect(
      (async () => {
        for await (const _chunk of tts().synthesize('A long sentence that the callee talks over.', {
          signal: controller.signal,
        })) {
          if (++received === 2) controller.abort(reason);
        }
      })(),
    ).rejects.toBe(reason);
    const [connection] = fake.connections;
    await until(() => connection?.closeCode !== null);
    expect(connection?.messages.at(-1)).toEqual({ type: 'Clear' });
    expect(connection?.framesSent).toBeLessThan(10);
  });

  it('a refused key and an unknown voice are ProviderErrors with their status, without the key', async () => {
    fake = await startFakeDeepgramSpeak({ apiKey });
    for (const [adapter, voice, status] of [
      [tts('dg-wrong-key-0000'), undefined, 401],
      [tts(), 'aura-2-nobody-en', 400],
    ] as const) {
      const error = await (async () => {
        for await (const _chunk of adapter.synthesize('Hello.', voice ? { voice } : {})) {
          // no audio expected
        }
      })().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ProviderError);
      expect(error).toMatchObject({ provider: 'deepgram-aura', providerStatus: status });
      expect((error as Error).message).not.toContain('dg-wrong-key');
    }
  });
});

describe('a sandbox call spoken through Aura', () => {
  it('speaks every line of the example script through Aura with the agent’s voice and completes', async () => {
    const speak = await startFakeDeepgramSpeak({ apiKey });
    const service = await startFullService({
      CALLWRIGHT_DEEPGRAM_API_KEY: apiKey,
      CALLWRIGHT_DEEPGRAM_BASE_URL: speak.baseUrl,
    });
    try {
      const account = await service.store.accounts.create({ name: 'aura' });
      const key = (await createApiKey(service.store, account.id, 'aura')).key;
      await addPhoneNumber(service.store, account.id, '+15550009999');
      const agent = await createAgent(service.store, account.id, {
        name: 'Appointments in Aura',
        prompt: 'Confirm the appointment.',
        variables: ['customer_name', 'appointment_day=Tuesday', 'reschedule_to='].map(
          parseVariableDeclaration,
        ),
        script: JSON.parse(
          readFileSync(
            new URL('../../examples/agents/appointment-confirmation.json', import.meta.url),
            'utf8',
          ),
        ),
        settings: {
          tts: { provider: 'deepgram', voice: 'aura-2-orion-en', fallback: [{ provider: 'flite' }] },
        },
        maxDurationS: 60,
      });
      const placed = await postCall(service.url, key, {
        agent_id: agent.id,
        from_number: '+15550009999',
        to_number: '+15550100001',
        variables: { customer_name: 'Ann' },
      });
      expect(placed.status).toBe(200);
      const call = await waitForTerminal(service, (placed.body as { call_id: string }).call_id, 60_000);
      expect(call).toMatchObject({
        status: 'completed',
        endReason: 'agent_hangup',
        extractedData: { confirmed: true },
      });
      expect(call.transcript.map((line) => line.role)).toEqual(['agent', 'callee', 'agent']);
      const spoken = speak.connections.filter((connection) => connection.messages.length > 0);
      expect(spoken.map((connection) => connection.messages[0])).toEqual(
        call.transcript
          .filter((line) => line.role === 'agent')
          .map((line) => ({ type: 'Speak', text: line.text })),
      );
      expect(spoken.every((connection) => connection.query.get('model') === 'aura-2-orion-en')).toBe(true);
      expect((call.metrics as { provider_failures: unknown[] }).provider_failures).toEqual([]);
    } finally {
      await service.dispose();
      await speak.close();
    }
  }, 90_000);
});
