import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { type FakeDeepgram, startFakeDeepgram } from '../fakes/deepgramLiveServer.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall, request } from '../helpers/http.js';

/**
 * Bring your own key (issue 14): an account stores its own vendor key through /v1/credentials —
 * write-only, sealed at rest, shown by its last 4 characters — and its calls use it; an account
 * without one, on a service whose own vendor keys are switched off, gets failed/provider_error.
 */

let deepgram: FakeDeepgram;
let service: Awaited<ReturnType<typeof startFullService>>;
const ownKey = 'dg-account-own-key-9f3c';
const accounts: { id: string; key: string }[] = [];

const speaksThenListens = {
  start: 'greet',
  nodes: {
    greet: { say: 'Hello, can you hear me?', next: 'answer' },
    answer: { listen: [{ phrases: ['yes i can hear you'], next: 'bye' }], otherwise: 'bye' },
    bye: { say: 'Thank you. Goodbye!', end: true },
  },
};

beforeAll(async () => {
  deepgram = await startFakeDeepgram({ apiKey: ownKey, transcripts: ['Yes, I can hear you.'] });
  service = await startFullService({
    CALLWRIGHT_SERVICE_VENDOR_KEYS: 'false',
    CALLWRIGHT_DEEPGRAM_API_KEY: 'a-service-key-that-is-switched-off',
    CALLWRIGHT_DEEPGRAM_BASE_URL: deepgram.baseUrl,
    CALLWRIGHT_PROVIDER_ALLOW_PRIVATE: 'true',
  });
  for (const name of ['own keys', 'no keys']) {
    const account = await service.store.accounts.create({ name });
    accounts.push({ id: account.id, key: (await createApiKey(service.store, account.id, name)).key });
    await addPhoneNumber(service.store, account.id, '+15550009999');
  }
});

afterAll(async () => {
  await service?.dispose();
  await deepgram?.close();
});

const call = (method: string, path: string, key: string, body?: unknown) =>
  request(`${service.url}/v1${path}`, {
    method,
    headers: { 'X-API-Key': key, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe('/v1/credentials', () => {
  it('stores a key write-only and sealed, lists it by its last 4, refuses bad input, keeps accounts apart', async () => {
    const [own, other] = accounts as [{ id: string; key: string }, { id: string; key: string }];
    const created = await call('POST', '/credentials', own.key, {
      name: 'deepgram-main',
      provider: 'deepgram',
      api_key: ownKey,
      base_url: deepgram.baseUrl,
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      name: 'deepgram-main',
      provider: 'deepgram',
      api_key_last4: '9f3c',
    });
    expect(created.text).not.toContain(ownKey);
    const stored = await service.store.credentials.list(own.id);
    expect(stored[0]?.apiKeyCiphertext).not.toContain(ownKey);
    expect(stored[0]?.apiKeyCiphertext).toMatch(/^v1\./);

    const listed = await call('GET', '/credentials', own.key);
    expect(listed.text).not.toContain(ownKey);
    expect((listed.body as { data: unknown[] }).data).toHaveLength(1);
    expect(((await call('GET', '/credentials', other.key)).body as { data: unknown[] }).data).toEqual([]);

    for (const [body, code, message] of [
      [{ name: 'x', provider: 'polly', api_key: '12345678' }, 'validation_error', /provider must be one of/],
      [{ name: 'x', provider: 'deepgram', api_key: 'short' }, 'validation_error', /api_key must be 8 to 500/],
      [
        { name: 'x', provider: 'deepgram', api_key: '12345678', extra: 1 },
        'validation_error',
        /unknown field: extra/,
      ],
      [{ name: 'deepgram-main', provider: 'deepgram', api_key: '12345678' }, 'conflict', /already exists/],
    ] as const) {
      const refused = await call('POST', '/credentials', own.key, body);
      expect((refused.body as { error: { code: string; message: string } }).error).toMatchObject({ code });
      expect((refused.body as { error: { message: string } }).error.message).toMatch(message);
    }
    const id = (created.body as { credential_id: string }).credential_id;
    expect((await call('DELETE', `/credentials/${id}`, other.key)).status).toBe(404);
  });

  it("an account's own key is what its calls use; without one (service keys off) the call is not dialled", async () => {
    const [own, other] = accounts as [{ id: string; key: string }, { id: string; key: string }];
    const place = async (accountId: string, key: string) => {
      const agent = await createAgent(service.store, accountId, {
        name: 'Hears through Deepgram',
        prompt: 'p',
        script: speaksThenListens,
        settings: { stt: { provider: 'deepgram' } },
        maxDurationS: 30,
      });
      const placed = await postCall(service.url, key, {
        agent_id: agent.id,
        from_number: '+15550009999',
        to_number: '+15550100001',
      });
      expect(placed.status).toBe(200);
      return waitForTerminal(service, (placed.body as { call_id: string }).call_id, 40_000);
    };
    const withOwnKey = await place(own.id, own.key);
    expect(withOwnKey).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    expect(withOwnKey.transcript.map((line) => line.text)).toContain('Yes, I can hear you.');
    expect(deepgram.refusedUpgrades).toBe(0);

    const withoutKey = await place(other.id, other.key);
    expect(withoutKey).toMatchObject({ status: 'failed', endReason: 'provider_error', sipCallId: null });
  });

  it('tests a key with one cheap request to the vendor: its acceptance, or its own error without the key', async () => {
    const [own, other] = accounts as [{ id: string; key: string }, { id: string; key: string }];
    const [good] = await service.store.credentials.list(own.id);
    const accepted = await call('POST', `/credentials/${good?.id}/test`, own.key);
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({
      credential_id: good?.id,
      provider: 'deepgram',
      ok: true,
      status: 200,
      latency_ms: expect.any(Number),
    });

    const wrongKey = 'dg-wrong-key-5555';
    const bad = await call('POST', '/credentials', own.key, {
      name: 'deepgram-wrong',
      provider: 'deepgram',
      api_key: wrongKey,
      base_url: deepgram.baseUrl,
    });
    const refused = await call('POST', `/credentials/deepgram-wrong/test`, own.key);
    expect(refused.body).toMatchObject({ ok: false, status: 401 });
    expect((refused.body as { message: string }).message).toMatch(/HTTP 401: Invalid credentials/);
    expect(refused.text).not.toContain(wrongKey);
    // Another account's credential is not found; nor is the test of one that does not exist.
    expect((await call('POST', `/credentials/${good?.id}/test`, other.key)).status).toBe(404);
    expect(
      (await call('DELETE', `/credentials/${(bad.body as { credential_id: string }).credential_id}`, own.key))
        .status,
    ).toBe(200);
  });

  it('a deleted key is gone', async () => {
    const [own] = accounts as [{ id: string; key: string }];
    const [credential] = await service.store.credentials.list(own.id);
    const deleted = await call('DELETE', `/credentials/${credential?.id}`, own.key);
    expect(deleted.body).toEqual({ credential_id: credential?.id, deleted: true });
    expect(await service.store.credentials.list(own.id)).toEqual([]);
  });
});
