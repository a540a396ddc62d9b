import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { decodeWav } from '../../src/voice/providers/audio/wav.js';
import { appointmentTestAccount } from '../helpers/agentTests.js';
import { startFullService } from '../helpers/fullService.js';
import { jsonApi } from '../helpers/http.js';
import { startLlmTestService } from '../helpers/llmService.js';

/**
 * A persona callee (a goal instead of lines) played by the configured language model, here the
 * OpenAI-compatible fake speaking its documented wire protocol: the sandbox sends the agent's
 * words to /audio/transcriptions as a WAV, asks /chat/completions (streamed) what the person says,
 * and says it with flite; the script agent hears it over RTP. Without a model such a run is refused.
 */

const script = JSON.parse(
  readFileSync(resolve(import.meta.dirname, '../../examples/agents/appointment-confirmation.json'), 'utf8'),
);
const goal = 'You are Ann. Tuesday suits you; say so briefly.';

let setup: Awaited<ReturnType<typeof startLlmTestService>>;
let agentId = '';
const api = jsonApi(
  () => setup.service.url,
  () => setup.key,
);

beforeAll(async () => {
  setup = await startLlmTestService({
    transcriptionText: 'Hello Ann, can you make it on Tuesday?',
    chatStreamDeltas: [{ delta: { content: 'Sorry?' }, finishReason: 'stop' }],
    chatStreamFor: (request) => {
      const system = String(request.messages[0]?.content ?? '');
      if (!system.includes(goal)) return undefined;
      const last = request.messages.at(-1);
      return last?.role === 'user' && String(last.content).includes('Tuesday')
        ? [{ delta: { content: 'Yes, that works.' } }, { delta: {}, finishReason: 'stop' }]
        : undefined;
    },
  });
  agentId = (
    await createAgent(setup.service.store, setup.accountId, {
      name: 'Appointment confirmation',
      prompt: 'Confirm the appointment.',
      variables: ['customer_name', 'appointment_day=Tuesday'].map(parseVariableDeclaration),
      script,
      maxDurationS: 40,
    })
  ).id;
  await addPhoneNumber(setup.service.store, setup.accountId, '+15550009999');
}, 60_000);

afterAll(async () => {
  await setup?.dispose();
});

describe('a persona callee', () => {
  it.concurrent('hears the agent, answers toward its goal through the model, and the agent hears the answer', async () => {
    const started = await api(`/agents/${agentId}/tests`, {
      method: 'POST',
      body: {
        scenarios: [
          {
            name: 'Ann, played by the model',
            call: { variables: { customer_name: 'Ann' } },
            callee: { answers: 'human', persona: { goal, max_replies: 3 } },
            expect: { end_reason: 'agent_hangup', data: { confirmed: true } },
          },
        ],
      },
    });
    expect(started.status, started.text).toBe(201);
    const runId = (started.body as { id: string }).id;
    let report: { status: string; results: { status: string; failures: string[] }[] } = {
      status: '',
      results: [],
    };
    const deadline = Date.now() + 60_000;
    while (report.status !== 'completed' && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 400));
      report = (await api(`/agents/${agentId}/tests/${runId}`)).body as typeof report;
    }
    expect(report.results[0], JSON.stringify(report.results[0])).toMatchObject({ status: 'passed' });
    // The agent's greeting went to the model's ears as a WAV of real speech.
    const heard = setup.fake.requests.find((request) => request.path.endsWith('/audio/transcriptions'));
    const wav = decodeWav(heard?.uploadedFile?.bytes as Uint8Array);
    expect(wav.sampleRateHz).toBe(8_000);
    expect(wav.samples.length / 8_000).toBeGreaterThan(3);
    const asked = setup.fake.requests.find(
      (request) =>
        request.path.endsWith('/chat/completions') &&
        JSON.stringify((request.json as { messages: unknown[] }).messages).includes(goal),
    );
    const askedMessages = (asked?.json as { messages: { role: string; content: string }[] } | undefined)
      ?.messages;
    expect(askedMessages?.at(-1)).toEqual({
      role: 'user',
      content: 'Hello Ann, can you make it on Tuesday?',
    });
    const call = await setup.service.store.calls.get(
      setup.accountId,
      (report as unknown as { results: { call_id: string }[] }).results[0]?.call_id as string,
    );
    expect(call?.transcript.find((entry) => entry.role === 'callee')?.text).toMatch(/yes/);
  }, 90_000);

  it.concurrent("speaks the callee's lines in a vendor's voice when the scenario names one", async () => {
    // 1.2 s of a loud two-tone burst at 24 kHz stands in for the vendor's speech.
    setup.fake.script.speechSamples = Int16Array.from({ length: 28_800 }, (_, index) =>
      Math.round(6_000 * (Math.sin(index / 9) + Math.sin(index / 5))),
    );
    const started = await api(`/agents/${agentId}/tests`, {
      method: 'POST',
      body: {
        scenarios: [
          {
            name: 'a vendor voice',
            call: { variables: { customer_name: 'Ann' } },
            callee: {
              answers: 'human',
              voice: { provider: 'openai', voice: 'alloy' },
              turns: [{ say: 'Yes, that works.' }],
            },
            expect: { status: 'completed' },
          },
        ],
      },
    });
    expect(started.status, started.text).toBe(201);
    const runId = (started.body as { id: string }).id;
    let report = { status: '', results: [] as { status: string; call_id: string }[] };
    const deadline = Date.now() + 60_000;
    while (report.status !== 'completed' && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 400));
      report = (await api(`/agents/${agentId}/tests/${runId}`)).body as typeof report;
    }
    expect(report.results[0]?.status).toBe('passed');
    const spoken = setup.fake.requests.filter((request) => request.path.endsWith('/audio/speech'));
    expect(spoken.map((request) => request.json)).toContainEqual(
      expect.objectContaining({ input: 'Yes, that works.', voice: 'alloy' }),
    );
    const call = await setup.service.store.calls.get(setup.accountId, report.results[0]?.call_id as string);
    // What the vendor returned is what the agent heard: the recording's callee channel carries it.
    const recording = decodeWav(readFileSync(call?.recordingPath as string), { channel: 0 });
    const loudest = recording.samples.reduce((most, sample) => Math.max(most, Math.abs(sample)), 0);
    expect(loudest).toBeGreaterThan(5_000);
  }, 90_000);

  it('is refused where no language model is configured, and so is a vendor voice without its key', async () => {
    const bare = await startFullService();
    try {
      const { accountId, key, agentId: bareAgentId } = await appointmentTestAccount(bare, { name: 'bare' });
      const bareApi = jsonApi(
        () => bare.url,
        () => key,
      );
      const refusal = async (callee: Record<string, unknown>) => {
        const body = { scenarios: [{ name: 'p', call: { variables: { customer_name: 'A' } }, callee }] };
        const refused = await bareApi(`/agents/${bareAgentId}/tests`, { method: 'POST', body });
        expect(refused.status).toBe(400);
        return (refused.body as { error: { message: string } }).error.message;
      };
      expect(await refusal({ answers: 'human', persona: { goal: 'g' } })).toMatch(/language model/);
      expect(
        await refusal({ answers: 'human', voice: { provider: 'elevenlabs' }, turns: [{ say: 'hi' }] }),
      ).toMatch(/elevenlabs has no service-wide key/);
      expect(await bare.store.calls.list(accountId, { limit: 10 })).toEqual([]);
    } finally {
      await bare.dispose();
    }
  }, 60_000);
});
