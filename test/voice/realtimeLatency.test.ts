import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { firstAudibleIndex, lastAudibleIndex } from '../../src/telephony/rtp/index.js';
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
 * Issue 33 item 7: a speech-to-speech call's `response_latency_ms` is what the callee heard — from
 * their last audible sample to the first audible sample of the reply, on the call's recording — not
 * the time from the vendor's `speech_stopped` (which the vendor sends once its own silence window
 * has passed, after the callee stopped) to the first packet.
 */

const ownKey = 'sk-own-realtime-latency';
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
  });
  const account = await service.store.accounts.create({ name: 'realtime latency' });
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

describe('a speech-to-speech call’s latency', () => {
  it('is timed from the callee’s last audible sample, as heard on the recording', async () => {
    const agent = await createAgent(service.store, accountId, {
      name: 'Realtime latency',
      prompt: 'You call {{customer_name}} to confirm an appointment.',
      firstMessage: 'Hello {{customer_name}}, this is the clinic calling about Tuesday.',
      variables: ['customer_name'].map(parseVariableDeclaration),
      brain: 'llm',
      extraction: [{ name: 'confirmed', type: 'boolean', description: 'Did they confirm?' }],
      settings: { realtime: { provider: 'openai', model: 'gpt-realtime', voice: 'marin' } },
      maxDurationS: 40,
    });
    const posted = await postCall(service.url, key, {
      agent_id: agent.id,
      from_number: '+15550009999',
      to_number: '+15550100001',
      variables: { customer_name: 'Ann' },
    });
    expect(posted.status).toBe(200);
    const call = await waitForTerminal(service, (posted.body as { call_id: string }).call_id, 40_000);
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
