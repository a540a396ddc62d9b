import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { completedEventBuilder } from '../../src/calls/completedEvents.js';
import { newId } from '../../src/domain/ids.js';
import type { AccountRecord } from '../../src/domain/records.js';
import type { OptionalEventType } from '../../src/domain/statusEvents.js';
import { openSqliteStore } from '../../src/openStore.js';
import { queueNames } from '../../src/queue/types.js';
import { migrate } from '../../src/store/sqlite/database.js';
import { sqliteMigrations } from '../../src/store/sqlite/migrations.js';
import type { NewStatusEvent } from '../../src/store/types.js';
import {
  type AnyStore,
  type CallOwner,
  countJobs,
  createCallOwner,
  newQueuedCall,
  openTestStore,
  storeKinds,
  type TestStoreHandle,
} from '../helpers/stores.js';

/**
 * The events beyond call.completed in the store, on both stores: kept only for an endpoint that
 * asked for their type, once per call (campaign) and type whatever the number of writers, each with
 * its delivery job in the same transaction.
 */

describe.each(storeKinds)('status events on %s', (kind) => {
  let handle: TestStoreHandle;
  let store: AnyStore;
  let owner: CallOwner;
  let account: AccountRecord;

  beforeEach(async () => {
    handle = await openTestStore(kind);
    store = handle.store;
    owner = await createCallOwner(store);
    account = owner.account;
  });

  afterEach(async () => {
    await handle.dispose();
  });

  function statusEvent(
    type: OptionalEventType,
    subject: { callId?: string; campaignId?: string },
  ): NewStatusEvent {
    const id = newId('event');
    return {
      id,
      accountId: account.id,
      type,
      callId: subject.callId ?? null,
      campaignId: subject.campaignId ?? null,
      body: JSON.stringify({ type, id }),
      createdAt: new Date().toISOString(),
    };
  }

  async function newCallId(): Promise<string> {
    const call = await store.calls.createQueued(newQueuedCall(owner.owner));
    return (call as { id: string }).id;
  }

  const setEndpoint = () =>
    store.webhookEndpoints.set(account.id, 'https://example.com/hook', 'sealed', new Date().toISOString());

  it('keeps nothing without an endpoint, or for a type the endpoint did not ask for', async () => {
    const callId = await newCallId();
    expect(await store.events.addStatusEvent(statusEvent('call.ringing', { callId }))).toBe(false);
    const endpoint = await setEndpoint();
    expect(endpoint.eventTypes).toEqual(['call.completed']);
    expect(await store.events.addStatusEvent(statusEvent('call.ringing', { callId }))).toBe(false);
    expect(await store.events.list(account.id, { limit: 10 })).toEqual([]);
  });

  it('keeps one event per call and type, with its delivery job, and campaign events without a call', async () => {
    await setEndpoint();
    const chosen = await store.webhookEndpoints.setEventTypes(
      account.id,
      ['call.completed', 'call.ringing', 'call.answered', 'campaign.completed'],
      new Date().toISOString(),
    );
    expect(chosen?.eventTypes).toEqual([
      'call.completed',
      'call.ringing',
      'call.answered',
      'campaign.completed',
    ]);
    const callId = await newCallId();

    // Racing writers (two processes hearing the same 180): one event.
    const ringing = [statusEvent('call.ringing', { callId }), statusEvent('call.ringing', { callId })];
    const written = await Promise.all(ringing.map((event) => store.events.addStatusEvent(event)));
    expect(written.filter(Boolean)).toHaveLength(1);
    expect(await store.events.addStatusEvent(statusEvent('call.answered', { callId }))).toBe(true);
    // Not asked for: not kept.
    expect(await store.events.addStatusEvent(statusEvent('call.transferred', { callId }))).toBe(false);

    const campaignId = newId('campaign');
    const completed = statusEvent('campaign.completed', { campaignId });
    expect(await store.events.addStatusEvent(completed)).toBe(true);
    expect(await store.events.addStatusEvent(statusEvent('campaign.completed', { campaignId }))).toBe(false);

    const events = await store.events.list(account.id, { limit: 10 });
    expect(events.map((event) => event.type).sort()).toEqual([
      'call.answered',
      'call.ringing',
      'campaign.completed',
    ]);
    const campaignEvent = events.find((event) => event.type === 'campaign.completed');
    expect(campaignEvent).toMatchObject({
      callId: null,
      campaignId,
      status: 'pending',
      body: completed.body,
    });
    for (const event of events) {
      expect(await countJobs(store, queueNames.webhook, { event_id: event.id })).toBe(1);
    }

    // The call's call.completed is still written when it ends, beside its status events.
    const finished = await store.calls.finish(
      callId,
      { status: 'failed', endReason: 'unreachable', atIso: new Date().toISOString() },
      completedEventBuilder(() => null),
    );
    expect(finished?.status).toBe('failed');
    const ofCall = (await store.events.list(account.id, { limit: 10 })).filter(
      (event) => event.callId === callId,
    );
    expect(ofCall.map((event) => event.type).sort()).toEqual([
      'call.answered',
      'call.completed',
      'call.ringing',
    ]);
    // The call page's webhook log is its call.completed's, whatever else the call has.
    const completedEvent = ofCall.find((event) => event.type === 'call.completed');
    expect(await store.dashboard.eventIdForCall(account.id, callId)).toBe(completedEvent?.id);
  });

  it('stops keeping a type once the endpoint no longer asks for it', async () => {
    await setEndpoint();
    await store.webhookEndpoints.setEventTypes(
      account.id,
      ['call.completed', 'call.ringing'],
      new Date().toISOString(),
    );
    expect(
      await store.events.addStatusEvent(statusEvent('call.ringing', { callId: await newCallId() })),
    ).toBe(true);
    await store.webhookEndpoints.setEventTypes(account.id, ['call.completed'], new Date().toISOString());
    expect(
      await store.events.addStatusEvent(statusEvent('call.ringing', { callId: await newCallId() })),
    ).toBe(false);
    // Replacing the URL keeps the choice.
    expect((await setEndpoint()).eventTypes).toEqual(['call.completed']);
  });
});

