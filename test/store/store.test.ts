import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { completedEventBuilder } from '../../src/calls/completedEvents.js';
import { newId } from '../../src/domain/ids.js';
import type {
  AccountRecord,
  AgentRecord,
  ApiKeyRecord,
  CallFinish,
  NewQueuedCall,
} from '../../src/domain/records.js';
import { queueNames } from '../../src/queue/types.js';
import {
  type AnyStore,
  countJobs,
  createCallOwner,
  newApiKey,
  newQueuedCall,
  openTestStore,
  storeKinds,
  type TestStoreHandle,
} from '../helpers/stores.js';

/** The Store port's semantics, the same on SQLite and on PostgreSQL (a real server). */

const buildEvent = completedEventBuilder(() => null);
const isoPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe.each(storeKinds)('Store on %s', (kind) => {
  let handle: TestStoreHandle;
  let store: AnyStore;
  let account: AccountRecord;
  let key: ApiKeyRecord;
  let agent: AgentRecord;

  beforeEach(async () => {
    handle = await openTestStore(kind);
    store = handle.store;
    ({ account, key, agent } = await createCallOwner(store, {
      agent: {
        variables: [{ name: 'slot', default: null, description: '', required: false, type: 'any' }],
        extraction: [{ name: 'ok', type: 'boolean', description: 'confirmed' }],
        script: { start: { say: 'x' } },
        settings: { voice: 'a' },
      },
    }));
  });

  afterEach(async () => {
    await handle.dispose();
  });

  function newCall(overrides: Partial<NewQueuedCall> = {}): NewQueuedCall {
    return newQueuedCall(
      { accountId: account.id, agentId: agent.id, apiKeyId: key.id },
      { context: 'ctx', variables: { slot: 'noon', n: 2 }, ...overrides },
    );
  }

  const lease = (workerId: string) => ({
    workerId,
    untilIso: new Date(Date.now() + 30_000).toISOString(),
    atIso: new Date().toISOString(),
  });

  const completed: CallFinish = {
    status: 'completed',
    endReason: 'agent_hangup',
    atIso: new Date().toISOString(),
  };

  it('creates a queued call and its dispatch job in one transaction; a claim leases the job once', async () => {
    const call = await store.calls.createQueued(newCall());
    expect(call).toMatchObject({ status: 'queued', variables: { slot: 'noon', n: 2 }, context: 'ctx' });
    expect(await store.calls.getById(call?.id ?? '')).toEqual(call);
    expect(await countJobs(store, queueNames.dispatch, { call_id: call?.id })).toBe(1);
    const other = await handle.openAnother();
    const [first, second] = await Promise.all([
      store.queue.claim(queueNames.dispatch, 'worker-a', 10, 60_000),
      other.queue.claim(queueNames.dispatch, 'worker-b', 10, 60_000),
    ]);
    const claimed = [...(first ?? []), ...(second ?? [])];
    expect(claimed.map((job) => job.payload)).toEqual([{ call_id: call?.id }]);
    expect((await store.queue.depth(queueNames.dispatch)).count).toBe(1);
    await store.queue.complete(claimed[0]?.id ?? '');
    expect(await store.queue.depth(queueNames.dispatch)).toEqual({ count: 0, oldestRunAtMs: null });
  });

  it('re-checks the key inside the insert: a revoked key writes neither call nor job', async () => {
    await store.apiKeys.revoke(account.id, key.id, new Date().toISOString());
    const refused = await store.calls.createQueued(newCall());
    expect(refused).toBeNull();
    expect(await store.calls.list(account.id, { limit: 10 })).toEqual([]);
    expect(await store.queue.depth(queueNames.dispatch)).toEqual({ count: 0, oldestRunAtMs: null });
  });

  it('creations made together commit together, yet each stands alone: a revoked key or a bad row fails only itself', async () => {
    const revokedKey = await store.apiKeys.create(newApiKey(account.id, { name: 'old' }));
    await store.apiKeys.revoke(account.id, revokedKey.id, new Date().toISOString());
    const good = [newCall(), newCall(), newCall()];
    const results = await Promise.allSettled([
      store.calls.createQueued(good[0] as NewQueuedCall),
      store.calls.createQueued(newCall({ apiKeyId: revokedKey.id })),
      store.calls.createQueued(good[1] as NewQueuedCall),
      // A duplicate id cannot be inserted: it fails alone.
      store.calls.createQueued(newCall({ id: (good[0] as NewQueuedCall).id })),
      store.calls.createQueued(good[2] as NewQueuedCall),
    ]);
    expect(results.map((result) => result.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    const values = results.map((result) => (result.status === 'fulfilled' ? result.value : undefined));
    expect(values[1]).toBeNull();
    for (const index of [0, 2, 4]) expect(values[index]).toMatchObject({ status: 'queued' });
    const stored = await store.calls.list(account.id, { limit: 10 });
    expect(stored.map((call) => call.id).sort()).toEqual(good.map((call) => call.id).sort());
    expect((await store.queue.depth(queueNames.dispatch)).count).toBe(3);
  });

  it('retryAt puts a claimed job back for later, then it can be claimed again', async () => {
    const call = await store.calls.createQueued(newCall());
    const [job] = await store.queue.claim(queueNames.dispatch, 'w', 1, 60_000);
    await store.queue.retryAt(job?.id ?? '', Date.now() + 400);
    expect(await store.queue.claim(queueNames.dispatch, 'w', 1, 60_000)).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const again = await store.queue.claim(queueNames.dispatch, 'w', 1, 60_000);
    expect(again.map((j) => j.payload)).toEqual([{ call_id: call?.id }]);
  });

  it('claimForDialing lets exactly one of many concurrent claims through, across two processes', async () => {
    const call = await store.calls.createQueued(newCall());
    const other = await handle.openAnother();
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 ? other : store).calls.claimForDialing(call?.id ?? '', lease(`w${i}`)),
      ),
    );
    expect(results.filter((result) => 'claimed' in result)).toHaveLength(1);
    expect(results.filter((result) => 'refused' in result && result.refused === 'not_queued')).toHaveLength(
      11,
    );
    const dialing = await store.calls.getById(call?.id ?? '');
    expect(dialing).toMatchObject({ status: 'dialing', dialingAt: expect.stringMatching(isoPattern) });
  });

  it('holds the account live-call cap across processes claiming at once', async () => {
    const calls = await Promise.all(Array.from({ length: 10 }, () => store.calls.createQueued(newCall())));
    const other = await handle.openAnother();
    const results = await Promise.all(
      calls.map((call, i) =>
        (i % 2 ? other : store).calls.claimForDialing(call?.id ?? '', lease(`w${i % 2}`)),
      ),
    );
    expect(results.filter((result) => 'claimed' in result)).toHaveLength(3);
    expect(results.filter((result) => 'refused' in result && result.refused === 'capped')).toHaveLength(7);
    expect((await store.calls.countByStatus(account.id)).dialing).toBe(3);
  });

  it('finish is terminal exactly once, with one event and one delivery job', async () => {
    const call = await store.calls.createQueued(newCall());
    await store.calls.claimForDialing(call?.id ?? '', lease('w'));
    const other = await handle.openAnother();
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? other : store).calls.finish(
          call?.id ?? '',
          {
            ...completed,
            transcript: [{ role: 'agent', text: `t${i}`, start_ms: 0, end_ms: 1 }],
            metrics: { i },
          },
          buildEvent,
        ),
      ),
    );
    const finished = results.filter((result) => result !== null);
    expect(finished).toHaveLength(1);
    expect(finished[0]).toMatchObject({ status: 'completed', endedAt: expect.stringMatching(isoPattern) });
    const events = await store.events.list(account.id, { limit: 10 });
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]?.body ?? '{}')).toMatchObject({ type: 'call.completed' });
    expect(await countJobs(store, queueNames.webhook, { event_id: events[0]?.id })).toBe(1);
    expect(await store.dashboard.eventIdForCall(account.id, call?.id ?? '')).toBe(events[0]?.id);
  });

  it('moves a call through its live states under its lease; renews and finds abandoned leases', async () => {
    const call = await store.calls.createQueued(newCall());
    const id = call?.id ?? '';
    await store.calls.claimForDialing(id, lease('w1'));
    expect(await store.calls.markLive(id, 'w2', 'ringing', new Date().toISOString())).toBe(false);
    expect(await store.calls.markLive(id, 'w1', 'ringing', new Date().toISOString())).toBe(true);
    expect(await store.calls.markLive(id, 'w1', 'in_progress', new Date().toISOString())).toBe(true);
    await store.calls.setSipCallId(id, 'sip-1');
    expect(await store.calls.renewLeases('w1', new Date(Date.now() + 60_000).toISOString())).toBe(1);
    expect(await store.calls.listAbandoned({ beforeIso: new Date().toISOString() })).toEqual([]);
    const held = await store.calls.listAbandoned({ beforeIso: new Date().toISOString(), notHeldBy: 'w9' });
    expect(held.map((c) => [c.id, c.status, c.sipCallId])).toEqual([[id, 'in_progress', 'sip-1']]);
    await store.calls.renewLeases('w1', new Date(Date.now() - 1_000).toISOString());
    expect(
      (await store.calls.listAbandoned({ beforeIso: new Date().toISOString() })).map((c) => c.id),
    ).toEqual([id]);
  });

  it('a live transcript is written only while the call is in progress; the final one replaces it', async () => {
    const call = await store.calls.createQueued(newCall());
    const id = call?.id ?? '';
    const line = (text: string) => ({ role: 'agent' as const, text, start_ms: 0, end_ms: 1 });
    await store.calls.claimForDialing(id, lease('w1'));
    await store.calls.setLiveTranscript(id, [line('too early')]);
    expect((await store.calls.getById(id))?.transcript).toEqual([]);
    await store.calls.markLive(id, 'w1', 'in_progress', new Date().toISOString());
    await store.calls.setLiveTranscript(id, [line('Hello')]);
    const other = await handle.openAnother();
    expect((await other.calls.get(account.id, id))?.transcript).toEqual([line('Hello')]);
    await store.calls.finish(id, { ...completed, transcript: [line('Hello'), line('Bye')] }, buildEvent);
    await store.calls.setLiveTranscript(id, [line('late write')]);
    expect((await store.calls.getById(id))?.transcript).toEqual([line('Hello'), line('Bye')]);
  });

  it('pages calls by id, newest first, and filters by status', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await store.calls.createQueued(newCall()))?.id ?? '');
    await store.calls.finish(ids[0] ?? '', { ...completed, status: 'canceled', endReason: null }, buildEvent);
    const page = await store.calls.list(account.id, { limit: 2 });
    expect(page.map((c) => c.id)).toEqual([ids[4], ids[3]]);
    const next = await store.calls.list(account.id, { limit: 10, before: ids[3] });
    expect(next.map((c) => c.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect((await store.calls.list(account.id, { limit: 10, status: 'canceled' })).map((c) => c.id)).toEqual([
      ids[0],
    ]);
    expect(await store.calls.countByStatus()).toEqual({ queued: 4, canceled: 1 });
    const perDay = await store.dashboard.callsPerDay(
      account.id,
      new Date(Date.now() - 86_400_000).toISOString(),
    );
    expect(perDay.reduce((sum, row) => sum + row.count, 0)).toBe(5);
    expect(perDay[0]?.day).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('delivery outcomes: retry keeps the job, delivered completes it, park waits for an endpoint', async () => {
    const call = await store.calls.createQueued(newCall());
    await store.calls.finish(
      call?.id ?? '',
      { ...completed, status: 'canceled', endReason: null },
      buildEvent,
    );
    const [job] = await store.queue.claim(queueNames.webhook, 'w', 10, 60_000);
    const eventId = String(job?.payload.event_id);
    expect(await store.events.park(eventId, job?.id ?? '')).toBe(true);
    expect((await store.events.getById(eventId))?.status).toBe('parked');
    expect(await store.queue.depth(queueNames.webhook)).toEqual({ count: 0, oldestRunAtMs: null });
    await store.webhookEndpoints.set(
      account.id,
      'https://example.test/hook',
      'whsec_a',
      new Date().toISOString(),
    );
    expect((await store.events.getById(eventId))?.status).toBe('pending');
    const [again] = await store.queue.claim(queueNames.webhook, 'w', 10, 60_000);
    expect(again?.payload).toEqual({ event_id: eventId });
    expect(await store.events.park(eventId, again?.id ?? '')).toBe(false);
    const attempt = {
      eventId,
      attemptedAt: new Date().toISOString(),
      url: 'https://example.test/hook',
      statusCode: 500,
      latencyMs: 12,
      responseExcerpt: 'no',
      error: null,
    };
    await expect(store.events.requeue(account.id, eventId, Date.now())).rejects.toMatchObject({
      code: 'conflict',
    });
    const retried = await store.events.recordAttempt(again?.id ?? '', attempt, {
      kind: 'retry',
      runAtMs: Date.now(),
    });
    expect(retried).toMatchObject({
      status: 'pending',
      attempts: 1,
      nextAttemptAt: expect.stringMatching(isoPattern),
    });
    const requeued = await store.events.requeue(account.id, eventId, Date.now());
    expect(requeued?.status).toBe('pending');
    expect(await countJobs(store, queueNames.webhook, { event_id: eventId })).toBe(1);
    const [third] = await store.queue.claim(queueNames.webhook, 'w', 10, 60_000);
    const delivered = await store.events.recordAttempt(
      third?.id ?? '',
      { ...attempt, statusCode: 200 },
      { kind: 'delivered' },
    );
    expect(delivered).toMatchObject({ status: 'delivered', attempts: 2, deliveredAt: attempt.attemptedAt });
    expect((await store.events.attempts(eventId)).map((a) => a.statusCode)).toEqual([500, 200]);
    expect(await store.queue.depth(queueNames.webhook)).toEqual({ count: 0, oldestRunAtMs: null });
    const gone = await store.webhookEndpoints.rotateSecret(
      account.id,
      'whsec_b',
      new Date(Date.now() + 1000).toISOString(),
      new Date().toISOString(),
    );
    expect(gone).toMatchObject({
      secretCiphertext: 'whsec_b',
      previousSecretCiphertext: 'whsec_a',
      enabled: true,
    });
  });

  it('accounts, keys, agents, numbers, trunks: the records round-trip', async () => {
    const others = await Promise.all([
      store.accounts.getOrCreateDefault(),
      store.accounts.getOrCreateDefault(),
    ]);
    expect(others[0]?.id).toBe(others[1]?.id);
    expect((await store.accounts.list()).map((a) => a.id)).toEqual([account.id, others[0]?.id]);
    const keyHash = newId('apiKey');
    const made = await store.apiKeys.create(newApiKey(account.id, { name: 'k2', keyHash }));
    expect(await store.apiKeys.findByHash(keyHash)).toEqual({ key: made, keyHash, account });
    expect(await store.apiKeys.findByHash('nope')).toBeNull();
    await store.apiKeys.touchLastUsed(made.id, '2030-01-01T00:00:00.000Z');
    expect((await store.apiKeys.list(account.id)).map((k) => k.lastUsedAt)).toEqual([
      null,
      '2030-01-01T00:00:00.000Z',
    ]);
    expect(await store.agents.get(account.id, agent.id)).toEqual(agent);
    expect(agent.createdAt).toMatch(isoPattern);
    const updated = await store.agents.update(account.id, agent.id, { ...agent, name: 'b', script: null });
    expect(updated).toMatchObject({ name: 'b', script: null, settings: { voice: 'a' } });
    expect((await store.agents.setActive(account.id, agent.id, false))?.active).toBe(false);
    await store.numbers.add({ accountId: account.id, number: '+15550000001', route: 'sandbox' });
    await expect(
      store.numbers.add({ accountId: account.id, number: '+15550000001', route: 'sandbox' }),
    ).rejects.toMatchObject({ code: 'conflict' });
    const trunk = await store.trunks.create({
      accountId: account.id,
      name: 't1',
      uri: 'sip:pbx.test',
      username: null,
      passwordCiphertext: null,
      fromDomain: null,
      settings: {},
    });
    expect(await store.trunks.get(account.id, 't1')).toEqual(trunk);
    await expect(store.trunks.create({ ...trunk })).rejects.toMatchObject({ code: 'conflict' });
    const first = await store.apiKeys.revoke(account.id, key.id, '2030-01-01T00:00:00.000Z');
    const second = await store.apiKeys.revoke(account.id, key.id, '2031-01-01T00:00:00.000Z');
    expect(second?.revokedAt).toBe(first?.revokedAt);
    expect(first?.revokedAt).toBe('2030-01-01T00:00:00.000Z');
  });

  it('users: listed by account, a new password ends their sessions, removal takes the sessions too', async () => {
    const other = await store.accounts.create({ name: 'other' });
    const user = await store.users.create({
      accountId: account.id,
      email: 'Ops@X.test',
      passwordHash: 'old',
    });
    await store.users.create({ accountId: other.id, email: 'someone@x.test', passwordHash: 'h' });
    const session = (tokenHash: string) => ({
      tokenHash,
      userId: user.id,
      csrfToken: 'c',
      createdAt: new Date().toISOString(),
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
    });
    await store.sessions.create(session('t1'));
    const now = new Date().toISOString();
    expect((await store.users.list(account.id)).map((entry) => entry.email)).toEqual(['ops@x.test']);
    expect(await store.users.setPasswordHash(other.id, 'ops@x.test', 'new')).toBeNull();
    expect(await store.sessions.find('t1', now)).not.toBeNull();
    expect(await store.users.setPasswordHash(account.id, 'OPS@x.test', 'new')).toMatchObject({
      passwordHash: 'new',
    });
    expect(await store.sessions.find('t1', now)).toBeNull();
    await store.sessions.create(session('t2'));
    expect(await store.users.remove(other.id, 'ops@x.test')).toBe(false);
    expect(await store.users.remove(account.id, 'ops@x.test')).toBe(true);
    expect(await store.sessions.find('t2', now)).toBeNull();
    expect(await store.users.list(account.id)).toEqual([]);
    expect(await store.users.list(other.id)).toHaveLength(1);
  });

  it('provider credentials: per account, unique by name, listed by name, removed by id', async () => {
    const input = {
      accountId: account.id,
      name: 'dg',
      provider: 'deepgram',
      apiKeyCiphertext: 'v1.sealed',
      apiKeyLast4: 'abcd',
      baseUrl: null,
    };
    const created = await store.credentials.create(input);
    expect(created).toMatchObject({
      ...input,
      id: expect.stringMatching(/^cred_/),
      createdAt: expect.stringMatching(isoPattern),
    });
    await expect(store.credentials.create(input)).rejects.toMatchObject({ code: 'conflict' });
    const other = await store.accounts.create({ name: 'other' });
    await store.credentials.create({ ...input, accountId: other.id });
    expect((await store.credentials.list(account.id)).map((entry) => entry.id)).toEqual([created.id]);
    expect(await store.credentials.get(account.id, 'dg')).toEqual(created);
    expect(await store.credentials.remove(other.id, created.id)).toBe(false);
    expect(await store.credentials.remove(account.id, created.id)).toBe(true);
    expect(await store.credentials.list(account.id)).toEqual([]);
  });

  it("an account's prices: none at first, replaced whole, kept apart from other accounts'", async () => {
    expect(await store.prices.get(account.id)).toEqual([]);
    const prices = [
      {
        stage: 'tts' as const,
        provider: 'elevenlabs',
        model: null,
        unit: 'characters' as const,
        usd: 0.03,
        per: 1000,
      },
      {
        stage: 'telephony' as const,
        provider: 'trunk',
        model: 'carrier-a',
        unit: 'minutes' as const,
        usd: 0.01,
        per: 1,
      },
    ];
    await store.prices.set(account.id, prices);
    expect(await store.prices.get(account.id)).toEqual(prices);
    await store.prices.set(account.id, prices.slice(1));
    expect(await store.prices.get(account.id)).toEqual(prices.slice(1));
    const other = await store.accounts.create({ name: 'priced apart' });
    expect(await store.prices.get(other.id)).toEqual([]);
  });

  it('the do-not-call list: per account, first entry kept, paged in number order, removed once', async () => {
    const numbers = Array.from({ length: 1_203 }, (_, index) => `+1555${String(2_000_000 + index)}`);
    const entries = numbers.map((number) => ({ number, reason: 'asked', source: 'api' as const }));
    expect(await store.doNotCall.add(account.id, entries)).toBe(1_203);
    // Listed again (and the callee asking too): nothing new, the first reason and source stay.
    expect(
      await store.doNotCall.add(account.id, [
        { number: numbers[5] as string, reason: 'again', source: 'callee_request' },
      ]),
    ).toBe(0);
    expect(await store.doNotCall.get(account.id, numbers[5] as string)).toMatchObject({
      number: numbers[5],
      reason: 'asked',
      source: 'api',
      createdAt: expect.stringMatching(isoPattern),
    });
    const firstPage = await store.doNotCall.list(account.id, { limit: 1_000 });
    const rest = await store.doNotCall.list(account.id, {
      limit: 1_000,
      afterNumber: firstPage.at(-1)?.number as string,
    });
    expect([...firstPage, ...rest].map((entry) => entry.number)).toEqual([...numbers].sort());
    const other = await store.accounts.create({ name: 'listed apart' });
    expect(await store.doNotCall.get(other.id, numbers[0] as string)).toBeNull();
    expect(await store.doNotCall.remove(other.id, numbers[0] as string)).toBe(false);
    expect(await store.doNotCall.remove(account.id, numbers[0] as string)).toBe(true);
    expect(await store.doNotCall.remove(account.id, numbers[0] as string)).toBe(false);
    expect(await store.doNotCall.get(account.id, numbers[0] as string)).toBeNull();
  });

  it('first-run sign-up and service secrets are decided once, even when raced', async () => {
    const other = await handle.openAnother();
    const users = await Promise.all(
      ['a@x.test', 'b@x.test', 'c@x.test'].map((email, i) =>
        (i % 2 ? other : store).users.createFirst({ accountId: account.id, email, passwordHash: 'h' }),
      ),
    );
    expect(users.filter((user) => user !== null)).toHaveLength(1);
    expect(await store.users.count()).toBe(1);
    const secrets = await Promise.all(
      [store, other, store].map((s, i) => s.serviceSecret('recording', () => `value-${i}`)),
    );
    expect(new Set(secrets).size).toBe(1);
    const user = users.find((u) => u !== null);
    const session = await store.sessions.create({
      tokenHash: 'th',
      userId: user?.id ?? '',
      csrfToken: 'c',
      createdAt: new Date().toISOString(),
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
    });
    expect((await store.sessions.find('th', new Date().toISOString()))?.session).toEqual(session);
    expect(await store.sessions.deleteExpired(new Date(Date.now() + 120_000).toISOString())).toBe(1);
  });

  it('sandbox invites are recorded in order', async () => {
    await store.sandboxInvites.record({
      sipCallId: 'a',
      toNumber: '+1555',
      receivedAt: '2030-01-01T00:00:00.000Z',
    });
    await store.sandboxInvites.record({
      sipCallId: 'b',
      toNumber: '+1556',
      receivedAt: '2030-01-01T00:00:01.000Z',
    });
    expect((await store.sandboxInvites.list()).map((invite) => invite.sipCallId)).toEqual(['a', 'b']);
  });
});
