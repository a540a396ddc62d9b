import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  FallbackSpeechToText,
  ProviderFailureLog,
  StageExhaustedError,
} from '../../src/voice/providers/fallbackProviders.js';
import { ProviderError } from '../../src/voice/providers/providerError.js';
import { DeepgramSpeechToText } from '../../src/voice/providers/stt/deepgramSpeechToText.js';
import { type FakeDeepgram, startFakeDeepgram } from '../fakes/deepgramLiveServer.js';

/** The Deepgram live adapter (through the official SDK) against a fake of Deepgram's wire protocol. */

const apiKey = 'dg-test-key-0123456789';
let fake: FakeDeepgram | undefined;

afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

function tone(durationMs: number, amplitude = 6000): Int16Array {
  const samples = new Int16Array(8 * durationMs);
  for (let i = 0; i < samples.length; i++)
    samples[i] = Math.round(amplitude * Math.sin((2 * Math.PI * 300 * i) / 8000));
  return samples;
}

function pushInFrames(session: { pushAudio(samples: Int16Array): void }, audio: Int16Array): void {
  for (let offset = 0; offset < audio.length; offset += 160)
    session.pushAudio(audio.subarray(offset, offset + 160));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('DeepgramSpeechToText', () => {
  it('streams μ-law at 8 kHz, hears interim hypotheses, and finishes with the Finalize answer', async () => {
    fake = await startFakeDeepgram({ apiKey, transcripts: ['yes that works for me'] });
    const stt = new DeepgramSpeechToText({ apiKey, baseUrl: fake.baseUrl, language: 'en-US' });
    const session = await stt.startSession({ phrases: ['yes that works for me', 'no'] });
    const partials: string[] = [];
    session.onPartial((partial) => partials.push(partial.text));
    pushInFrames(session, tone(800));
    await sleep(150);
    const heard = await session.finish();
    expect(heard).toMatchObject({ text: 'yes that works for me', matchedPhrase: 'yes that works for me' });
    expect(heard.confidence).toBeGreaterThan(0.9);
    expect(partials.length).toBeGreaterThan(0);
    expect(partials[0]?.length).toBeLessThan('yes that works for me'.length);

    const [connection] = fake.connections;
    expect(Object.fromEntries(connection?.query ?? [])).toMatchObject({
      model: 'nova-3',
      encoding: 'mulaw',
      sample_rate: '8000',
      channels: '1',
      interim_results: 'true',
      language: 'en-US',
    });
    expect(connection?.query.getAll('keyterm')).toEqual(['yes that works for me', 'no']);
    expect(connection?.audioFrames).toBe(40);
    // μ-law of a 6000-amplitude sine: the mean magnitude decodes to about 6000 × 2/π.
    expect(connection?.meanAmplitude).toBeGreaterThan(3600);
    expect(connection?.meanAmplitude).toBeLessThan(4050);
    await sleep(50);
    expect(connection?.controls.map((control) => control.type)).toEqual(['Finalize', 'CloseStream']);
    expect(connection?.closeCode).toBe(1000);
  });

  it('a refused key is a ProviderError with status 401 that does not carry the key', async () => {
    fake = await startFakeDeepgram({ apiKey, transcripts: ['x'] });
    const stt = new DeepgramSpeechToText({ apiKey: 'wrong-key-abcdef', baseUrl: fake.baseUrl });
    const error = await stt.startSession().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).providerStatus).toBe(401);
    expect((error as Error).message).not.toContain('wrong-key-abcdef');
    expect(fake.refusedUpgrades).toBe(1);
  });

  it('an error close from Deepgram (1008 DATA-0000) fails the utterance, naming the code', async () => {
    fake = await startFakeDeepgram({ apiKey, transcripts: ['x'], closeAfterFrames: 5 });
    const session = await new DeepgramSpeechToText({ apiKey, baseUrl: fake.baseUrl }).startSession();
    pushInFrames(session, tone(200));
    await sleep(100);
    await expect(session.finish()).rejects.toThrow(/1008 DATA-0000/);
    session.close();
  });

  it('a Deepgram that never answers Finalize is given up on by the fallback chain in time', async () => {
    fake = await startFakeDeepgram({ apiKey, transcripts: ['x'], hang: true });
    const failures = new ProviderFailureLog();
    const chain = new FallbackSpeechToText(
      [
        {
          provider: 'deepgram',
          stt: new DeepgramSpeechToText({ apiKey, baseUrl: fake.baseUrl }),
          finalTimeoutMs: 300,
        },
      ],
      failures,
    );
    const session = await chain.startSession();
    pushInFrames(session, tone(300));
    await expect(session.finish()).rejects.toBeInstanceOf(StageExhaustedError);
    session.close();
    expect(failures.failures[0]?.reason).toMatch(/no final transcript within 300 ms/);
  });

  it('keeps an idle stream open with KeepAlive', async () => {
    fake = await startFakeDeepgram({ apiKey, transcripts: ['x'], idleCloseMs: 250 });
    const session = await new DeepgramSpeechToText({
      apiKey,
      baseUrl: fake.baseUrl,
      keepAliveIntervalMs: 80,
    }).startSession();
    await sleep(600);
    const [connection] = fake.connections;
    expect(
      connection?.controls.filter((control) => control.type === 'KeepAlive').length,
    ).toBeGreaterThanOrEqual(3);
    expect(connection?.closeCode).toBeNull();
    session.close();
  });
});

describe('the Deepgram fake keeps to the documented protocol', () => {
  it('refuses a bad key at the upgrade, closes an idle stream with 1011, answers CloseStream with Metadata', async () => {
    fake = await startFakeDeepgram({ apiKey, transcripts: ['x'], idleCloseMs: 200 });
    const url = `${fake.baseUrl}/v1/listen?encoding=mulaw&sample_rate=8000`;
    const refused = await new Promise<number>((resolve) => {
      const socket = new WebSocket(url, { headers: { Authorization: 'Token nope' } });
      socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.on('error', () => undefined);
    });
    expect(refused).toBe(401);
    const idle = await new Promise<{ code: number; reason: string }>((resolve) => {
      const socket = new WebSocket(url, { headers: { Authorization: `Token ${apiKey}` } });
      socket.on('close', (code, reason) => resolve({ code, reason: String(reason) }));
    });
    expect(idle).toEqual({ code: 1011, reason: 'NET-0001' });
    const messages = await new Promise<string[]>((resolve) => {
      const received: string[] = [];
      const socket = new WebSocket(url, { headers: { Authorization: `Token ${apiKey}` } });
      socket.on('open', () => socket.send(JSON.stringify({ type: 'CloseStream' })));
      socket.on('message', (data) => received.push(JSON.parse(String(data)).type));
      socket.on('close', () => resolve(received));
    });
    expect(messages).toEqual(['Metadata']);
  });
});
