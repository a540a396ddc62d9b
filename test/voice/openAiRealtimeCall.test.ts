import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import type { CallRecord } from '../../src/domain/records.js';
import { firstAudibleIndex, lastAudibleIndex } from '../../src/telephony/rtp/index.js';
import { providerApology } from '../../src/voice/conversation.js';
import {
  type FakeOpenAiServer,
  startFakeOpenAiServer,
} from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import type { TurnTiming } from '../../src/voice/turnTimeline.js';
import { attachFakeRealtime, type FakeRealtime } from '../fakes/openAiRealtimeServer.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { addOwnCredentials, postCall } from '../helpers/http.js';
import { agentChannel, calleeChannel } from '../helpers/recordings.js';

/**
 * Issue 14's speech-to-speech combination on the sandbox: an llm agent whose settings name an
 * OpenAI Realtime session holds the whole call through a fake of the Realtime WebSocket protocol —
 * the callee's RTP audio streams in as μ-law, the vendor's turn detection ends the callee's turn, the
 * session's μ-law audio is paced out, its transcripts make the call's, and its `end_call` function
 * call hangs up. The key is the account's own, added through POST /v1/credentials with the service's
 * keys switched off. A session the vendor refuses, and one that never answers, end with the offline
 * apology and failed/provider_error.
 */

const ownKey = 'sk-own-realtime-7c1e';
let openAi: FakeOpenAiServer;
let realtime: FakeRealtime;
let service: Awaited<ReturnType<typeof startFullService>>;
let accountId: string;
let key: string;

beforeAll(async () => {
  openAi = await startFakeOpenAiServer({
    apiKey: ownKey,
    speechSamples: new Int16Array(0),
    speechSampleRateHz: 8000,
    transcriptionText: '',
    chatJsonContent: '{"confirmed":true}',
  });
  realtime = attachFakeRealtime(openAi.httpServer, {
    apiKey: ownKey,
    replies: [
      { text: 'Hello Ann, this is the clinic calling about Tuesday.' },
      {
        text: 'Wonderful, see you then. Goodbye!',
        toolCall: { name: 'end_call', arguments: '{"reason":"confirmed"}' },
      },
    ],
    calleeTranscripts: ['Yes, that works.'],
  });
  service = await startFullService({
    CALLWRIGHT_SERVICE_VENDOR_KEYS: 'false',
    CALLWRIGHT_PROVIDER_ALLOW_PRIVATE: 'true',
    CALLWRIGHT_TTS_FIRST_AUDIO_TIMEOUT_MS: '1500',
  });
  const account = await service.store.accounts.create({ name: 'realtime' });
  accountId = account.id;
  key = (await createApiKey(service.store, account.id, 'realtime')).key;
  await addPhoneNumber(service.store, account.id, '+15550009999');
  await addOwnCredentials(service.url, key, [['openai', ownKey, openAi.baseUrl]]);
});

afterAll(async () => {
  await service?.dispose();
  realtime?.close();
  await openAi?.close();
});

async function callWith(
  realtimeSettings: Record<string, unknown>,
  more: { settings?: Record<string, unknown>; to?: string } = {},
): Promise<CallRecord> {
  const agent = await createAgent(service.store, accountId, {
    name: 'Realtime receptionist',
    prompt: 'You call {{customer_name}} to confirm an appointment.',
    firstMessage: 'Hello {{customer_name}}, this is the clinic calling about Tuesday.',
    // The sandbox person says the listed phrase alone: the vendor fake's transcript is fixed, and
    // its turn detection would hear a longer wording's pauses as more turns.
    variables: ['customer_name', 'sandbox_wording='].map(parseVariableDeclaration),
    brain: 'llm',
    extraction: [{ name: 'confirmed', type: 'boolean', description: 'Did they confirm?' }],
    settings: { realtime: realtimeSettings, ...more.settings },
    maxDurationS: 40,
  });
  const result = await postCall(service.url, key, {
    agent_id: agent.id,
    from_number: '+15550009999',
    to_number: more.to ?? '+15550100001',
    variables: { customer_name: 'Ann', sandbox_wording: 'exact' },
  });
  expect(result.status).toBe(200);
  return waitForTerminal(service, (result.body as { call_id: string }).call_id, 40_000);
}

