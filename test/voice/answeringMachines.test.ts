import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { setWebhookEndpoint, setWebhookEventTypes } from '../../src/admin/webhooks.js';
import type { CallRecord } from '../../src/domain/records.js';
import { loadSecretBox } from '../../src/secrets/secretBox.js';
import { fakeToolCallDelta } from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';
import { startLlmTestService } from '../helpers/llmService.js';

/**
 * Answering machines decided early, end to end on the sandbox (real SIP and RTP, the sandbox's
 * flite voice saying its greetings, the offline recogniser): a script agent that waits for the
 * decision meets a voicemail with a beep, one without, and two people who greet differently; an
 * llm agent (the model a fake of OpenAI's chat protocol) decides by itself with `leave_voicemail`.
 * Where the message starts is read off the call's recording, not off callwright's own figures.
 * How fast the decision comes is a latency target and lives in `npm run bench:amd`; these tests
 * hold what the callee hears: decided before the beep or the greeting ends, the agent only after.
 */

interface AnsweringFigures {
  answered_by: string;
  confidence: number;
  decision_ms: number;
  reason: string;
}

/** 20 ms windows of one channel of the call's stereo recording (left: callee, right: agent). */
function channelWindows(path: string, channel: 0 | 1): Int16Array[] {
  const wav = readFileSync(path);
  const frames = (wav.length - 44) / 4;
  const windows: Int16Array[] = [];
  for (let start = 0; start + 160 <= frames; start += 160) {
    const window = new Int16Array(160);
    for (let i = 0; i < 160; i++) window[i] = wav.readInt16LE(44 + (start + i) * 4 + channel * 2);
    windows.push(window);
  }
  return windows;
}

function rms(window: Int16Array): number {
  let sum = 0;
  for (const sample of window) sum += sample * sample;
  return Math.sqrt(sum / window.length);
}

/** Share of a window's energy at 1 kHz (a correlation with a 1 kHz sine and cosine). */
function kiloHertzShare(window: Int16Array): number {
  let re = 0;
  let im = 0;
  let energy = 0;
  for (let i = 0; i < window.length; i++) {
    const sample = window[i] as number;
    re += sample * Math.cos((2 * Math.PI * 1000 * i) / 8000);
    im += sample * Math.sin((2 * Math.PI * 1000 * i) / 8000);
    energy += sample * sample;
  }
  return energy === 0 ? 0 : (2 * (re * re + im * im)) / (window.length * energy);
}

/** In ms of the recording: the end of the callee's 1 kHz beep, or -1. */
function beepEndMs(path: string): number {
  const windows = channelWindows(path, 0);
  let last = -1;
  windows.forEach((window, index) => {
    if (rms(window) > 1_000 && kiloHertzShare(window) > 0.8) last = index;
  });
  return last < 0 ? -1 : (last + 1) * 20;
}

/** In ms of the recording: the first and last audible window of a channel. */
function audibleSpanMs(path: string, channel: 0 | 1): { startMs: number; endMs: number } {
  const loud = channelWindows(path, channel).map((window) => rms(window) > 300);
  return { startMs: loud.indexOf(true) * 20, endMs: (loud.lastIndexOf(true) + 1) * 20 };
}

const message = 'Hi {{customer_name}}, this is the clinic. Please call us back about your appointment.';

