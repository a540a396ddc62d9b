import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { listenOnlyScript } from '../helpers/agentScripts.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';

/**
 * The example script agent holding real spoken conversations with the sandbox person, end to
 * end through the public API: flite speech both ways over RTP, pocketsphinx with the script's
 * phrases, the script's branches, extracted data, transcript and the stereo recording.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
let key: string;
let agentId: string;
let accountId: string;

const script = JSON.parse(
  readFileSync(resolve(import.meta.dirname, '../../examples/agents/appointment-confirmation.json'), 'utf8'),
);

beforeAll(async () => {
  service = await startFullService();
  const account = await service.store.accounts.create({ name: 'voice' });
  accountId = account.id;
  key = (await createApiKey(service.store, account.id, 'voice')).key;
  agentId = (
    await createAgent(service.store, account.id, {
      name: 'Appointment confirmation',
      prompt: 'Confirm the appointment.',
      variables: [
        'customer_name',
        'appointment_day=Tuesday',
        'reschedule_to=',
        'sandbox_reply=',
        'sandbox_wording=',
      ].map(parseVariableDeclaration),
      script,
      maxDurationS: 60,
    })
  ).id;
  await addPhoneNumber(service.store, account.id, '+15550009999');
});

afterAll(async () => {
  await service.dispose();
});

async function converse(variables: Record<string, string>) {
  const result = await postCall(service.url, key, {
    agent_id: agentId,
    from_number: '+15550009999',
    to_number: '+15550100001',
    variables,
  });
  expect(result.status).toBe(200);
  return waitForTerminal(service, (result.body as { call_id: string }).call_id, 60_000);
}

function wavInfo(path: string) {
  const wav = readFileSync(path);
  return {
    riff: wav.toString('ascii', 0, 4),
    channels: wav.readUInt16LE(22),
    sampleRateHz: wav.readUInt32LE(24),
    bitsPerSample: wav.readUInt16LE(34),
    durationMs: (wav.readUInt32LE(40) / 4 / 8000) * 1000,
  };
}

describe('the example appointment agent on the sandbox', () => {
  it('confirms: the person agrees, the agent says goodbye and hangs up', async () => {
    const call = await converse({ customer_name: 'Ann' });
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup', answeredBy: 'human' });
    // On failure, say what was heard and why it matched nothing (a recogniser miss or a split turn).
    const heard = JSON.stringify({
      transcript: call.transcript,
      understanding: (call.metrics as { understanding?: unknown }).understanding,
    });
    expect(call.extractedData, heard).toEqual({ confirmed: true });
    const roles = call.transcript.map((entry) => entry.role);
    expect(roles).toEqual(['agent', 'callee', 'agent']);
    expect(call.transcript[0]?.text).toContain('Hello Ann');
    expect(call.transcript[0]?.text).toContain('Tuesday');
    expect(call.transcript[1]?.text).toMatch(/yes|yeah/);
    expect(call.transcript[2]?.text).toContain('confirmed for Tuesday');
    for (const [index, entry] of call.transcript.entries()) {
      expect(entry.end_ms).toBeGreaterThan(entry.start_ms);
      if (index > 0) expect(entry.start_ms).toBeGreaterThanOrEqual(call.transcript[index - 1]!.end_ms);
    }
    const wav = wavInfo(call.recordingPath as string);
    expect(wav).toMatchObject({ riff: 'RIFF', channels: 2, sampleRateHz: 8000, bitsPerSample: 16 });
    const callMs = Date.parse(call.endedAt as string) - Date.parse(call.inProgressAt as string);
    expect(Math.abs(wav.durationMs - callMs)).toBeLessThan(1500);
    const latency = (call.metrics as { response_latency_ms: { p50: number | null } }).response_latency_ms;
    expect(latency.p50).not.toBeNull();
  }, 70_000);

  it('understands an answer wrapped in other words: "Yes, that works for me." confirms at once', async () => {
    const call = await converse({ customer_name: 'Cy', sandbox_reply: 'Yes, that works for me.' });
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup', answeredBy: 'human' });
    expect(call.extractedData).toEqual({ confirmed: true });
    // No re-ask: greeting, the answer, the goodbye.
    expect(call.transcript.map((entry) => entry.role)).toEqual(['agent', 'callee', 'agent']);
    // Heard whole, the words around the phrase too (the recogniser may take "yes" for "yep").
    expect(call.transcript[1]?.text).toMatch(/^(yes|yep|yeah) that works for me$/);
    expect(call.transcript[2]?.text).toContain('confirmed for Tuesday');
    // The call's metrics say what was heard, which rule matched and why.
    const understanding = (call.metrics as { understanding: Record<string, unknown>[] }).understanding;
    expect(understanding).toHaveLength(1);
    expect(understanding[0]).toMatchObject({
      node: 'greet',
      heard: call.transcript[1]?.text,
      option: 0,
      phrase: 'yes that works',
    });
    expect(understanding[0]?.reason).toMatch(/yes that works/);
  }, 70_000);

  it('reschedules to a weekday the person asks for', async () => {
    const call = await converse({
      customer_name: 'Bob',
      appointment_day: 'Monday',
      reschedule_to: 'Wednesday',
    });
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    expect(call.extractedData).toEqual({ confirmed: false, new_day: 'Wednesday' });
    expect(call.transcript.map((entry) => entry.role)).toEqual([
      'agent',
      'callee',
      'agent',
      'callee',
      'agent',
    ]);
    expect(call.transcript.at(-1)?.text).toContain('Wednesday');
  }, 70_000);

  it('speaks a per-call first_message instead of the greeting, and leaves the stored agent unchanged', async () => {
    const before = await service.store.agents.get(
      (await service.store.agents.list(accountId))[0]!.accountId,
      agentId,
    );
    const result = await postCall(service.url, key, {
      agent_id: agentId,
      from_number: '+15550009999',
      to_number: '+15550100001',
      first_message: 'Hi {{customer_name}}, quick question: is {{appointment_day}} still fine?',
      context: 'The customer asked us to keep calls short.',
      variables: { customer_name: 'Cy' },
    });
    const call = await waitForTerminal(service, (result.body as { call_id: string }).call_id, 60_000);
    expect(call.transcript[0]?.text).toBe('Hi Cy, quick question: is Tuesday still fine?');
    expect(call.extractedData).toEqual({ confirmed: true });
    expect(await service.store.agents.get(before!.accountId, agentId)).toEqual(before);
  }, 70_000);
});

describe('voicemail', () => {
  it('leaves the configured message after the beep and hangs up (answered_by machine)', async () => {
    const account = await service.store.accounts.create({ name: 'voicemail' });
    const voicemailKey = (await createApiKey(service.store, account.id, 'vm')).key;
    const agent = await createAgent(service.store, account.id, {
      name: 'Leaves messages',
      prompt: 'p',
      script: listenOnlyScript,
      variables: ['customer_name'].map(parseVariableDeclaration),
      settings: {
        voicemail: { action: 'leave_message', message: 'Hi {{customer_name}}, please call the clinic back.' },
      },
      maxDurationS: 40,
    });
    await addPhoneNumber(service.store, account.id, '+15550009999');
    const result = await postCall(service.url, voicemailKey, {
      agent_id: agent.id,
      from_number: '+15550009999',
      to_number: '+15550100004',
      variables: { customer_name: 'Di' },
    });
    const call = await waitForTerminal(service, (result.body as { call_id: string }).call_id, 45_000);
    expect(call).toMatchObject({ status: 'completed', endReason: 'voicemail', answeredBy: 'machine' });
    expect(call.transcript.filter((entry) => entry.role === 'agent').map((entry) => entry.text)).toContain(
      'Hi Di, please call the clinic back.',
    );
  }, 50_000);
});

describe('talkers who do not wait their turn (sandbox personas)', () => {
  async function callPersona(number: string, variables: Record<string, string> = {}) {
    const result = await postCall(service.url, key, {
      agent_id: agentId,
      from_number: '+15550009999',
      to_number: number,
      variables: { customer_name: 'Ann', ...variables },
    });
    expect(result.status).toBe(200);
    return waitForTerminal(service, (result.body as { call_id: string }).call_id, 60_000);
  }
  type Figures = {
    barge_ins: number;
    backchannels_ignored: number;
    turns: { voice_to_voice_ms: number | null }[];
  };

  it('a callee who says "uh huh" during the greeting does not cut it, and then confirms', async () => {
    const call = await callPersona('+15550100009');
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    expect(call.extractedData).toMatchObject({ confirmed: true });
    const metrics = call.metrics as Figures;
    expect(metrics.barge_ins).toBe(0);
    expect(metrics.backchannels_ignored).toBeGreaterThanOrEqual(1);
    expect(call.transcript[0]?.text).toMatch(/Can you make it\?$/);
  }, 90_000);

  it('a callee who answers over the greeting cuts it, is heard, and the agent goes on from there', async () => {
    const call = await callPersona('+15550100010');
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    expect(call.extractedData).toMatchObject({ confirmed: true });
    const metrics = call.metrics as Figures;
    expect(metrics.barge_ins).toBe(1);
    const [greeting, answer] = call.transcript;
    expect(greeting?.role).toBe('agent');
    expect(greeting?.text).not.toMatch(/Can you make it\?$/);
    // The person words its yes as people do (personaWording.ts): every variant says "that works".
    expect(answer?.role).toBe('callee');
    expect(answer?.text).toMatch(/that works/);
  }, 90_000);

  it('a callee who hangs up mid-sentence: their words are kept, the call ends callee_hangup', async () => {
    // The listed phrase, cut in half: half of a longer wording can leave the recogniser nothing.
    const call = await callPersona('+15550100011', { sandbox_wording: 'exact' });
    expect(call).toMatchObject({ status: 'completed', endReason: 'callee_hangup' });
    const callee = call.transcript.filter((line) => line.role === 'callee');
    expect(callee).toHaveLength(1);
    expect(callee[0]?.text).not.toBe('');
  }, 90_000);
});
