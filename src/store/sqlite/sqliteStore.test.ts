import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCallOwner, newQueuedCall } from '../../../test/helpers/stores.js';
import { openSqliteStore } from '../../openStore.js';
import { queueNames } from '../../queue/types.js';
import { migrate, openSqliteDatabase } from './database.js';
import { GroupCommitter } from './groupCommit.js';
import { sqliteMigrations } from './migrations.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'callwright-store-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('migrations', () => {
  it('apply once and are recorded', () => {
    const db = openSqliteDatabase(join(dir, 'a.db'));
    expect(migrate(db)).toEqual([]);
    const versions = db.prepare('SELECT version FROM schema_migrations').all();
    expect(versions).toEqual(sqliteMigrations.map((migration) => ({ version: migration.version })));
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2); // FULL
    db.close();
  });
});

describe('group commit', () => {
  it('commits work queued in one turn together, and rolls back only the piece that throws', async () => {
    const db = openSqliteDatabase(join(dir, 'b.db'));
    db.exec('CREATE TABLE t (v INTEGER PRIMARY KEY)');
    const committer = new GroupCommitter(db);
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const results = await Promise.allSettled([
      committer.run(() => insert.run(1)),
      committer.run(() => {
        insert.run(2);
        throw new Error('second fails');
      }),
      committer.run(() => insert.run(3)),
      committer.run(() => insert.run(1)), // duplicate key: fails alone
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    expect(db.prepare('SELECT v FROM t ORDER BY v').all()).toEqual([{ v: 1 }, { v: 3 }]);
    expect(db.inTransaction).toBe(false);
    db.close();
  });
});

describe('SqliteStore', () => {
  it('creates a queued call and its dispatch job in one transaction, and a claim leases the job once', async () => {
    const store = openSqliteStore(join(dir, 'c.db'));
    const account = await store.accounts.getOrCreateDefault();
    expect((await store.accounts.getOrCreateDefault()).id).toBe(account.id);
    const { key, owner } = await createCallOwner(store, {
      account,
      key: { keyHash: 'h1' },
      agent: { firstMessage: '' },
    });
    const call = await store.calls.createQueued(
      newQueuedCall(owner, { id: 'call_01HZZZZZZZZZZZZZZZZZZZZZZZ' }),
    );
    expect(call?.status).toBe('queued');
    const first = await store.queue.claim(queueNames.dispatch, 'worker-a', 10, 60_000);
    expect(first.map((job) => job.payload)).toEqual([{ call_id: call?.id }]);
    expect(await store.queue.claim(queueNames.dispatch, 'worker-b', 10, 60_000)).toEqual([]);
    await store.queue.complete(first[0]!.id);
    expect(await store.queue.depth(queueNames.dispatch)).toEqual({ count: 0, oldestRunAtMs: null });

    await store.apiKeys.revoke(account.id, key.id, new Date().toISOString());
    const refused = await store.calls.createQueued(
      newQueuedCall(owner, { id: 'call_01HZZZZZZZZZZZZZZZZZZZZZZY' }),
    );
    expect(refused).toBeNull();
    expect(await store.queue.depth(queueNames.dispatch)).toEqual({ count: 0, oldestRunAtMs: null });
    await store.close();
  });
});
