import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import type { CallRecord } from '../../src/domain/records.js';
import { providerApology } from '../../src/voice/conversation.js';
import { type FakeCartesia, startFakeCartesia } from '../fakes/cartesiaServer.js';
import { type FakeDeepgramSpeak, startFakeDeepgramSpeak } from '../fakes/deepgramSpeakServer.js';
import { type FakeElevenLabs, startFakeElevenLabs } from '../fakes/elevenLabsStreamInputServer.js';
import type { StreamFault, StreamFaultKind } from '../fakes/streamFaults.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { addOwnCredentials, postCall } from '../helpers/http.js';
import { heardOnTheLine } from '../helpers/recordingSilences.js';

/**
 * Issue 33, "never a silent line": a text-to-speech vendor that stalls before its first audio or in
 * the middle of a sentence, inside the greeting or a later sentence, sends garbage, its error
 * message or a close — each of ElevenLabs, Cartesia and Deepgram Aura, through fakes of their wire
 * protocols — is a failure: the sentence is said again from its start by the next choice (flite),
 * the failure is in `metrics.provider_failures` with its kind, and on the call's recording the
 * callee never waits 2 s for the agent. Audio a vendor sends after a garbage frame is never played.
 * With no choice left, the apology and failed/provider_error.
 *
 * The gaps here are tightened (1.5 s to first audio, 1 s between chunks) so that the bound holds with
 * room on a loaded machine; the defaults (3 s, 1.5 s) are in docs/voice-providers.md.
 */

const voiceId = 'EXAVITQu4vr4xnSDxMaL';
const cartesiaVoice = '6ccbfb76-1fc6-48f7-b71d-91ac6298247b';
let elevenLabs: FakeElevenLabs;
let cartesia: FakeCartesia;
let aura: FakeDeepgramSpeak;
let service: Awaited<ReturnType<typeof startFullService>>;
let accountId: string;
let key: string;
const silentCallee = '+15550100007';

beforeAll(async () => {
  [elevenLabs, cartesia, aura] = await Promise.all([
    startFakeElevenLabs({ apiKey: 'xi-key-33', voiceIds: [voiceId], chunkIntervalMs: 40 }),
    startFakeCartesia({ apiKey: 'ca-key-33', voiceIds: [cartesiaVoice], chunkIntervalMs: 40 }),
    startFakeDeepgramSpeak({ apiKey: 'dg-key-33', chunkIntervalMs: 40 }),
  ]);
  service = await startFullService({
    CALLWRIGHT_SERVICE_VENDOR_KEYS: 'false',
    CALLWRIGHT_PROVIDER_ALLOW_PRIVATE: 'true',
    // 1.5 s to first audio: five calls start at once here, and a loaded machine's first socket of a
    // call can take a second (the stall before first audio is hidden behind the greeting anyway).
    CALLWRIGHT_TTS_FIRST_AUDIO_TIMEOUT_MS: '1500',
    CALLWRIGHT_TTS_CHUNK_GAP_TIMEOUT_MS: '1000',
  });
  const account = await service.store.accounts.create({ name: 'tts-liveness', maxLiveCalls: 10 });
  accountId = account.id;
  key = (await createApiKey(service.store, account.id, 'tts-liveness')).key;
  await addPhoneNumber(service.store, account.id, '+15550009999');
  await addOwnCredentials(service.url, key, [
    ['elevenlabs', 'xi-key-33', elevenLabs.baseUrl],
    ['cartesia', 'ca-key-33', cartesia.baseUrl],
    ['deepgram', 'dg-key-33', aura.baseUrl],
  ]);
}, 60_000);

afterAll(async () => {
  await service?.dispose();
  await Promise.all([elevenLabs?.close(), cartesia?.close(), aura?.close()]);
});

interface Vendor {
  name: string;
  /** The agent's tts choice. */
  tts: Record<string, unknown>;
  faults: () => StreamFault[];
  /** The fake's tone, to find its audio on the recording. */
  toneHz: number;
  /** How its protocol reports an error (Aura: in the close frame). */
  errorKind: string;
}

const vendors: Vendor[] = [
  {
    name: 'elevenlabs',
    tts: { provider: 'elevenlabs', voice: voiceId },
    faults: () => elevenLabs.script.faults,
    toneHz: 220,
    errorKind: 'error_frame',
  },
  {
    name: 'cartesia',
    tts: { provider: 'cartesia', voice: cartesiaVoice },
    faults: () => cartesia.script.faults,
    toneHz: 180,
    errorKind: 'error_frame',
  },
  {
    name: 'deepgram',
    tts: { provider: 'deepgram', voice: 'aura-2-thalia-en' },
    faults: () => aura.script.faults,
    toneHz: 200,
    errorKind: 'closed',
  },
];

let serial = 0;

