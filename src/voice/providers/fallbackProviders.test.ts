import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FallbackSpeechToText,
  FallbackTextToSpeech,
  ProviderFailureLog,
  StageExhaustedError,
} from './fallbackProviders.js';
import { OpenAiSpeechToText } from './http/openAiSpeechToText.js';
import { OpenAiTextToSpeech } from './http/openAiTextToSpeech.js';
import { ProviderError } from './providerError.js';
import { type FakeOpenAiServer, startFakeOpenAiServer } from './testing/fakeOpenAiServer.js';

/**
 * The fallback chains against real HTTP servers speaking the OpenAI-compatible protocol: one that
 * answers, one that hangs, one that refuses the key. No provider is faked in-process.
 */

const apiKey = 'sk-test';
let good: FakeOpenAiServer;
let hanging: FakeOpenAiServer;

function tone(durationMs: number): Int16Array {
  const samples = new Int16Array(8 * durationMs);
  for (let i = 0; i < samples.length; i++)
    samples[i] = Math.round(6000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
  return samples;
}

const script = (text: string) => ({
  apiKey,
  speechSamples: tone(300),
  speechSampleRateHz: 8000,
  transcriptionText: text,
  chatStreamDeltas: [],
  chatJsonContent: '{}',
});

beforeAll(async () => {
  good = await startFakeOpenAiServer(script('from the good one'));
  hanging = await startFakeOpenAiServer({ ...script('too late'), responseDelayMs: 5_000 });
});

afterAll(async () => {
  await good.close();
  await hanging.close();
});

async function samplesOf(audio: AsyncIterable<{ samples: Int16Array }>): Promise<number> {
  let count = 0;
  for await (const chunk of audio) count += chunk.samples.length;
  return count;
}

const tts = (server: FakeOpenAiServer, key = apiKey) =>
  new OpenAiTextToSpeech({ endpoint: { baseUrl: server.baseUrl, apiKey: key }, model: 'tts-1' });
const stt = (server: FakeOpenAiServer, key = apiKey) =>
  new OpenAiSpeechToText({ endpoint: { baseUrl: server.baseUrl, apiKey: key }, model: 'whisper-1' });

describe('FallbackTextToSpeech', () => {
  it('gives up on a vendor with no audio in time, speaks with the next, and starts there afterwards', async () => {
    const failures = new ProviderFailureLog();
    const chain = new FallbackTextToSpeech(
      [
        { provider: 'slow', tts: tts(hanging), firstAudioTimeoutMs: 200 },
        { provider: 'good', tts: tts(good), firstAudioTimeoutMs: 2_000 },
      ],
      failures,
    );
    const requestsBefore = hanging.requests.length;
    // The fake's 2400 samples, sent as OpenAI's 24 kHz pcm, arrive as 800 samples at 8 kHz.
    expect(await samplesOf(chain.synthesize('Hello there.'))).toBe(800);
    expect(failures.failures).toEqual([
      expect.objectContaining({
        stage: 'tts',
        provider: 'slow',
        status: null,
        reason: expect.stringMatching(/no audio within 200 ms/),
      }),
    ]);
    expect(await samplesOf(chain.synthesize('Again.'))).toBe(800);
    // The slow vendor was asked once: the second reply went to the next choice at once.
    expect(hanging.requests.length - requestsBefore).toBeLessThanOrEqual(1);
    expect(failures.failures).toHaveLength(1);
  });

  it('throws StageExhaustedError with the vendor status when every vendor refuses', async () => {
    const failures = new ProviderFailureLog();
    const chain = new FallbackTextToSpeech(
      [
        { provider: 'first', tts: tts(good, 'sk-wrong'), firstAudioTimeoutMs: 2_000 },
        { provider: 'second', tts: tts(good, 'sk-wrong'), firstAudioTimeoutMs: 2_000 },
      ],
      failures,
    );
    const error = await samplesOf(chain.synthesize('Hi.')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StageExhaustedError);
    expect((error as ProviderError).providerStatus).toBe(401);
    expect((error as Error).message).not.toContain('sk-wrong');
    expect(failures.failures.map((failure) => [failure.provider, failure.status])).toEqual([
      ['first', 401],
      ['second', 401],
    ]);
  });

  it('a chain without vendors throws the engine error itself (one lost reply, not the call)', async () => {
    const chain = new FallbackTextToSpeech(
      [{ provider: 'local', tts: tts(good, 'sk-wrong') }],
      new ProviderFailureLog(),
    );
    const error = await samplesOf(chain.synthesize('Hi.')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).not.toBeInstanceOf(StageExhaustedError);
  });

  it('an abort by the caller (barge-in) is not a vendor failure', async () => {
    const failures = new ProviderFailureLog();
    const chain = new FallbackTextToSpeech(
      [
        { provider: 'slow', tts: tts(hanging), firstAudioTimeoutMs: 3_000 },
        { provider: 'good', tts: tts(good) },
      ],
      failures,
    );
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('barge-in')), 100);
    await expect(samplesOf(chain.synthesize('Hi.', { signal: controller.signal }))).rejects.toThrow(
      'barge-in',
    );
    expect(failures.failures).toEqual([]);
  });
});

describe('FallbackSpeechToText', () => {
  it('gives the next provider the whole utterance when a vendor has no final in time', async () => {
    const failures = new ProviderFailureLog();
    const chain = new FallbackSpeechToText(
      [
        { provider: 'slow', stt: stt(hanging), finalTimeoutMs: 200 },
        { provider: 'good', stt: stt(good), finalTimeoutMs: 2_000 },
      ],
      failures,
    );
    const session = await chain.startSession();
    const audio = tone(500);
    for (let offset = 0; offset < audio.length; offset += 160)
      session.pushAudio(audio.subarray(offset, offset + 160));
    const uploadsBefore = good.requests.filter((request) => request.uploadedFile).length;
    expect((await session.finish()).text).toBe('from the good one');
    session.close();
    const upload = good.requests.filter((request) => request.uploadedFile).at(-1)?.uploadedFile;
    expect(good.requests.filter((request) => request.uploadedFile).length).toBe(uploadsBefore + 1);
    // A WAV of exactly the pushed samples: 44 header bytes + 2 bytes a sample.
    expect(upload?.bytes.length).toBe(44 + audio.length * 2);
    expect(failures.failures).toEqual([expect.objectContaining({ stage: 'stt', provider: 'slow' })]);

    // The next utterance starts with the provider that worked.
    const next = await chain.startSession();
    next.pushAudio(tone(200));
    expect((await next.finish()).text).toBe('from the good one');
    next.close();
    expect(failures.failures).toHaveLength(1);
  });

  it('a refused last provider is tried again by the next utterance (nothing better is left)', async () => {
    const failures = new ProviderFailureLog();
    const chain = new FallbackSpeechToText(
      [{ provider: 'only', stt: stt(good, 'sk-wrong'), finalTimeoutMs: 2_000 }],
      failures,
    );
    for (let turn = 0; turn < 2; turn++) {
      const session = await chain.startSession();
      session.pushAudio(tone(100));
      await expect(session.finish()).rejects.toBeInstanceOf(StageExhaustedError);
      session.close();
    }
    expect(failures.failures.map((failure) => failure.status)).toEqual([401, 401]);
  });
});
