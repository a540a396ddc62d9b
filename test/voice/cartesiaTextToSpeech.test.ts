import { afterEach, describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/voice/providers/providerError.js';
import { CartesiaTextToSpeech, cartesiaVersion } from '../../src/voice/providers/tts/cartesiaTextToSpeech.js';
import { type FakeCartesia, startFakeCartesia } from '../fakes/cartesiaServer.js';

/** The Cartesia adapter against a fake of Cartesia's documented TTS WebSocket protocol. */

const apiKey = 'sk_car_test_0123456789';
const voiceId = '6ccbfb76-1fc6-48f7-b71d-91ac6298247b';
let fake: FakeCartesia | undefined;

afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function samplesOf(audio: AsyncIterable<{ samples: Int16Array; sampleRateHz: number }>) {
  let count = 0;
  for await (const chunk of audio) {
    expect(chunk.sampleRateHz).toBe(8000);
    count += chunk.samples.length;
  }
  return count;
}

const tts = (key = apiKey) =>
  new CartesiaTextToSpeech({ apiKey: key, baseUrl: fake?.baseUrl ?? '', language: 'en' });

describe('CartesiaTextToSpeech', () => {
  it('sends one generation request for raw 8 kHz μ-law and yields its chunks until done', async () => {
    fake = await startFakeCartesia({ apiKey, voiceIds: [voiceId] });
    const text = 'You are confirmed for Tuesday.';
    expect(await samplesOf(tts().synthesize(text, { voice: voiceId }))).toBe(8 * 60 * text.length);
    const [connection] = fake.connections;
    expect(connection?.version).toBe(cartesiaVersion);
    expect(connection?.requests).toEqual([
      {
        model_id: 'sonic-3',
        transcript: text,
        voice: { mode: 'id', id: voiceId },
        language: 'en',
        context_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        output_format: { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 8000 },
        continue: false,
      },
    ]);
  });

  it('a refused key is a ProviderError 401 without the key; an error response names its code', async () => {
    fake = await startFakeCartesia({ apiKey, voiceIds: [voiceId] });
    const refused = await samplesOf(tts('sk_car_wrong_key').synthesize('Hi.')).catch(
      (caught: unknown) => caught,
    );
    expect(refused).toBeInstanceOf(ProviderError);
    expect((refused as ProviderError).providerStatus).toBe(401);
    expect((refused as Error).message).not.toContain('sk_car_wrong_key');
    const unknownVoice = await samplesOf(tts().synthesize('Hi.', { voice: 'nobody' })).catch(
      (caught: unknown) => caught,
    );
    expect((unknownVoice as Error).message).toBe('cartesia: voice_not_found');
    expect((unknownVoice as ProviderError).providerStatus).toBe(400);
  });

  it('an abort sends the documented cancel for its context and ends the reply', async () => {
    fake = await startFakeCartesia({ apiKey, voiceIds: [voiceId], chunkIntervalMs: 40 });
    const controller = new AbortController();
    let received = 0;
    const run = (async () => {
      for await (const _chunk of tts().synthesize('A sentence long enough to take a while.', {
        voice: voiceId,
        signal: controller.signal,
      })) {
        if (++received === 2) controller.abort(new Error('barge-in'));
      }
    })();
    await expect(run).rejects.toThrow('barge-in');
    await new Promise((resolve) => setTimeout(resolve, 80));
    const [connection] = fake.connections;
    expect(connection?.canceled).toBe(true);
    expect(connection?.requests.at(-1)).toEqual({
      context_id: connection?.requests[0]?.context_id,
      cancel: true,
    });
    expect(connection?.chunksSent).toBeLessThan(6);
  });
});
