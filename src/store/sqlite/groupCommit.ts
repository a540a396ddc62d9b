import { closeSync, fsync, openSync } from 'node:fs';
import type { SqliteDatabase } from './database.js';

/** Makes what is in the database's write-ahead log durable; calls back when it is (or failed). */
export type WalSync = (done: (error: Error | null) => void) => void;

/**
 * fsync of the database's -wal file on libuv's thread pool, so the event loop serves other
 * requests while the disk works. An in-memory database has nothing to sync.
 */
export function walFileSync(db: SqliteDatabase): WalSync & { close(): void } {
  if (db.memory) return Object.assign((done: (error: Error | null) => void) => done(null), { close() {} });
  let fd: number | null = null;
  const sync = (done: (error: Error | null) => void) => {
    try {
      // The WAL exists from the first commit on; it is reused in place (never unlinked) while open.
      fd ??= openSync(`${db.name}-wal`, 'r');
    } catch (error) {
      done(error as Error);
      return;
    }
    fsync(fd, (error) => done(error));
  };
  return Object.assign(sync, {
    close() {
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  });
}

interface PendingWork {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: write work queued in the same turn of the event loop runs in one transaction,
 * so one fsync makes many requests durable. Each piece of work runs in its own savepoint: one
 * that throws is rolled back alone and rejects alone. Promises settle only after COMMIT and the
 * fsync of the write-ahead log that makes it durable.
 *
 * The batch commits with `synchronous = NORMAL` (the WAL written, not synced) and the connection
 * goes back to FULL at once; the WAL is then fsynced off the event loop (`WalSync`) and only then
 * are the batch's promises resolved. On disk this is what FULL does at COMMIT (the frames, then an
 * fsync of the WAL; a checkpoint under NORMAL syncs the WAL before it copies frames and the
 * database after) — but the fsync no longer blocks every other request for its duration
 * (docs/decisions.md, "Group commit's fsync off the event loop").
 */
export class GroupCommitter {
  private pending: PendingWork[] = [];
  private scheduled = false;
  private readonly db: SqliteDatabase;
  private readonly maxBatch: number;
  private readonly statements;

  private readonly walSync: WalSync & { close?(): void };
  private syncsInFlight = 0;
  private syncsDone: (() => void)[] = [];

  constructor(db: SqliteDatabase, options: { maxBatch?: number; walSync?: WalSync } = {}) {
    this.db = db;
    this.maxBatch = options.maxBatch ?? 256;
    this.walSync = options.walSync ?? walFileSync(db);
    // Prepared once: these run several times per batch on the request path.
    this.statements = {
      begin: db.prepare('BEGIN IMMEDIATE'),
      savepoint: db.prepare('SAVEPOINT work'),
      release: db.prepare('RELEASE work'),
      rollbackToSavepoint: db.prepare('ROLLBACK TO work'),
      commit: db.prepare('COMMIT'),
      unsyncedCommits: db.prepare('PRAGMA synchronous = NORMAL'),
      syncedCommits: db.prepare('PRAGMA synchronous = FULL'),
    };
  }

  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ run: work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Runs everything still pending and waits for its fsync; then releases the WAL's descriptor. */
  async close(): Promise<void> {
    this.flush();
    while (this.syncsInFlight > 0) await new Promise<void>((resolve) => this.syncsDone.push(resolve));
    this.walSync.close?.();
  }

  /** Runs everything still pending (its promises settle once the WAL is synced). */
  flush(): void {
    this.scheduled = false;
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.maxBatch);
      this.commitBatch(batch);
    }
  }

  private commitBatch(batch: PendingWork[]): void {
    const outcomes: { ok: boolean; value: unknown }[] = [];
    const { begin, savepoint, release, rollbackToSavepoint, commit, unsyncedCommits, syncedCommits } =
      this.statements;
    try {
      unsyncedCommits.run();
      begin.run();
    } catch (error) {
      syncedCommits.run();
      for (const work of batch) work.reject(error);
      return;
    }
    try {
      for (const work of batch) {
        savepoint.run();
        try {
          outcomes.push({ ok: true, value: work.run() });
          release.run();
        } catch (error) {
          rollbackToSavepoint.run();
          release.run();
          outcomes.push({ ok: false, value: error });
        }
      }
      commit.run();
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      for (const work of batch) work.reject(error);
      return;
    } finally {
      syncedCommits.run();
    }
    this.syncsInFlight++;
    this.walSync((error) => {
      batch.forEach((work, index) => {
        const outcome = outcomes[index];
        if (error) work.reject(error);
        else if (outcome?.ok) work.resolve(outcome.value);
        else work.reject(outcome?.value);
      });
      this.syncsInFlight--;
      if (this.syncsInFlight === 0) for (const done of this.syncsDone.splice(0)) done();
    });
  }
}
