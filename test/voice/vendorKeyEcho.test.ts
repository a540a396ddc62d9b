import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addCredential } from '../../src/admin/credentials.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import {
  type FakeOpenAiServer,
  startFakeOpenAiServer,
} from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { type FakeElevenLabs, startFakeElevenLabs } from '../fakes/elevenLabsStreamInputServer.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall, request } from '../helpers/http.js';

/**
 * Issue 33 item 2 (the key) and item 6 (vendor error bodies): vendors that echo the key in their
 * errors, and an internal server whose error body tells of its internals. The keys are ordinary
 * words (nothing a pattern would catch), so only the adapters' own knowledge of them can scrub them.
 * Neither key, nor the internal text, may reach the call record, the API (the call and the calls
 * list) or the service log; what is kept is the vendor, the stage, the status and a short code.
 */

const llmKey = 'plainkey77openai';
const ttsKey = 'plainkey88eleven';
const voiceId = '21m00Tcm4TlvDq8ikWAM';
const internalDetail = 'Traceback: /srv/internal/router.py line 12, upstream 10.0.0.5:5432 refused';

let chat: FakeOpenAiServer;
let elevenLabs: FakeElevenLabs;
let service: Awaited<ReturnType<typeof startFullService>>;

beforeAll(async () => {
  chat = await startFakeOpenAiServer({ apiKey: llmKey });
  elevenLabs = await startFakeElevenLabs({
    apiKey: ttsKey,
    voiceIds: [voiceId],
    errorFrame: { error: 'quota_exceeded', message: `Quota exceeded for key ${ttsKey}. ${internalDetail}` },
  });
  service = await startFullService({
    CALLWRIGHT_SERVICE_VENDOR_KEYS: 'false',
    CALLWRIGHT_PROVIDER_ALLOW_PRIVATE: 'true',
  });
});

afterAll(async () => {
  await service?.dispose();
  await Promise.all([chat?.close(), elevenLabs?.close()]);
});

describe('a vendor that echoes the key in its error', () => {
  it('never puts the key or the error body into the record, the API or the log', async () => {
    const account = await service.store.accounts.create({ name: 'echo' });
    for (const [provider, apiKey, baseUrl] of [
      ['openai', llmKey, chat.baseUrl],
      ['elevenlabs', ttsKey, elevenLabs.baseUrl],
    ] as const)
      await addCredential(
        service.store,
        service.secretBox,
        account.id,
        { name: provider, provider, apiKey, baseUrl },
        { allowPrivate: true },
      );
    const { key } = await createApiKey(service.store, account.id, 'k');
    await addPhoneNumber(service.store, account.id, '+15550009999');
    const agent = await createAgent(service.store, account.id, {
      name: 'Echo',
      prompt: 'Be brief.',
      brain: 'llm',
      firstMessage: 'Hello, this is the clinic.',
      settings: {
        llm: { provider: 'openai' },
        tts: { provider: 'elevenlabs', voice: voiceId, fallback: [{ provider: 'flite' }] },
      },
      maxDurationS: 60,
    });
    // The model's first answer is refused with the key (and the server's internals) in the body;
    // the key is also the `code` — a lying vendor — so only `type` may be kept.
    chat.script.nextFailure = {
      status: 401,
      body: JSON.stringify({
        error: {
          message: `Incorrect API key provided: ${llmKey}. ${internalDetail}`,
          type: 'invalid_request_error',
          code: llmKey,
        },
      }),
    };
    const placed = await postCall(service.url, key, {
      agent_id: agent.id,
      from_number: '+15550009999',
      to_number: '+15550100001',
    });
    expect(placed.status).toBe(200);
    const callId = (placed.body as { call_id: string }).call_id;
    const call = await waitForTerminal(service, callId, 90_000);

    const api = (path: string) => request(`${service.url}/v1${path}`, { headers: { 'X-API-Key': key } });
    const one = await api(`/calls/${callId}`);
    const list = await api('/calls');
    expect(one.status).toBe(200);
    expect(list.status).toBe(200);
    const failures = (one.body as { metrics: { provider_failures: Record<string, unknown>[] } }).metrics
      .provider_failures;
    expect(failures).toContainEqual(
      expect.objectContaining({ stage: 'tts', provider: 'elevenlabs', reason: 'elevenlabs: quota_exceeded' }),
    );
    expect(failures).toContainEqual(
      expect.objectContaining({
        stage: 'llm',
        status: 401,
        reason: expect.stringMatching(/HTTP 401 invalid_request_error/),
      }),
    );
    const kept = [
      JSON.stringify(call),
      JSON.stringify(one.body),
      JSON.stringify(list.body),
      service.logs.text(),
    ];
    for (const text of kept) {
      expect(text).not.toContain(llmKey);
      expect(text).not.toContain(ttsKey);
      expect(text).not.toContain('Traceback');
      expect(text).not.toContain('10.0.0.5');
    }
    // With its model refused, the call apologised and ended on its own.
    expect(call).toMatchObject({ status: 'failed', endReason: 'provider_error' });
    // The log did record the failures (so the assertions above had something to look at).
    expect(service.logs.text()).toMatch(/quota_exceeded|invalid_request_error/);
  });
});
