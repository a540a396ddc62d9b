import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ProviderError } from '../../src/voice/providers/providerError.js';
import { ElevenLabsTextToSpeech } from '../../src/voice/providers/tts/elevenLabsTextToSpeech.js';
import { type FakeElevenLabs, startFakeElevenLabs } from '../fakes/elevenLabsStreamInputServer.js';

/** The ElevenLabs stream-input adapter against a fake of ElevenLabs' documented WebSocket protocol. */

const apiKey = 'xi-test-key-0123456789';
const voiceId = '21m00Tcm4TlvDq8ikWAM';
let fake: FakeElevenLabs | undefined;

afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function collect(audio: AsyncIterable<{ samples: Int16Array; sampleRateHz: number }>) {
  const chunks: Int16Array[] = [];
  for await (const chunk of audio) {
    expect(chunk.sampleRateHz).toBe(8000);
    chunks.push(chunk.samples);
  }
  return chunks;
}

async function until(check: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const tts = (key = apiKey) =>
  new ElevenLabsTextToSpeech({ apiKey: key, baseUrl: fake?.baseUrl ?? '', language: 'en' });

describe('ElevenLabsTextToSpeech', () => {
  it('asks for 8 kHz μ-law, follows the message protocol, and yields the audio as it streams', async () => {
    fake = await startFakeElevenLabs({ apiKey, voiceIds: [voiceId], chunkIntervalMs: 30 });
    const text = 'Hello Ann, this is the clinic.';
    const arrivals: number[] = [];
    const chunks: Int16Array[] = [];
    for await (const chunk of tts().synthesize(text, { voice: voiceId })) {
      arrivals.push(performance.now());
      chunks.push(chunk.samples);
    }
    const samples = chunks.reduce((total, chunk) => total + chunk.length, 0);
    expect(samples).toBe(8 * 60 * text.length);
    const meanMagnitude =
      chunks.flatMap((chunk) => [...chunk]).reduce((sum, value) => sum + Math.abs(value), 0) / samples;
    expect(meanMagnitude).toBeGreaterThan(2900); // a 5000-amplitude tone: about 5000 × 2/π
    expect(meanMagnitude).toBeLessThan(3500);
    expect(chunks.length).toBeGreaterThan(5);
    // Streamed: the chunks came over a span of time, not all at once at the end.
    expect((arrivals.at(-1) ?? 0) - (arrivals[0] ?? 0)).toBeGreaterThan(60);

    const [connection] = fake.connections;
    expect(connection?.voiceId).toBe(voiceId);
    expect(Object.fromEntries(connection?.query ?? [])).toEqual({
      model_id: 'eleven_flash_v2_5',
      output_format: 'ulaw_8000',
      language_code: 'en',
    });
    expect(connection?.messages).toEqual([{ text: ' ' }, { text: `${text} `, flush: true }, { text: '' }]);
  });

  it("prepare opens the next reply's socket ahead; the reply uses it, close ends an unused one", async () => {
    fake = await startFakeElevenLabs({
      apiKey,
      voiceIds: [voiceId],
      firstAudioDelayMs: 0,
      chunkIntervalMs: 0,
    });
    const adapter = tts();
    adapter.prepare({ voice: voiceId });
    await until(() => fake?.connections.length === 1);
    // The handshake is done before the text exists; the reply sends its messages on that socket.
    expect(fake.connections[0]?.messages).toEqual([]);
    const text = 'Ready when you are.';
    expect((await collect(adapter.synthesize(text, { voice: voiceId }))).length).toBeGreaterThan(0);
    expect(fake.connections).toHaveLength(1);
    expect(fake.connections[0]?.messages).toEqual([
      { text: ' ' },
      { text: `${text} `, flush: true },
      { text: '' },
    ]);
    // The next spare: one that no reply took is closed with the adapter.
    adapter.prepare({ voice: voiceId });
    await until(() => fake?.connections.length === 2);
    await adapter.close();
    await until(() => fake?.connections[1]?.closeCode !== null);
    expect(fake.connections[1]?.messages).toEqual([]);
  });

  it('a refused key is a ProviderError with status 401, without the key', async () => {
    fake = await startFakeElevenLabs({ apiKey, voiceIds: [voiceId] });
    const error = await collect(tts('wrong-key-abcdef').synthesize('Hi.')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).providerStatus).toBe(401);
    expect((error as Error).message).not.toContain('wrong-key-abcdef');
  });

  it("the vendor's error frame (an unknown voice, a spent quota) is a ProviderError naming it", async () => {
    fake = await startFakeElevenLabs({ apiKey, voiceIds: [voiceId] });
    await expect(collect(tts().synthesize('Hi.', { voice: 'NoSuchVoice' }))).rejects.toThrow(
      /voice_not_found/,
    );
    // The message echoes the key, as some vendors' errors do: only the code is kept (issue 33).
    fake.script.errorFrame = { error: 'quota_exceeded', message: `Quota exceeded for key ${apiKey}.` };
    const spent = await collect(tts().synthesize('Hi.', { voice: voiceId })).catch(
      (caught: unknown) => caught,
    );
    expect((spent as Error).message).toBe('elevenlabs: quota_exceeded');
    expect((spent as Error).stack).not.toContain(apiKey);
  });

  it('a frame that is not a message is an error, never audio', async () => {
    fake = await startFakeElevenLabs({ apiKey, voiceIds: [voiceId], garbage: true });
    await expect(collect(tts().synthesize('Hi.', { voice: voiceId }))).rejects.toThrow(/not a JSON message/);
  });

  it('an abort (barge-in) closes the socket at once and ends the reply with the abort reason', async () => {
    fake = await startFakeElevenLabs({ apiKey, voiceIds: [voiceId], chunkIntervalMs: 40 });
    const controller = new AbortController();
    let received = 0;
    const run = (async () => {
      for await (const _chunk of tts().synthesize('A long sentence that takes a while to say out loud.', {
        voice: voiceId,
        signal: controller.signal,
      })) {
        received++;
        if (received === 2) controller.abort(new Error('barge-in'));
      }
    })();
    await expect(run).rejects.toThrow('barge-in');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const [connection] = fake.connections;
    expect(connection?.closeCode).not.toBeNull();
    expect(connection?.closedByClientAtChunk).toBeLessThan(6);
  });
});

describe('the ElevenLabs fake keeps to the documented protocol', () => {
  it('refuses a bad key at the upgrade and ends a generation with isFinal', async () => {
    fake = await startFakeElevenLabs({ apiKey, voiceIds: [voiceId] });
    const url = `${fake.baseUrl}/v1/text-to-speech/${voiceId}/stream-input?model_id=eleven_flash_v2_5&output_format=ulaw_8000`;
    const refused = await new Promise<number>((resolve) => {
      const socket = new WebSocket(url, { headers: { 'xi-api-key': 'nope' } });
      socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.on('error', () => undefined);
    });
    expect(refused).toBe(401);
    const last = await new Promise<Record<string, unknown>>((resolve) => {
      const socket = new WebSocket(url, { headers: { 'xi-api-key': apiKey } });
      socket.on('open', () => {
        socket.send(JSON.stringify({ text: ' ' }));
        socket.send(JSON.stringify({ text: 'Hi. ' }));
        socket.send(JSON.stringify({ text: '' }));
      });
      socket.on('message', (data) => {
        const message = JSON.parse(String(data)) as Record<string, unknown>;
        if (message.isFinal === true) {
          socket.close();
          resolve(message);
        }
      });
    });
    expect(last).toEqual({ isFinal: true });
  });
});
