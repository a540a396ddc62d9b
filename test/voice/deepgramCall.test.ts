import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { type FakeCartesia, startFakeCartesia } from '../fakes/cartesiaServer.js';
import { type FakeDeepgram, startFakeDeepgram } from '../fakes/deepgramLiveServer.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { addOwnCredentials, postCall } from '../helpers/http.js';

/**
 * A whole sandbox call whose agent hears through Deepgram (issue 14): the callee's RTP audio
 * streams to a fake of Deepgram's live protocol as it is spoken, the transcript it answers drives
 * the example appointment script, and the call completes with its extracted data. A second agent
 * whose Deepgram key is refused falls back to the offline recogniser and still completes. The keys
 * are the account's own, added through POST /v1/credentials.
 */

let fake: FakeDeepgram;
let cartesia: FakeCartesia;
const cartesiaVoice = '6ccbfb76-1fc6-48f7-b71d-91ac6298247b';
let service: Awaited<ReturnType<typeof startFullService>>;
let key: string;
let accountId: string;
const script = JSON.parse(
  readFileSync(new URL('../../examples/agents/appointment-confirmation.json', import.meta.url), 'utf8'),
);

beforeAll(async () => {
  fake = await startFakeDeepgram({ apiKey: 'dg-service-key-0001', transcripts: ['Yes, that works.'] });
  cartesia = await startFakeCartesia({ apiKey: 'sk_car_service_0001', voiceIds: [cartesiaVoice] });
  // The account's own keys, added through the API; the service has none of its own.
  service = await startFullService({
    CALLWRIGHT_SERVICE_VENDOR_KEYS: 'false',
    CALLWRIGHT_PROVIDER_ALLOW_PRIVATE: 'true',
  });
  const account = await service.store.accounts.create({ name: 'deepgram' });
  accountId = account.id;
  key = (await createApiKey(service.store, account.id, 'deepgram')).key;
  await addOwnCredentials(service.url, key, [
    ['deepgram', 'dg-service-key-0001', fake.baseUrl],
    ['cartesia', 'sk_car_service_0001', cartesia.baseUrl],
  ]);
  await addPhoneNumber(service.store, account.id, '+15550009999');
});

afterAll(async () => {
  await service?.dispose();
  await fake?.close();
  await cartesia?.close();
});

async function converse(settings: Record<string, unknown>) {
  const agent = await createAgent(service.store, accountId, {
    name: 'Appointments over Deepgram',
    prompt: 'Confirm the appointment.',
    variables: ['customer_name', 'appointment_day=Tuesday', 'reschedule_to='].map(parseVariableDeclaration),
    script,
    settings,
    maxDurationS: 60,
  });
  const result = await postCall(service.url, key, {
    agent_id: agent.id,
    from_number: '+15550009999',
    to_number: '+15550100001',
    variables: { customer_name: 'Ann' },
  });
  expect(result.status).toBe(200);
  return waitForTerminal(service, (result.body as { call_id: string }).call_id, 60_000);
}

describe('a sandbox call heard through Deepgram', () => {
  it('streams the callee to Deepgram and acts on what it hears', async () => {
    const connectionsBefore = fake.connections.length;
    const call = await converse({ stt: { provider: 'deepgram', language: 'en-US' } });
    expect(call).toMatchObject({
      status: 'completed',
      endReason: 'agent_hangup',
      extractedData: { confirmed: true },
    });
    expect(call.transcript.map((line) => [line.role, line.text])).toEqual([
      [
        'agent',
        'Hello Ann, this is Bright Smile Dental calling to confirm your appointment on Tuesday. Can you make it?',
      ],
      ['callee', 'Yes, that works.'],
      ['agent', 'Great, you are confirmed for Tuesday. Goodbye!'],
    ]);
    const used = fake.connections.slice(connectionsBefore);
    expect(used.length).toBeGreaterThanOrEqual(1);
    const heard = used.find((connection) =>
      connection.controls.some((control) => control.type === 'Finalize'),
    );
    expect(heard?.query.get('encoding')).toBe('mulaw');
    expect(heard?.query.get('language')).toBe('en-US');
    expect(heard?.audioFrames).toBeGreaterThan(25);
    // Deepgram's speech_final (its 300 ms endpointing) ended the turn before the 600 ms window.
    expect((call.metrics as { turns_ended_by_recognizer: number }).turns_ended_by_recognizer).toBe(1);
    expect((call.metrics as { provider_failures: unknown[] }).provider_failures).toEqual([]);
  });

  it('a stream that drops mid-utterance is opened again once, and hears the whole utterance', async () => {
    const before = fake.connections.length;
    fake.script.dropStreams = { streams: 1, frames: 20 };
    try {
      const call = await converse({ stt: { provider: 'deepgram' } });
      expect(call).toMatchObject({
        status: 'completed',
        endReason: 'agent_hangup',
        extractedData: { confirmed: true },
      });
      expect(call.transcript.map((line) => line.role)).toEqual(['agent', 'callee', 'agent']);
      expect(call.transcript[1]?.text).toBe('Yes, that works.');
      // The drop is on record; no apology, no fallback.
      const failures = (
        call.metrics as { provider_failures: { stage: string; provider: string; reason: string }[] }
      ).provider_failures;
      expect(failures).toEqual([expect.objectContaining({ stage: 'stt', provider: 'deepgram' })]);
      expect(failures[0]?.reason).toMatch(/1011/);
      const used = fake.connections.slice(before);
      expect(used.some((connection) => connection.closeCode === 1011)).toBe(true);
      // The new stream was given the utterance from its start, not just what came after the drop.
      const reopened = used.find((connection) =>
        connection.controls.some((control) => control.type === 'Finalize'),
      );
      expect(reopened?.audioFrames).toBeGreaterThan(20);
    } finally {
      fake.script.dropStreams = null;
    }
  });

  it('falls back to the offline recogniser when Deepgram refuses, and says so in the metrics', async () => {
    fake.script.apiKey = 'a-key-the-service-does-not-have';
    try {
      const call = await converse({
        stt: { provider: 'deepgram', fallback: [{ provider: 'pocketsphinx' }] },
      });
      expect(call).toMatchObject({ status: 'completed', extractedData: { confirmed: true } });
      expect(
        (call.metrics as { provider_failures: { stage: string; provider: string; status: number }[] })
          .provider_failures[0],
      ).toMatchObject({
        stage: 'stt',
        provider: 'deepgram',
        status: 401,
      });
    } finally {
      fake.script.apiKey = 'dg-service-key-0001';
    }
  });

  it('Deepgram + Cartesia: heard through one vendor, spoken through the other', async () => {
    fake.script.transcripts = ['Yes, that works.'];
    const requestsBefore = cartesia.connections.length;
    const call = await converse({
      stt: { provider: 'deepgram', language: 'en-US' },
      tts: { provider: 'cartesia', voice: cartesiaVoice, language: 'en' },
    });
    expect(call).toMatchObject({
      status: 'completed',
      endReason: 'agent_hangup',
      extractedData: { confirmed: true },
    });
    expect(call.transcript.map((line) => line.role)).toEqual(['agent', 'callee', 'agent']);
    const spoken = cartesia.connections.slice(requestsBefore).flatMap((connection) => connection.requests);
    expect(spoken.map((request) => request.transcript)).toEqual([
      'Hello Ann, this is Bright Smile Dental calling to confirm your appointment on Tuesday. Can you make it?',
      'Great, you are confirmed for Tuesday. Goodbye!',
    ]);
    expect((call.metrics as { provider_failures: unknown[] }).provider_failures).toEqual([]);
  });
});
