import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import {
  type FakeOpenAiServer,
  startFakeOpenAiServer,
} from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { type FakeDeepgram, startFakeDeepgram } from '../fakes/deepgramLiveServer.js';
import { type FakeElevenLabs, startFakeElevenLabs } from '../fakes/elevenLabsStreamInputServer.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { addOwnCredentials, postCall } from '../helpers/http.js';

/**
 * Issue 14's first combination, end to end on the sandbox: an llm agent that hears through Deepgram
 * (live, μ-law), thinks with an OpenAI-compatible chat model (streamed, with a tool call to end the
 * call) and speaks through ElevenLabs (stream-input, μ-law) — each vendor a fake of its documented
 * wire protocol — chosen per agent in its settings, with the account's own keys added through
 * POST /v1/credentials (the service's keys switched off). The fake model confirms and ends the call in its
 * first reply, so what Deepgram hears here is whatever the callee says meanwhile; a conversation
 * that turns on Deepgram's transcript is test/voice/deepgramCall.test.ts.
 */

let deepgram: FakeDeepgram;
let elevenLabs: FakeElevenLabs;
let openAi: FakeOpenAiServer;
let service: Awaited<ReturnType<typeof startFullService>>;
let key: string;
let agentId: string;
const voiceId = 'EXAVITQu4vr4xnSDxMaL';

beforeAll(async () => {
  [deepgram, elevenLabs, openAi] = await Promise.all([
    startFakeDeepgram({ apiKey: 'dg-key-0001', transcripts: ['Yes, that works for me.'] }),
    // A slow first byte, as real vendors have: it must not become dead air between sentences.
    startFakeElevenLabs({ apiKey: 'xi-key-0001', voiceIds: [voiceId], firstAudioDelayMs: 600 }),
    startFakeOpenAiServer({
      apiKey: 'sk-llm-0001',
      speechSamples: new Int16Array(0),
      speechSampleRateHz: 8000,
      transcriptionText: '',
      chatStreamDeltas: [
        { delta: { role: 'assistant', content: 'Hello Ann, this is the clinic. ' } },
        { delta: { content: 'You are confirmed for Tuesday. Goodbye!' } },
        {
          delta: {
            tool_calls: [
              { index: 0, id: 'call_1', type: 'function', function: { name: 'end_call', arguments: '{}' } },
            ],
          },
          finishReason: 'tool_calls',
        },
      ],
      chatJsonContent: '{"confirmed":true}',
    }),
  ]);
  // The account's own keys, added through the API; the service has none of its own.
  service = await startFullService({
    CALLWRIGHT_SERVICE_VENDOR_KEYS: 'false',
    CALLWRIGHT_PROVIDER_ALLOW_PRIVATE: 'true',
  });
  const account = await service.store.accounts.create({ name: 'vendors' });
  key = (await createApiKey(service.store, account.id, 'vendors')).key;
  await addOwnCredentials(service.url, key, [
    ['deepgram', 'dg-key-0001', deepgram.baseUrl],
    ['elevenlabs', 'xi-key-0001', elevenLabs.baseUrl],
    ['openai', 'sk-llm-0001', openAi.baseUrl],
  ]);
  agentId = (
    await createAgent(service.store, account.id, {
      name: 'Streaming vendors',
      prompt: 'You call {{customer_name}} to confirm an appointment.',
      variables: ['customer_name'].map(parseVariableDeclaration),
      brain: 'llm',
      extraction: [{ name: 'confirmed', type: 'boolean', description: 'Did they confirm?' }],
      settings: {
        stt: { provider: 'deepgram', model: 'nova-3', language: 'en-US' },
        llm: { provider: 'openai', model: 'test-model' },
        tts: { provider: 'elevenlabs', voice: voiceId, fallback: [{ provider: 'flite' }] },
      },
      maxDurationS: 40,
    })
  ).id;
  await addPhoneNumber(service.store, account.id, '+15550009999');
});

