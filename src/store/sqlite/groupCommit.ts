import type { SqliteDatabase } from './database.js';

interface PendingWork {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: write work queued in the same turn of the event loop runs in one transaction,
 * so one fsync makes many requests durable. Each piece of work runs in its own savepoint: one
 * that throws is rolled back alone and rejects alone. Promises settle only after COMMIT.
 */
export class GroupCommitter {
  private pending: PendingWork[] = [];
  private scheduled = false;
  private readonly db: SqliteDatabase;
  private readonly maxBatch: number;
  private readonly statements;

  constructor(db: SqliteDatabase, maxBatch = 256) {
    this.db = db;
    this.maxBatch = maxBatch;
    // Prepared once: these run several times per batch on the request path.
    this.statements = {
      begin: db.prepare('BEGIN IMMEDIATE'),
      savepoint: db.prepare('SAVEPOINT work'),
      release: db.prepare('RELEASE work'),
      rollbackToSavepoint: db.prepare('ROLLBACK TO work'),
      commit: db.prepare('COMMIT'),
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

  /** Runs everything still pending; used before close. */
  flush(): void {
    this.scheduled = false;
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.maxBatch);
      this.commitBatch(batch);
    }
  }

  private commitBatch(batch: PendingWork[]): void {
    const outcomes: { ok: boolean; value: unknown }[] = [];
    const { begin, savepoint, release, rollbackToSavepoint, commit } = this.statements;
    try {
      begin.run();
    } catch (error) {
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
    }
    batch.forEach((work, index) => {
      const outcome = outcomes[index];
      if (outcome?.ok) work.resolve(outcome.value);
      else work.reject(outcome?.value);
    });
  }
}
