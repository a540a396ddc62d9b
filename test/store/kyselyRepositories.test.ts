import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { completedEventBuilder } from '../../src/calls/completedEvents.js';
import { newId } from '../../src/domain/ids.js';
import type { AccountRecord, AgentRecord, ApiKeyRecord, NewAgent } from '../../src/domain/records.js';
import { sqliteQueries } from '../../src/store/kysely/dialects.js';
import { SqliteStore } from '../../src/store/sqlite/sqliteStore.js';
import {
  type AnyStore,
  newAgent,
  newApiKey,
  newQueuedCall,
  openTestStore,
  sqlOn,
  storeKinds,
  type TestStoreHandle,
} from '../helpers/stores.js';

/**
 * The repositories written once through Kysely behave the same on SQLite and PostgreSQL where the
 * dialects differ: booleans, JSON (null included), timestamps, byte-wise ordering, UTC days.
 */

const buildEvent = completedEventBuilder(() => null);

describe.each(storeKinds)('Kysely repositories on %s', (kind) => {
  let handle: TestStoreHandle;
  let store: AnyStore;
  let account: AccountRecord;
  let key: ApiKeyRecord;

  const agentInput = (accountId: string): NewAgent =>
    newAgent(accountId, {
      variables: [{ name: 'slot', default: null, description: '', required: false, type: 'any' }],
      settings: { voice: 'a', nested: { list: [1, 2] } },
    });

  beforeEach(async () => {
    handle = await openTestStore(kind);
    store = handle.store;
    account = await store.accounts.create({ name: 'acme', ratePolicy: { requests: 5, windowS: 10 } });
    key = await store.apiKeys.create(newApiKey(account.id));
  });

  afterEach(async () => {
    await handle.dispose();
  });

  it('booleans and JSON round-trip, a null script stays null, an edit replaces and a toggle keeps it', async () => {
    const agent = await store.agents.create(agentInput(account.id));
    expect(agent).toMatchObject({ active: true, script: null, settings: { nested: { list: [1, 2] } } });
    expect((await store.agents.setActive(account.id, agent.id, false))?.active).toBe(false);
    expect((await store.agents.get(account.id, agent.id))?.active).toBe(false);
    const edited = await store.agents.update(account.id, agent.id, {
      ...agentInput(account.id),
      name: 'b',
      script: { start: { say: 'x' } },
      variables: [],
    });
    expect(edited).toMatchObject({
      name: 'b',
      active: false,
      script: { start: { say: 'x' } },
      variables: [],
    });
    expect(await store.agents.update(account.id, newId('agent'), agentInput(account.id))).toBeNull();
    expect(await store.agents.setActive('acc_other', agent.id, true)).toBeNull();
    expect(account.ratePolicy).toEqual({ requests: 5, windowS: 10 });
    expect(account.isDefault).toBe(false);
  });

  it('one default account however many ask at once, across two processes', async () => {
    const other = await handle.openAnother();
    const defaults = await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 ? other : store).accounts.getOrCreateDefault()),
    );
    expect(new Set(defaults.map((entry) => entry.id)).size).toBe(1);
    expect(defaults[0]?.isDefault).toBe(true);
    expect((await store.accounts.list()).filter((entry) => entry.isDefault)).toHaveLength(1);
  });

  it('revoking keeps the first time; touching records the last use; keys list oldest first', async () => {
    const first = await store.apiKeys.revoke(account.id, key.id, '2030-01-01T00:00:00.000Z');
    const second = await store.apiKeys.revoke(account.id, key.id, '2031-01-01T00:00:00.000Z');
    expect(first?.revokedAt).toBe('2030-01-01T00:00:00.000Z');
    expect(second?.revokedAt).toBe('2030-01-01T00:00:00.000Z');
    expect(await store.apiKeys.revoke('acc_other', key.id, '2030-01-01T00:00:00.000Z')).toBeNull();
    await store.apiKeys.touchLastUsed(key.id, '2030-02-01T00:00:00.000Z');
    const later = await store.apiKeys.create({ ...key, accountId: account.id, keyHash: newId('apiKey') });
    const listed = await store.apiKeys.list(account.id);
    expect(listed.map((entry) => entry.id)).toEqual([key.id, later.id]);
    expect(listed[0]?.lastUsedAt).toBe('2030-02-01T00:00:00.000Z');
  });

  it('trunks and numbers order byte-wise on every locale; a trunk in use cannot be removed', async () => {
    const trunk = (name: string) =>
      store.trunks.create({
        accountId: account.id,
        name,
        uri: 'sip:pbx.example.test',
        username: null,
        passwordCiphertext: null,
        fromDomain: null,
        settings: {},
      });
    const [lower, upper, underscore] = [await trunk('a-b'), await trunk('B'), await trunk('_x')];
    expect((await store.trunks.list(account.id)).map((entry) => entry.name)).toEqual(['B', '_x', 'a-b']);
    await expect(trunk('B')).rejects.toMatchObject({ code: 'conflict' });
    expect((await store.trunks.get(account.id, 'B'))?.id).toBe(upper.id);
    expect((await store.trunks.get(account.id, lower.id))?.name).toBe('a-b');
    await store.numbers.add({ accountId: account.id, number: '+15550000009', route: underscore.id });
    await store.numbers.add({ accountId: account.id, number: '+15550000001', route: 'sandbox' });
    await expect(
      store.numbers.add({ accountId: account.id, number: '+15550000001', route: 'sandbox' }),
    ).rejects.toMatchObject({ code: 'conflict' });
    expect((await store.numbers.list(account.id)).map((entry) => entry.number)).toEqual([
      '+15550000001',
      '+15550000009',
    ]);
    await expect(store.trunks.remove(account.id, underscore.id)).rejects.toMatchObject({ code: 'conflict' });
    expect(await store.numbers.remove(account.id, '+15550000009')).toBe(true);
    expect(await store.numbers.remove(account.id, '+15550000009')).toBe(false);
    expect(await store.trunks.remove(account.id, underscore.id)).toBe(true);
    expect(await store.trunks.remove(account.id, underscore.id)).toBe(false);
  });

  it('dashboard queries: filters, UTC days in order, metrics as objects, the event of a call', async () => {
    const agent: AgentRecord = await store.agents.create(agentInput(account.id));
    const owner = { accountId: account.id, agentId: agent.id, apiKeyId: key.id };
    const create = async (createdAt: string) => {
      const call = await store.calls.createQueued(newQueuedCall(owner, { createdAt }));
      return call?.id ?? '';
    };
    // 23:30 UTC is the next day in UTC+1 and the same day in UTC-5: the day must be UTC's.
    const early = await create('2030-01-01T23:30:00.000Z');
    const late = await create('2030-01-02T00:30:00.000Z');
    const latest = await create('2030-01-02T10:00:00.000Z');
    const ended = await store.calls.finish(
      late,
      {
        status: 'completed',
        endReason: 'callee_hangup',
        atIso: '2030-01-02T00:31:00.000Z',
        metrics: { turnLatencyMs: [120, 180] },
      },
      buildEvent,
    );
    expect(ended?.status).toBe('completed');
    const perDay = await store.dashboard.callsPerDay(account.id, '2030-01-01T00:00:00.000Z');
    expect(perDay).toEqual([
      { day: '2030-01-01', status: 'queued', count: 1 },
      { day: '2030-01-02', status: 'completed', count: 1 },
      { day: '2030-01-02', status: 'queued', count: 1 },
    ]);
    const filtered = await store.dashboard.listCalls(account.id, {
      fromIso: '2030-01-02T00:00:00.000Z',
      toIso: '2030-01-02T10:00:00.000Z',
      limit: 10,
    });
    expect(filtered.map((call) => call.id)).toEqual([late]);
    expect((await store.dashboard.listCalls(account.id, { limit: 2 })).map((call) => call.id)).toEqual([
      latest,
      late,
    ]);
    expect(
      (await store.dashboard.listCalls(account.id, { status: 'queued', limit: 10 })).map((call) => call.id),
    ).toEqual([latest, early]);
    expect(await store.dashboard.callMetricsSince(account.id, '2030-01-01T00:00:00.000Z')).toEqual([
      {
        id: late,
        agentId: agent.id,
        endedAt: '2030-01-02T00:31:00.000Z',
        metrics: { turnLatencyMs: [120, 180] },
      },
    ]);
    expect(await store.dashboard.eventIdForCall(account.id, late)).toMatch(/^evt_/);
    expect(await store.dashboard.eventIdForCall(account.id, early)).toBeNull();
  });

  it('sessions join their user; expired ones are not found and are deleted', async () => {
    const user = await store.users.create({ accountId: account.id, email: 'A@X.test', passwordHash: 'h' });
    expect(user.email).toBe('a@x.test');
    await expect(
      store.users.create({ accountId: account.id, email: 'a@x.test', passwordHash: 'h' }),
    ).rejects.toMatchObject({ code: 'conflict' });
    expect(
      await store.users.createFirst({ accountId: account.id, email: 'b@x.test', passwordHash: 'h' }),
    ).toBeNull();
    await store.users.recordSignIn(user.id, '2030-01-01T00:00:00.000Z');
    expect((await store.users.findByEmail('a@X.TEST'))?.lastSignInAt).toBe('2030-01-01T00:00:00.000Z');
    const session = await store.sessions.create({
      tokenHash: 'th',
      userId: user.id,
      csrfToken: 'c',
      createdAt: '2030-01-01T00:00:00.000Z',
      expiresAt: '2030-01-02T00:00:00.000Z',
    });
    expect(session.lastSeenAt).toBe('2030-01-01T00:00:00.000Z');
    await store.sessions.touch('th', '2030-01-01T06:00:00.000Z');
    const found = await store.sessions.find('th', '2030-01-01T12:00:00.000Z');
    expect(found?.session).toMatchObject({ tokenHash: 'th', lastSeenAt: '2030-01-01T06:00:00.000Z' });
    expect(found?.user).toEqual({ ...user, lastSignInAt: '2030-01-01T00:00:00.000Z' });
    expect(await store.sessions.find('th', '2030-01-02T00:00:00.000Z')).toBeNull();
    expect(await store.sessions.deleteExpired('2030-01-02T00:00:00.000Z')).toBe(1);
    expect(await store.users.count()).toBe(1);
  });

  it('agent test calls: JSON scenarios and overrides round-trip, runs list newest first, removal forgets', async () => {
    const agent = await store.agents.create(agentInput(account.id));
    const row = (runId: string, position: number, createdAt: string, replayOf: string | null = null) => ({
      callId: newId('call'),
      runId,
      accountId: account.id,
      agentId: agent.id,
      position,
      repeatIndex: position + 1,
      scenario: { name: `s${position}`, callee: { answers: 'human', turns: [{ say: 'yes' }] } },
      agentOverrides:
        position === 0 ? { settings: { turn_taking: { end_of_turn: { wait_ms: 900 } } } } : null,
      replayOf,
      createdAt,
    });
    const first = [row('trn_a', 1, '2026-11-27T10:00:00.000Z'), row('trn_a', 0, '2026-11-27T10:00:00.000Z')];
    const second = [row('trn_b', 0, '2026-11-27T11:00:00.000Z', 'call_original')];
    await store.agentTests.add([...first, ...second]);
    expect(await store.agentTests.forCall(first[1]?.callId as string)).toEqual(first[1]);
    expect(await store.agentTests.forCall('call_unknown')).toBeNull();
    expect((await store.agentTests.run(account.id, 'trn_a')).map((test) => test.position)).toEqual([0, 1]);
    expect(await store.agentTests.run('acct_other', 'trn_a')).toEqual([]);
    expect(await store.agentTests.listRuns(account.id, agent.id, 10)).toEqual([
      {
        runId: 'trn_b',
        agentId: agent.id,
        createdAt: '2026-11-27T11:00:00.000Z',
        calls: 1,
        replayOf: 'call_original',
      },
      { runId: 'trn_a', agentId: agent.id, createdAt: '2026-11-27T10:00:00.000Z', calls: 2, replayOf: null },
    ]);
    await store.agentTests.remove(first.map((test) => test.callId));
    expect(await store.agentTests.run(account.id, 'trn_a')).toEqual([]);
  });

  it('sandbox invites keep their timestamps as ISO text', async () => {
    await store.sandboxInvites.record({
      sipCallId: 's',
      toNumber: '+1',
      receivedAt: '2030-01-01T00:00:00.123Z',
    });
    expect(await store.sandboxInvites.list()).toEqual([
      { sipCallId: 's', toNumber: '+1', receivedAt: '2030-01-01T00:00:00.123Z' },
    ]);
    expect(await sqlOn(store, 'SELECT count(*) AS n FROM sandbox_invites')).toHaveLength(1);
  });
});

describe('Kysely on SQLite', () => {
  it('refuses transactions: the handle is shared with synchronous ones that an open async one would swallow', async () => {
    const handle = await openTestStore('sqlite');
    try {
      if (!(handle.store instanceof SqliteStore)) throw new Error('not sqlite');
      const { db } = sqliteQueries(handle.store.db);
      await expect(
        db
          .transaction()
          .execute(async (transaction) => transaction.selectFrom('accounts').selectAll().execute()),
      ).rejects.toThrow(/no Kysely transactions on SQLite/);
      expect(handle.store.db.inTransaction).toBe(false);
    } finally {
      await handle.dispose();
    }
  });
});
