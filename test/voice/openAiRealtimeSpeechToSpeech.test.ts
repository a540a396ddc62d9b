import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import {
  OpenAiRealtimeSpeechToSpeech,
  ProviderError,
  type SpeechToSpeechEvent,
  type SpeechToSpeechSession,
} from '../../src/voice/providers/index.js';
import {
  type FakeOpenAiServer,
  startFakeOpenAiServer,
} from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { attachFakeRealtime, type FakeRealtime } from '../fakes/openAiRealtimeServer.js';

/**
 * The OpenAI Realtime adapter against a fake of the documented WebSocket protocol: a refused key
 * (HTTP 401 on the upgrade), an error event for a refused configuration, barge-in (the vendor's
 * `speech_started` cancels the reply, the adapter truncates the item to what was played), a failed
 * response, a tool the agent does not have, and a socket that drops mid-call.
 */

const apiKey = 'sk-realtime-test-0001';
let http: FakeOpenAiServer;
let fake: FakeRealtime;
const logger = createLogger('silent');

beforeAll(async () => {
  http = await startFakeOpenAiServer({ apiKey });
  fake = attachFakeRealtime(http.httpServer, {
    apiKey,
    replies: [{ text: 'A rather long reply that the callee will talk over before it has ended, surely.' }],
    calleeTranscripts: ['Sorry, stop.'],
    chunkIntervalMs: 5,
  });
});

afterAll(async () => {
  fake?.close();
  await http?.close();
});

function adapter(key = apiKey) {
  return new OpenAiRealtimeSpeechToSpeech({ apiKey: key, baseUrl: http.baseUrl, logger });
}

async function open(): Promise<{ session: SpeechToSpeechSession; events: SpeechToSpeechEvent[] }> {
  const events: SpeechToSpeechEvent[] = [];
  const session = await adapter().open({ instructions: 'Be brief.', voice: 'alloy', tools: [] }, (event) =>
    events.push(event),
  );
  return { session, events };
}

async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const loud = new Int16Array(160).map((_, i) => Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 8000)));
const quiet = new Int16Array(160);

describe('OpenAI Realtime adapter', () => {
  it('rejects the open with the status when the key is refused', async () => {
    const error = await adapter('sk-wrong-key-0000')
      .open({ instructions: 'x', tools: [] }, () => undefined)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ provider: 'openai-realtime', providerStatus: 401 });
    expect(String((error as Error).message)).not.toContain('sk-wrong');
  });

  it('rejects the open with the vendor error when the configuration is refused', async () => {
    const error = await adapter()
      .open({ instructions: 'x', voice: 'nobody', tools: [] }, () => undefined)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    // The vendor's code is kept; its free text is not (issue 33: it may echo the key).
    expect((error as Error).message).toMatch(/invalid_value/);
    expect((error as Error).message).not.toContain('Invalid voice nobody');
  });

  it('on barge-in: the reply is cancelled, its words so far reported, the item truncated', async () => {
    const { session, events } = await open();
    session.respond();
    await until(() => events.filter((event) => event.type === 'agent_audio').length >= 3);
    const item = events.find((event) => event.type === 'agent_audio') as { itemId: string };
    for (let i = 0; i < 10; i++) session.pushAudio(loud);
    await until(() => events.some((event) => event.type === 'speech_started'));
    session.truncate(item.itemId, 240.4);
    await until(() => events.some((event) => event.type === 'response_done'));
    // The cancelled reply never had a transcript.done: its words so far stand for it.
    expect(events).toContainEqual({
      type: 'agent_transcript',
      itemId: item.itemId,
      text: expect.any(String),
    });
    const connection = fake.connections.at(-1)!;
    await until(() => connection.truncates.length === 1);
    expect(connection.truncates).toEqual([{ item_id: item.itemId, audio_end_ms: 240 }]);
    expect(connection.responses[0]?.status).toBe('cancelled');
    // The callee's quiet ends their turn: transcript, then a new reply.
    for (let i = 0; i < 30; i++) session.pushAudio(quiet);
    await until(() => events.some((event) => event.type === 'callee_transcript'));
    expect(events).toContainEqual({ type: 'callee_transcript', text: 'Sorry, stop.' });
    expect(events.some((event) => event.type === 'failed')).toBe(false);
    session.close();
  });

  it('answers a tool the agent does not have through the session, and asks for a reply', async () => {
    const { session } = await open();
    session.sendToolResult('call_9', JSON.stringify({ error: 'there is no tool named lookup' }));
    const connection = fake.connections.at(-1)!;
    await until(() => connection.responses.length === 1);
    expect(connection.toolOutputs).toEqual([
      { call_id: 'call_9', output: '{"error":"there is no tool named lookup"}' },
    ]);
    session.close();
  });

  it('reports a failed response and a dropped socket as failures of the session', async () => {
    fake.script.failResponsesWith = 'server_overloaded';
    try {
      const { session, events } = await open();
      session.respond();
      await until(() => events.some((event) => event.type === 'failed'));
      const failed = events.find((event) => event.type === 'failed') as { error: ProviderError };
      expect(failed.error.message).toContain('server_overloaded');
    } finally {
      fake.script.failResponsesWith = null;
    }
    const { events } = await open();
    fake.close();
    await until(() => events.some((event) => event.type === 'failed'));
    expect((events.find((event) => event.type === 'failed') as { error: Error }).error.message).toMatch(
      /socket closed/,
    );
  });
});