/** The longest run of silence on the agent's (right) channel between its first and last sound. */
function longestAgentGapMs(wavPath: string): number {
  const wav = readFileSync(wavPath);
  const frames = (wav.length - 44) / 4;
  const windowSamples = 160;
  const loud: boolean[] = [];
  for (let start = 0; start + windowSamples <= frames; start += windowSamples) {
    let peak = 0;
    for (let i = start; i < start + windowSamples; i++)
      peak = Math.max(peak, Math.abs(wav.readInt16LE(44 + i * 4 + 2)));
    loud.push(peak > 200);
  }
  const first = loud.indexOf(true);
  const last = loud.lastIndexOf(true);
  let longest = 0;
  let run = 0;
  for (let index = first; index <= last; index++) {
    run = loud[index] ? 0 : run + 1;
    longest = Math.max(longest, run);
  }
  return longest * 20;
}

afterAll(async () => {
  await service?.dispose();
  await Promise.all([deepgram?.close(), elevenLabs?.close(), openAi?.close()]);
});

describe('Deepgram + an OpenAI-compatible LLM + ElevenLabs, per agent', () => {
  it('holds the call through the three vendors and completes it', async () => {
    const result = await postCall(service.url, key, {
      agent_id: agentId,
      from_number: '+15550009999',
      to_number: '+15550100001',
      variables: { customer_name: 'Ann' },
    });
    expect(result.status).toBe(200);
    const call = await waitForTerminal(service, (result.body as { call_id: string }).call_id, 40_000);
    expect(call).toMatchObject({
      status: 'completed',
      endReason: 'agent_hangup',
      // The agent said it all and hung up before the person replied: nothing to analyse.
      extractedData: {},
      analysis: { status: 'skipped', reason: 'the callee never spoke', summary: null, success: null },
    });
    expect(call.transcript[0]).toMatchObject({ role: 'agent', text: 'Hello Ann, this is the clinic.' });
    expect((call.metrics as { provider_failures: unknown[] }).provider_failures).toEqual([]);

    // ElevenLabs spoke every sentence, in μ-law, with the agent's voice.
    expect(elevenLabs.connections.length).toBeGreaterThanOrEqual(2);
    expect(new Set(elevenLabs.connections.map((connection) => connection.voiceId))).toEqual(
      new Set([voiceId]),
    );
    expect(
      elevenLabs.connections.every((connection) => connection.query.get('output_format') === 'ulaw_8000'),
    ).toBe(true);
    // The reply's three sentences play back to back: the next one is synthesised while the one
    // before plays, so the agent's channel of the recording has no gap of the vendor's 600 ms.
    expect(call.transcript.filter((line) => line.role === 'agent')).toHaveLength(3);
    expect(longestAgentGapMs(call.recordingPath as string)).toBeLessThan(250);
    // The greeting's socket was opened while the phone rang, before the call was answered.
    expect(elevenLabs.connections[0]?.openedAtMs).toBeLessThan(Date.parse(call.inProgressAt as string));
    // What each vendor was used for, in its billing unit, and what that cost.
    const metrics = call.metrics as {
      usage: { stage: string; provider: string; model: string | null; unit: string; quantity: number }[];
      cost: { total_usd: number; by_stage: Record<string, number>; lines: { usd: number | null }[] };
    };
    const used = (stage: string, unit: string) =>
      metrics.usage.find((entry) => entry.stage === stage && entry.unit === unit);
    const spoken = call.transcript.filter((line) => line.role === 'agent').map((line) => line.text);
    expect(used('tts', 'characters')).toMatchObject({
      provider: 'elevenlabs',
      quantity: spoken.reduce((sum, text) => sum + text.length, 0),
    });
    // The fake counts a token per streamed chunk (3); a call without the callee has no extraction.
    expect(used('llm', 'output_tokens')).toMatchObject({
      provider: 'openai',
      model: 'test-model',
      quantity: 3,
    });
    expect(used('llm', 'input_tokens')?.quantity).toBeGreaterThan(10);
    expect(used('telephony', 'minutes')).toMatchObject({ provider: 'sandbox' });
    const ttsUsd = ((used('tts', 'characters')?.quantity ?? 0) / 1000) * 0.05;
    expect(metrics.cost.by_stage.tts).toBeCloseTo(ttsUsd, 5);
    expect(metrics.cost.total_usd).toBeCloseTo(
      metrics.cost.lines.reduce((sum, line) => sum + (line.usd ?? 0), 0),
      5,
    );
    // The LLM got the rendered prompt.
    const chat = openAi.requests.find((request) => request.path.endsWith('/chat/completions'));
    expect(JSON.stringify(chat?.json)).toContain('You call Ann to confirm an appointment.');
  });
});
