import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { decodeWav } from '../audio/wav.js';
import { ProviderError } from '../providerError.js';
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../testing/fakeOpenAiServer.js';
import { telephoneSampleRateHz } from '../types.js';
import { OpenAiSpeechToText } from './openAiSpeechToText.js';
import { OpenAiTextToSpeech } from './openAiTextToSpeech.js';

const apiKey = 'sk-test-key';

function tone(frequencyHz: number, sampleRateHz: number, durationMs: number): Int16Array {
  const samples = new Int16Array((sampleRateHz * durationMs) / 1000);
  for (let i = 0; i < samples.length; i += 1) {
    samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * frequencyHz * i) / sampleRateHz));
  }
  return samples;
}

function positiveZeroCrossings(samples: Int16Array): number {
  let count = 0;
  for (let i = 1; i < samples.length; i += 1)
    if ((samples[i - 1] ?? 0) < 0 && (samples[i] ?? 0) >= 0) count += 1;
  return count;
}

async function collect(chunks: AsyncIterable<{ samples: Int16Array; sampleRateHz: number }>) {
  const parts: Int16Array[] = [];
  for await (const chunk of chunks) {
    expect(chunk.sampleRateHz).toBe(telephoneSampleRateHz);
    parts.push(chunk.samples);
  }
  const joined = new Int16Array(parts.reduce((total, part) => total + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return { parts, joined };
}

let server: FakeOpenAiServer;
beforeAll(async () => {
  server = await startFakeOpenAiServer({ apiKey });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.requests.length = 0;
  server.script.responseDelayMs = 0;
  server.script.nextFailure = undefined;
});

describe('OpenAiTextToSpeech', () => {
  it('streams 24 kHz pcm as 8 kHz chunks, keeping the pitch and duration', async () => {
    server.script.speechSamples = tone(500, 24_000, 1000);
    server.script.speechSampleRateHz = 24_000;
    const tts = new OpenAiTextToSpeech({ endpoint: { baseUrl: server.baseUrl, apiKey }, model: 'tts-1' });
    const { parts, joined } = await collect(tts.synthesize('Hello there', { voice: 'nova' }));
    expect(parts.length).toBeGreaterThan(10);
    expect(joined.length).toBe(8000);
    expect(positiveZeroCrossings(joined.subarray(1000, 7000))).toBeGreaterThanOrEqual(374);
    expect(positiveZeroCrossings(joined.subarray(1000, 7000))).toBeLessThanOrEqual(376);
    expect(server.requests[0]).toMatchObject({
      path: '/v1/audio/speech',
      authorization: `Bearer ${apiKey}`,
      json: { model: 'tts-1', input: 'Hello there', voice: 'nova', response_format: 'pcm' },
    });
  });

  it('reads a WAV answer at the rate its header states', async () => {
    server.script.speechSamples = tone(500, 16_000, 500);
    server.script.speechSampleRateHz = 16_000;
    const tts = new OpenAiTextToSpeech({
      endpoint: { baseUrl: server.baseUrl, apiKey },
      model: 'tts-1',
      responseFormat: 'wav',
    });
    const { joined } = await collect(tts.synthesize('Hi'));
    expect(joined.length).toBe(4000);
    expect(positiveZeroCrossings(joined.subarray(500, 3500))).toBeGreaterThanOrEqual(186);
    expect(positiveZeroCrossings(joined.subarray(500, 3500))).toBeLessThanOrEqual(188);
  });

  it('fails with the status and the server error code (not its text) on an HTTP error', async () => {
    const tts = new OpenAiTextToSpeech({
      endpoint: { baseUrl: server.baseUrl, apiKey: 'wrong' },
      model: 'tts-1',
    });
    const failure = await collect(tts.synthesize('Hi')).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProviderError);
    expect(failure).toMatchObject({
      code: 'unavailable',
      providerStatus: 401,
      message: 'openai-speech: HTTP 401 invalid_request_error',
    });
  });

  it('gives up after the timeout', async () => {
    server.script.responseDelayMs = 500;
    const tts = new OpenAiTextToSpeech({
      endpoint: { baseUrl: server.baseUrl, apiKey, timeoutMs: 100 },
      model: 'tts-1',
    });
    await expect(collect(tts.synthesize('Hi'))).rejects.toThrow('openai-speech: no response within 100 ms');
  });

  it("stops with the caller's reason when aborted", async () => {
    server.script.responseDelayMs = 500;
    const tts = new OpenAiTextToSpeech({ endpoint: { baseUrl: server.baseUrl, apiKey }, model: 'tts-1' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('barge-in')), 50);
    await expect(collect(tts.synthesize('Hi', { signal: controller.signal }))).rejects.toThrow('barge-in');
  });
});

describe('OpenAiSpeechToText', () => {
  it('uploads the utterance as an 8 kHz WAV with the model and phrases, and matches the answer', async () => {
    server.script.transcriptionText = ' Leave a message. ';
    const stt = new OpenAiSpeechToText({
      endpoint: { baseUrl: server.baseUrl, apiKey },
      model: 'whisper-1',
      language: 'en',
    });
    const session = await stt.startSession({ phrases: ['yes', 'no', 'leave a message'] });
    const partials: string[] = [];
    session.onPartial((partial) => partials.push(partial.text));
    const audio = tone(300, 8000, 1200);
    for (let offset = 0; offset < audio.length; offset += 160)
      session.pushAudio(audio.subarray(offset, offset + 160));
    const result = await session.finish();
    session.close();
    expect(result).toEqual({ text: 'Leave a message.', matchedPhrase: 'leave a message' });
    expect(partials).toEqual([]);
    const request = server.requests[0];
    expect(request?.path).toBe('/v1/audio/transcriptions');
    expect(request?.contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(request?.formFields).toEqual({
      model: 'whisper-1',
      response_format: 'json',
      language: 'en',
      prompt: 'Expected answers: yes; no; leave a message.',
    });
    expect(request?.uploadedFile?.name).toBe('utterance.wav');
    const uploaded = decodeWav(request?.uploadedFile?.bytes ?? new Uint8Array(0));
    expect(uploaded.sampleRateHz).toBe(8000);
    expect(Array.from(uploaded.samples)).toEqual(Array.from(audio));
  });

  it('returns free text without a matched phrase', async () => {
    server.script.transcriptionText = 'Maybe next week?';
    const stt = new OpenAiSpeechToText({ endpoint: { baseUrl: server.baseUrl, apiKey }, model: 'whisper-1' });
    const session = await stt.startSession({ phrases: ['yes', 'no'] });
    session.pushAudio(tone(300, 8000, 200));
    expect(await session.finish()).toEqual({ text: 'Maybe next week?' });
    expect(server.requests[0]?.formFields?.language).toBeUndefined();
  });

  it('fails with the status alone when the server errors with free text', async () => {
    server.script.nextFailure = { status: 500, body: '{"error":{"message":"model overloaded"}}' };
    const stt = new OpenAiSpeechToText({ endpoint: { baseUrl: server.baseUrl, apiKey }, model: 'whisper-1' });
    const session = await stt.startSession();
    session.pushAudio(tone(300, 8000, 200));
    await expect(session.finish()).rejects.toMatchObject({
      providerStatus: 500,
      message: 'openai-transcription: HTTP 500',
    });
  });

  it('abandons the upload when closed during finish', async () => {
    server.script.responseDelayMs = 500;
    const stt = new OpenAiSpeechToText({ endpoint: { baseUrl: server.baseUrl, apiKey }, model: 'whisper-1' });
    const session = await stt.startSession();
    session.pushAudio(tone(300, 8000, 200));
    const finishing = session.finish();
    setTimeout(() => session.close(), 50);
    await expect(finishing).rejects.toThrow('openai-transcription: session closed');
  });

  it('reports an unreachable server clearly', async () => {
    const stt = new OpenAiSpeechToText({
      endpoint: { baseUrl: 'http://127.0.0.1:1/v1' },
      model: 'whisper-1',
    });
    const session = await stt.startSession();
    await expect(session.finish()).rejects.toThrow(
      /openai-transcription: request to http:\/\/127\.0\.0\.1:1\/v1 failed/,
    );
  });
});