/** A script agent that greets, says one more sentence and ends; `tag` makes its words its own. */
async function callWithFault(
  vendor: Vendor,
  fault: { kind: StreamFaultKind; afterChunks: number; in: 'greeting' | 'second sentence' },
  fallback = true,
): Promise<{ call: CallRecord; lines: string[] }> {
  const tag = `case${++serial}`;
  const lines = [
    `Hello, this is the ${tag} clinic calling about your visit.`,
    `We have moved your ${tag} appointment to Thursday.`,
    'Thank you, and goodbye!',
  ];
  vendor.faults().push({
    kind: fault.kind,
    afterChunks: fault.afterChunks,
    whenTextIncludes: fault.in === 'greeting' ? `${tag} clinic` : `${tag} appointment`,
    times: 1,
  });
  const agent = await createAgent(service.store, accountId, {
    name: `${vendor.name} ${fault.kind}`,
    prompt: 'p',
    script: {
      start: 'greet',
      nodes: {
        greet: { say: lines[0], next: 'more' },
        more: { say: lines[1], next: 'bye' },
        bye: { say: lines[2], end: true },
      },
    },
    settings: { tts: { ...vendor.tts, ...(fallback ? { fallback: [{ provider: 'flite' }] } : {}) } },
    maxDurationS: 40,
  });
  const result = await postCall(service.url, key, {
    agent_id: agent.id,
    from_number: '+15550009999',
    to_number: silentCallee,
  });
  expect(result.status).toBe(200);
  const call = await waitForTerminal(service, (result.body as { call_id: string }).call_id, 60_000);
  return { call, lines };
}

function failuresOf(call: CallRecord): Record<string, unknown>[] {
  return (call.metrics as { provider_failures: Record<string, unknown>[] }).provider_failures;
}

const cases: {
  what: string;
  fault: { kind: StreamFaultKind; afterChunks: number; in: 'greeting' | 'second sentence' };
  kind: (vendor: Vendor) => string;
}[] = [
  {
    what: 'stalls before its first audio',
    fault: { kind: 'stall', afterChunks: 0, in: 'second sentence' },
    kind: () => 'timeout',
  },
  {
    what: 'stalls after its first audio',
    fault: { kind: 'stall', afterChunks: 2, in: 'second sentence' },
    kind: () => 'stall',
  },
  {
    what: 'stalls inside the greeting',
    fault: { kind: 'stall', afterChunks: 2, in: 'greeting' },
    kind: () => 'stall',
  },
  {
    what: 'sends garbage after its first audio',
    fault: { kind: 'garbage', afterChunks: 1, in: 'second sentence' },
    kind: () => 'garbage',
  },
  {
    what: 'sends its error message after its first audio',
    fault: { kind: 'error', afterChunks: 1, in: 'second sentence' },
    kind: (vendor) => vendor.errorKind,
  },
  {
    what: 'closes after its first audio',
    fault: { kind: 'close', afterChunks: 1, in: 'second sentence' },
    kind: () => 'closed',
  },
];

describe.concurrent.each(vendors)('a text-to-speech vendor ($name) that fails mid-call', (vendor) => {
  it.each(cases)(
    '$what: the fallback says the sentence, the failure is recorded, no 2 s wait',
    async ({ fault, kind }) => {
      const { call, lines } = await callWithFault(vendor, fault);
      expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
      expect(call.transcript.filter((line) => line.role === 'agent').map((line) => line.text)).toEqual(lines);
      expect(failuresOf(call)).toEqual([
        expect.objectContaining({ stage: 'tts', provider: vendor.name, kind: kind(vendor) }),
      ]);
      const heard = heardOnTheLine(call.recordingPath as string);
      expect(heard.firstAgentSoundMs).not.toBeNull();
      expect(heard.firstAgentSoundMs as number).toBeLessThan(2000);
      expect(heard.longestAgentGapMs).toBeLessThan(2000);
    },
  );

  it('sends garbage, then audio as if nothing happened: nothing after the garbage is played', async () => {
    const { call, lines } = await callWithFault(vendor, {
      kind: 'garbage_then_audio',
      afterChunks: 1,
      in: 'greeting',
    });
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    expect(call.transcript.filter((line) => line.role === 'agent').map((line) => line.text)).toEqual(lines);
    expect(failuresOf(call)).toEqual([
      expect.objectContaining({ stage: 'tts', provider: vendor.name, kind: 'garbage' }),
    ]);
    const heard = heardOnTheLine(call.recordingPath as string);
    // One chunk (100 ms) of the vendor's voice came before the garbage; the 3 s after it are not played.
    expect(heard.agentToneMs(vendor.toneHz)).toBeGreaterThan(0);
    expect(heard.agentToneMs(vendor.toneHz)).toBeLessThan(600);
    expect(heard.longestAgentGapMs).toBeLessThan(2000);
  });
});

describe('a text-to-speech vendor with no fallback that stalls mid-sentence', () => {
  it('ends in the apology and failed/provider_error, with no 2 s wait before it', async () => {
    const vendor = vendors[0] as Vendor;
    const { call } = await callWithFault(
      vendor,
      { kind: 'stall', afterChunks: 2, in: 'second sentence' },
      false,
    );
    expect(call).toMatchObject({ status: 'failed', endReason: 'provider_error' });
    expect(call.transcript.at(-1)).toMatchObject({ role: 'agent', text: providerApology });
    expect(failuresOf(call)).toEqual([
      expect.objectContaining({ stage: 'tts', provider: 'elevenlabs', kind: 'stall' }),
    ]);
    expect(heardOnTheLine(call.recordingPath as string).longestAgentGapMs).toBeLessThan(2000);
  });
});