describe('OpenAI Realtime as the whole voice of an agent', () => {
  it('holds the call through one session and hangs up when the model calls end_call', async () => {
    const before = realtime.connections.length;
    const call = await callWith({
      provider: 'openai',
      model: 'gpt-realtime',
      voice: 'marin',
      options: { turn_detection: 'server_vad' },
    });
    expect(call).toMatchObject({
      status: 'completed',
      endReason: 'agent_hangup',
      answeredBy: 'human',
      extractedData: { confirmed: true },
    });
    const spoken = call.transcript.filter((line) => !line.event);
    expect(spoken.map((line) => [line.role, line.text])).toEqual([
      ['agent', 'Hello Ann, this is the clinic calling about Tuesday.'],
      ['callee', 'Yes, that works.'],
      ['agent', 'Wonderful, see you then. Goodbye!'],
    ]);
    // The reason the model gave with end_call is a timed entry of its own.
    expect(call.transcript.filter((line) => line.event === 'end_call').map((line) => line.text)).toEqual([
      'confirmed',
    ]);
    // The callee's line sits between the agent's two, timed on the call's clock.
    const [greeting, answer, goodbye] = spoken as [
      CallRecord['transcript'][0],
      CallRecord['transcript'][0],
      CallRecord['transcript'][0],
    ];
    expect(answer.start_ms).toBeGreaterThanOrEqual(greeting.end_ms - 100);
    // Times are whole frames: the goodbye may begin in the very millisecond the answer ended.
    expect(goodbye.start_ms).toBeGreaterThanOrEqual(answer.end_ms);
    expect((call.metrics as { response_latencies_ms: number[] }).response_latencies_ms).toHaveLength(1);
    // Who answered is one decision: the early check gave up on the silence under the greeting, the
    // callee's reply decided a person — in the metrics as in the record (issue 38: the call page read
    // "human (50 %, decided at 3.0 s, silence)").
    expect((call.metrics as { answering_machine: unknown }).answering_machine).toMatchObject({
      answered_by: 'human',
      reason: 'reply',
    });

    expect(realtime.connections).toHaveLength(before + 1);
    const connection = realtime.connections.at(-1)!;
    expect(connection.model).toBe('gpt-realtime');
    expect(connection.session).toMatchObject({
      type: 'realtime',
      instructions: 'You call Ann to confirm an appointment.',
      output_modalities: ['audio'],
      audio: {
        input: {
          format: { type: 'audio/pcmu' },
          turn_detection: { type: 'server_vad', interrupt_response: true },
        },
        output: { format: { type: 'audio/pcmu' }, voice: 'marin' },
      },
    });
    expect(connection.session?.tools).toEqual([
      expect.objectContaining({ type: 'function', name: 'end_call' }),
      expect.objectContaining({ type: 'function', name: 'leave_voicemail' }),
      expect.objectContaining({ type: 'function', name: 'add_to_do_not_call' }),
    ]);
    // The greeting was asked for with the agent's first message; the callee's audio streamed in.
    expect(connection.responses[0]?.instructions).toContain(
      'Hello Ann, this is the clinic calling about Tuesday.',
    );
    expect(connection.appendedMs).toBeGreaterThan(1000);
    // The session's token counts (response.done usage) priced as realtime tokens.
    const usage = (call.metrics as { usage: { stage: string; unit: string; quantity: number }[] }).usage;
    const realtimeTokens = usage.filter((entry) => entry.stage === 'realtime');
    expect(realtimeTokens.map((entry) => entry.unit).sort()).toEqual([
      'input_audio_tokens',
      'input_tokens',
      'output_audio_tokens',
      'output_tokens',
    ]);
    expect(
      (call.metrics as { cost: { by_stage: { realtime: number } } }).cost.by_stage.realtime,
    ).toBeGreaterThan(0);
  });

  it('a session the vendor refuses: the offline apology, then failed/provider_error', async () => {
    const call = await callWith({ provider: 'openai', voice: 'no-such-voice' });
    expect(call).toMatchObject({ status: 'failed', endReason: 'provider_error' });
    expect(call.transcript.map((line) => line.text)).toEqual([providerApology]);
    expect((call.metrics as { provider_failures: unknown[] }).provider_failures).toEqual([
      expect.objectContaining({ stage: 'realtime', provider: 'openai-realtime' }),
    ]);
    expect(JSON.stringify(call.metrics)).not.toContain(ownKey);
  });

  it('a session that never answers: the same, after the first-audio timeout', async () => {
    realtime.script.hang = true;
    try {
      const call = await callWith({ provider: 'openai', voice: 'alloy' });
      expect(call).toMatchObject({ status: 'failed', endReason: 'provider_error' });
      expect(JSON.stringify(call.metrics)).toContain('no reply audio within 1500 ms');
    } finally {
      realtime.script.hang = false;
    }
  });

  it("transfers through the session's transfer_call once its words are heard", async () => {
    const replies = realtime.script.replies;
    realtime.script.replies = [
      { text: 'Hello Ann, this is the clinic calling about Tuesday.' },
      {
        text: 'Putting you through now.',
        toolCall: { name: 'transfer_call', arguments: '{"target":"human"}' },
      },
    ];
    try {
      const call = await callWith(
        { provider: 'openai', voice: 'alloy' },
        { settings: { transfer: { targets: { human: '+15550100015' } } } },
      );
      expect(call).toMatchObject({ status: 'completed', endReason: 'transferred' });
      const notes = call.transcript.filter((line) => line.event === 'transfer');
      expect(notes.map((line) => line.text)).toEqual(['human: transferred (200)']);
      // The REFER left once the words before it had been played.
      const said = call.transcript.find((line) => line.text === 'Putting you through now.');
      expect(notes[0]?.start_ms).toBeGreaterThanOrEqual(said?.end_ms as number);
      const offered = realtime.connections.at(-1)?.session?.tools as { name: string; parameters?: unknown }[];
      const transfer = offered.find((tool) => tool.name === 'transfer_call');
      expect(JSON.stringify(transfer?.parameters)).toContain('"enum":["human"]');
    } finally {
      realtime.script.replies = replies;
    }
  });

  it("puts a callee who asks on the do-not-call list through the session's add_to_do_not_call", async () => {
    const replies = realtime.script.replies;
    realtime.script.replies = [
      { text: 'Hello Ann, this is the clinic calling about Tuesday.' },
      {
        text: 'Of course, we will not call again.',
        toolCall: { name: 'add_to_do_not_call', arguments: '{}' },
      },
      { text: 'Goodbye.', toolCall: { name: 'end_call', arguments: '{}' } },
    ];
    try {
      const call = await callWith({ provider: 'openai', voice: 'alloy' });
      expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
      expect(call.transcript.some((line) => line.event === 'do_not_call')).toBe(true);
      expect(await service.store.doNotCall.get(accountId, '+15550100001')).toMatchObject({
        source: 'callee_request',
      });
      expect(realtime.connections.at(-1)?.toolOutputs.map((output) => output.output)).toContain('"done"');
    } finally {
      realtime.script.replies = replies;
      await service.store.doNotCall.remove(accountId, '+15550100001');
    }
  });
});