describe('the SQLite migration to status events', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'callwright-migrate-'));
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('rebuilds the events table of an existing database and keeps its events and attempts', async () => {
    const path = join(dir, 'callwright.db');
    // A database as the version before left it: an event and its attempt.
    const old = new Database(path);
    old.pragma('foreign_keys = ON');
    old.exec(
      `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`,
    );
    for (const migration of sqliteMigrations.filter((each) => each.version < 12)) {
      old.exec(migration.sql);
      old
        .prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)')
        .run(migration.version, migration.name, new Date().toISOString());
    }
    const now = new Date().toISOString();
    old.prepare("INSERT INTO accounts (id, name, created_at) VALUES ('acc_1', 'old', ?)").run(now);
    old
      .prepare(
        "INSERT INTO agents (id, account_id, name, prompt, created_at, updated_at) VALUES ('agt_1', 'acc_1', 'a', 'p', ?, ?)",
      )
      .run(now, now);
    old
      .prepare(
        `INSERT INTO calls (id, account_id, agent_id, from_number, to_number, status, created_at, updated_at)
         VALUES ('call_1', 'acc_1', 'agt_1', '+15550000001', '+15550000002', 'failed', ?, ?)`,
      )
      .run(now, now);
    old
      .prepare(
        `INSERT INTO events (id, account_id, type, call_id, body, created_at, status)
         VALUES ('evt_1', 'acc_1', 'call.completed', 'call_1', '{}', ?, 'delivered')`,
      )
      .run(now);
    old
      .prepare(
        `INSERT INTO event_attempts (event_id, attempted_at, url, status_code, latency_ms, response_excerpt, error)
         VALUES ('evt_1', ?, 'https://example.com', 200, 12, 'ok', NULL)`,
      )
      .run(now);
    old.close();

    const store = openSqliteStore(path);
    try {
      const events = await store.events.list('acc_1', { limit: 10 });
      expect(events).toMatchObject([
        { id: 'evt_1', callId: 'call_1', campaignId: null, status: 'delivered' },
      ]);
      expect(await store.events.attempts('evt_1')).toMatchObject([{ statusCode: 200, latencyMs: 12 }]);
      expect(store.db.pragma('foreign_keys', { simple: true })).toBe(1);
      expect(store.db.pragma('foreign_key_check')).toEqual([]);
      // The attempts still point at the (new) events table: an attempt for no event is refused.
      expect(() =>
        store.db
          .prepare(
            `INSERT INTO event_attempts (event_id, attempted_at, url, latency_ms) VALUES ('evt_none', ?, 'u', 1)`,
          )
          .run(now),
      ).toThrow(/FOREIGN KEY/);
      expect(migrate(store.db)).toEqual([]);
    } finally {
      store.close();
    }
  });
});
