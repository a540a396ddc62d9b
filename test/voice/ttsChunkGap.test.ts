import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FallbackTextToSpeech, ProviderFailureLog } from '../../src/voice/providers/fallbackProviders.js';
import { ElevenLabsTextToSpeech } from '../../src/voice/providers/tts/elevenLabsTextToSpeech.js';
import { type FakeElevenLabs, startFakeElevenLabs } from '../fakes/elevenLabsStreamInputServer.js';

/**
 * The chunk-gap clock of FallbackTextToSpeech counts the vendor's time only: a caller that takes
 * longer between chunks than the gap (it holds the audio back while the callee talks) does not make
 * a healthy vendor fail; a vendor that stalls mid-sentence does, and the next choice says the
 * sentence from its start (two ElevenLabs fakes, the second one healthy).
 */

const voiceId = 'EXAVITQu4vr4xnSDxMaL';
let first: FakeElevenLabs;
let second: FakeElevenLabs;

beforeAll(async () => {
  [first, second] = await Promise.all([
    startFakeElevenLabs({ apiKey: 'xi-1', voiceIds: [voiceId], chunkIntervalMs: 20 }),
    startFakeElevenLabs({ apiKey: 'xi-2', voiceIds: [voiceId], chunkIntervalMs: 20 }),
  ]);
});

afterAll(async () => {
  await Promise.all([first?.close(), second?.close()]);
});

function chain(failures: ProviderFailureLog) {
  const adapter = (fake: FakeElevenLabs, apiKey: string) =>
    new ElevenLabsTextToSpeech({ apiKey, baseUrl: fake.baseUrl, defaultVoiceId: voiceId });
  return new FallbackTextToSpeech(
    [
      { provider: 'first', tts: adapter(first, 'xi-1'), firstAudioTimeoutMs: 1000, chunkGapTimeoutMs: 150 },
      { provider: 'second', tts: adapter(second, 'xi-2'), firstAudioTimeoutMs: 1000, chunkGapTimeoutMs: 150 },
    ],
    failures,
  );
}

describe('the chunk gap of a text-to-speech vendor', () => {
  it('does not count the time the caller takes between chunks', async () => {
    const failures = new ProviderFailureLog();
    let samples = 0;
    // 30 characters: 1.8 s of audio in 100 ms chunks; the caller takes 250 ms over each.
    for await (const chunk of chain(failures).synthesize('A sentence of thirty letters.')) {
      samples += chunk.samples.length;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(failures.failures).toEqual([]);
    expect(samples).toBe(8 * 60 * 'A sentence of thirty letters.'.length);
  });

  it('fails a vendor that stalls mid-sentence: the next says the whole sentence again', async () => {
    first.script.faults.push({ kind: 'stall', afterChunks: 3, times: 1 });
    const failures = new ProviderFailureLog();
    let samples = 0;
    for await (const chunk of chain(failures).synthesize('A sentence of thirty letters.'))
      samples += chunk.samples.length;
    expect(failures.failures).toEqual([
      expect.objectContaining({ stage: 'tts', provider: 'first', kind: 'stall' }),
    ]);
    // Three chunks of the first voice, then all of the sentence in the second.
    expect(samples).toBe(3 * 800 + 8 * 60 * 'A sentence of thirty letters.'.length);
  });
});