/**
 * Issue 33 item 7: a speech-to-speech call's `response_latency_ms` is what the callee heard — from
 * their last audible sample to the first audible sample of the reply, on the call's recording — not
 * the time from the vendor's `speech_stopped` (which the vendor sends once its own silence window
 * has passed, after the callee stopped) to the first packet.
 */
describe('a speech-to-speech call’s latency', () => {
  it('is timed from the callee’s last audible sample, as heard on the recording', async () => {
    const call = await callWith({ provider: 'openai', model: 'gpt-realtime', voice: 'marin' });
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    const metrics = call.metrics as {
      response_latencies_ms: number[];
      turns: TurnTiming[];
      greeting_audible_ms: number | null;
    };
    expect(metrics.response_latencies_ms).toHaveLength(1);
    const latencyMs = metrics.response_latencies_ms[0] as number;

    // On the recording: the callee's answer, then the agent's reply after it.
    const wav = readFileSync(call.recordingPath as string);
    const callee = calleeChannel(wav);
    const agentSide = agentChannel(wav);
    const answer = call.transcript.find((line) => line.role === 'callee') as { start_ms: number };
    const reply = call.transcript.filter((line) => line.role === 'agent' && !line.event)[1] as {
      start_ms: number;
    };
    // The callee's last audible sample before the reply, and the reply's first audible sample.
    const calleeEndMs = lastAudibleIndex(callee.subarray(0, reply.start_ms * 8)) / 8;
    expect(calleeEndMs).toBeGreaterThan(answer.start_ms);
    const agentStartMs =
      Math.round(calleeEndMs) + firstAudibleIndex(agentSide.subarray(Math.round(calleeEndMs) * 8)) / 8;
    const heardGapMs = agentStartMs - calleeEndMs;
    // The figure is the gap the callee heard (within one 20 ms frame of the recording), which
    // includes the vendor's wait before its speech_stopped — not only what came after it.
    expect(heardGapMs).toBeGreaterThan(0);
    expect(latencyMs).toBeGreaterThanOrEqual(heardGapMs - 20);
    expect(latencyMs).toBeLessThanOrEqual(heardGapMs + 20);
    // The waterfall of the turn, as the pipeline gives it: the speech end is the last audible
    // sample, and the vendor's decision comes its silence window after it.
    expect(metrics.turns).toHaveLength(1);
    expect(metrics.turns[0]?.callee_speech_end_ms).toBeGreaterThanOrEqual(Math.floor(calleeEndMs) - 20);
    expect(metrics.turns[0]?.callee_speech_end_ms).toBeLessThanOrEqual(Math.ceil(calleeEndMs) + 20);
    const vendorDecisionMs = metrics.turns[0]?.end_of_turn_ms as number;
    expect(vendorDecisionMs).toBeGreaterThan(60);
    expect(latencyMs).toBeGreaterThan(vendorDecisionMs);
    expect(metrics.turns[0]?.voice_to_voice_ms).toBe(latencyMs);
    expect(metrics.greeting_audible_ms).not.toBeNull();
  }, 60_000);
});