describe('answering machines, decided early (script agent, waits for the decision)', () => {
  let service: Awaited<ReturnType<typeof startFullService>>;
  let key: string;
  let agentId: string;
  let accountId: string;

  beforeAll(async () => {
    service = await startFullService();
    const account = await service.store.accounts.create({ name: 'machines' });
    accountId = account.id;
    // call.answered is stored for the account (its delivery is not what is tested here).
    const secretBox = loadSecretBox({ configuredKeyBase64: null, dataDir: service.dataDir });
    await setWebhookEndpoint(service.store, secretBox, account.id, 'http://127.0.0.1:9/hooks', {
      allowPrivate: true,
    });
    await setWebhookEventTypes(service.store, account.id, ['call.answered']);
    key = (await createApiKey(service.store, account.id, 'k')).key;
    agentId = (
      await createAgent(service.store, account.id, {
        name: 'Clinic',
        prompt: 'p',
        variables: ['customer_name'].map(parseVariableDeclaration),
        script: {
          start: 'greet',
          nodes: {
            greet: {
              say: 'Hello {{customer_name}}, this is the clinic about your appointment on Tuesday.',
              listen: [{ phrases: [], next: 'bye' }],
            },
            bye: { say: 'Thank you, goodbye.', end: true },
          },
        },
        settings: { voicemail: { action: 'leave_message', message, wait_for_decision: true } },
        maxDurationS: 25,
      })
    ).id;
    await addPhoneNumber(service.store, account.id, '+15550009993');
  });

  afterAll(async () => {
    await service?.dispose();
  });

  async function call(to: string): Promise<CallRecord & { figures: AnsweringFigures }> {
    const created = await postCall(service.url, key, {
      agent_id: agentId,
      from_number: '+15550009993',
      to_number: to,
      variables: { customer_name: 'Ann' },
    });
    expect(created.status).toBe(200);
    const record = await waitForTerminal(service, (created.body as { call_id: string }).call_id, 40_000);
    const figures = (record.metrics as { answering_machine: AnsweringFigures }).answering_machine;
    return { ...record, figures };
  }

  const agentLines = (record: CallRecord) => record.transcript.filter((entry) => entry.role === 'agent');

  it('a voicemail with a beep: a machine before the beep; the message, rendered, starts after the beep', async () => {
    const record = await call('+15550100004');
    expect(record).toMatchObject({ status: 'completed', endReason: 'voicemail', answeredBy: 'machine' });
    expect(record.figures).toMatchObject({ answered_by: 'machine', reason: 'long_greeting' });
    // It waited for the decision: the greeting was never said, only the message.
    expect(agentLines(record).map((line) => line.text)).toEqual([
      'Hi Ann, this is the clinic. Please call us back about your appointment.',
    ]);
    const path = record.recordingPath as string;
    const beepEnd = beepEndMs(path);
    expect(beepEnd).toBeGreaterThan(record.figures.decision_ms);
    const agentAudio = audibleSpanMs(path, 1);
    expect(agentAudio.startMs).toBeGreaterThanOrEqual(beepEnd - 20);
    expect(agentAudio.startMs).toBeLessThanOrEqual(beepEnd + 600);
  }, 50_000);

  it('a voicemail without a beep: the message starts once the greeting has been quiet 1.5 s', async () => {
    const record = await call('+15550100014');
    expect(record).toMatchObject({ status: 'completed', endReason: 'voicemail', answeredBy: 'machine' });
    const path = record.recordingPath as string;
    expect(beepEndMs(path)).toBe(-1);
    const greeting = audibleSpanMs(path, 0);
    // Decided while the greeting still played, not from the quiet after it.
    expect(record.figures.decision_ms).toBeLessThan(greeting.endMs);
    const agentAudio = audibleSpanMs(path, 1);
    expect(agentAudio.startMs - greeting.endMs).toBeGreaterThanOrEqual(1_400);
    expect(agentAudio.startMs - greeting.endMs).toBeLessThanOrEqual(2_200);
    expect(agentLines(record)).toHaveLength(1);
  }, 50_000);

  it.each([
    ['+15550100015', 'a short "Hello?"'],
    ['+15550100016', 'a longer "Hello, Sam speaking."'],
  ])(
    '%s (%s): a person; the agent greets once that is decided',
    async (to) => {
      const record = await call(to);
      expect(record.answeredBy).toBe('human');
      expect(record.endReason).not.toBe('voicemail');
      // A person either way: the pause after the greeting decides it, or — when the recogniser is
      // quicker than the 700 ms pause — the words themselves (issue 35's reply correction).
      expect(record.figures).toMatchObject({ answered_by: 'human' });
      expect(['short_greeting', 'reply']).toContain(record.figures.reason);
      const greeting = agentLines(record)[0];
      expect(greeting?.text).toContain('Hello Ann');
      expect(greeting?.start_ms).toBeGreaterThanOrEqual(record.figures.decision_ms);
    },
    50_000,
  );

  it('a person who waits for the caller: greeted after a short silence, one answered_by everywhere (issue 35)', async () => {
    // The default person says nothing until the agent has spoken.
    const record = await call('+15550100001');
    const greeting = agentLines(record)[0];
    expect(greeting?.text).toContain('Hello Ann');
    // Not the detector's 3 s `silence` decision: a line silent 1.5 s gets the greeting.
    expect(greeting?.start_ms).toBeLessThan(2_400);
    // The person answered in words: the record, the metrics and call.answered all say so.
    expect(record.answeredBy).toBe('human');
    expect(record.figures).toMatchObject({ answered_by: 'human', reason: 'reply' });
    const events = await service.store.events.list(accountId, { limit: 50 });
    const answered = events
      .filter((event) => event.type === 'call.answered' && event.callId === record.id)
      .map((event) => (JSON.parse(event.body) as { data: { answered_by: string } }).data.answered_by);
    expect(answered).toEqual(['human']);
  }, 50_000);
});

describe('leave_voicemail, the llm agent deciding by itself', () => {
  let llm: Awaited<ReturnType<typeof startLlmTestService>>;

  beforeAll(async () => {
    llm = await startLlmTestService({
      // The model opens the call by judging it a recording.
      chatStreamFor: ({ messages }) =>
        messages.some((entry) => entry.role === 'user' || entry.role === 'tool')
          ? [{ delta: { content: '' }, finishReason: 'stop' }]
          : [
              fakeToolCallDelta(
                'leave_voicemail',
                '{"message":"Please call the front desk back."}',
                'call_vm',
              ),
            ],
    });
  });

  afterAll(async () => {
    await llm?.dispose();
  });

  it('stops, waits for the line to go quiet, leaves the message the model gave, and ends `voicemail`', async () => {
    const agent = await createAgent(llm.service.store, llm.accountId, {
      name: 'Front desk',
      prompt: 'You call customers back.',
      brain: 'llm',
      settings: { llm: { model: 'test-model' } },
      maxDurationS: 25,
    });
    await addPhoneNumber(llm.service.store, llm.accountId, '+15550009992');
    const created = await postCall(llm.service.url, llm.key, {
      agent_id: agent.id,
      from_number: '+15550009992',
      to_number: '+15550100007',
    });
    expect(created.status).toBe(200);
    const record = await waitForTerminal(llm.service, (created.body as { call_id: string }).call_id, 40_000);
    expect(record).toMatchObject({ status: 'completed', endReason: 'voicemail', answeredBy: 'machine' });
    const lines = record.transcript.filter((entry) => entry.role === 'agent');
    expect(lines.map((line) => line.text)).toEqual(['Please call the front desk back.']);
    // The tool was offered to the model as a built-in.
    const offered = llm.fake.requests.find((request) => request.path.endsWith('/chat/completions'));
    const tools = (offered?.json as { tools?: { function: { name: string } }[] } | undefined)?.tools ?? [];
    expect(tools.map((tool) => tool.function.name)).toContain('leave_voicemail');
    expect(lines[0]?.start_ms).toBeGreaterThanOrEqual(1_500);
  }, 50_000);
});
