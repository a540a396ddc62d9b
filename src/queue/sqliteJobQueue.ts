import type Database from 'better-sqlite3';
import type { Job, JobQueue, NewJob, PendingJob, SynchronousJobWriter } from './types.js';

interface JobRow {
  id: number;
  queue: string;
  payload: string;
  attempts: number;
  run_at_ms: number;
}

/** The embedded queue: a `jobs` table in the service's SQLite file, next to the rows it serves. */
export class SqliteJobQueue implements JobQueue, SynchronousJobWriter {
  private readonly insertStatement;
  private readonly claimStatement;
  private readonly completeStatement;
  private readonly retryStatement;
  private readonly depthStatement;
  private readonly byPayloadStatement;
  private readonly db: Database.Database;

  constructor(db: Database.Database) {
    this.db = db;
    this.insertStatement = db.prepare(
      'INSERT INTO jobs (queue, payload, run_at_ms, created_at) VALUES (?, ?, ?, ?)',
    );
    this.claimStatement = db.prepare(
      `UPDATE jobs SET locked_by = ?, locked_until_ms = ?, attempts = attempts + 1
       WHERE id IN (
         SELECT id FROM jobs
         WHERE queue = ? AND run_at_ms <= ? AND (locked_until_ms IS NULL OR locked_until_ms < ?)
         ORDER BY run_at_ms, id LIMIT ?)
       RETURNING id, queue, payload, attempts, run_at_ms`,
    );
    this.completeStatement = db.prepare('DELETE FROM jobs WHERE id = ?');
    this.retryStatement = db.prepare(
      'UPDATE jobs SET run_at_ms = ?, locked_by = NULL, locked_until_ms = NULL WHERE id = ?',
    );
    this.byPayloadStatement = db.prepare(
      'SELECT id, locked_until_ms FROM jobs WHERE queue = ? AND payload = ? ORDER BY id',
    );
    this.depthStatement = db.prepare(
      'SELECT COUNT(*) AS count, MIN(run_at_ms) AS oldest FROM jobs WHERE queue = ?',
    );
  }

  /** Inserts a job; synchronous so a store can call it inside its own transaction. */
  insertWithinTransaction(job: NewJob): string {
    if (!this.db.inTransaction) throw new Error('insertWithinTransaction needs an open transaction');
    const result = this.insertStatement.run(
      job.queue,
      JSON.stringify(job.payload),
      job.runAtMs,
      new Date().toISOString(),
    );
    return String(result.lastInsertRowid);
  }

  /** Removes a job inside the caller's transaction (an outcome written with its job). */
  completeWithinTransaction(jobId: string): void {
    this.completeStatement.run(Number(jobId));
  }

  /** Unlocks a job to run at `runAtMs`, inside the caller's transaction. */
  retryAtWithinTransaction(jobId: string, runAtMs: number): void {
    this.retryStatement.run(runAtMs, Number(jobId));
  }

  /** The jobs of `queue` with exactly this payload (e.g. the delivery job of one event). */
  findByPayload(queue: string, payload: Record<string, unknown>): PendingJob[] {
    const rows = this.byPayloadStatement.all(queue, JSON.stringify(payload)) as {
      id: number;
      locked_until_ms: number | null;
    }[];
    return rows.map((row) => ({ id: String(row.id), lockedUntilMs: row.locked_until_ms }));
  }

  async claim(queue: string, workerId: string, limit: number, leaseMs: number): Promise<Job[]> {
    const nowMs = Date.now();
    const rows = this.claimStatement.all(workerId, nowMs + leaseMs, queue, nowMs, nowMs, limit) as JobRow[];
    return rows
      .map((row) => ({
        id: String(row.id),
        queue: row.queue,
        payload: JSON.parse(row.payload) as Record<string, unknown>,
        attempts: row.attempts,
        runAtMs: row.run_at_ms,
      }))
      .sort((a, b) => a.runAtMs - b.runAtMs || Number(a.id) - Number(b.id));
  }

  async complete(jobId: string): Promise<void> {
    this.completeStatement.run(Number(jobId));
  }

  async retryAt(jobId: string, runAtMs: number): Promise<void> {
    this.retryStatement.run(runAtMs, Number(jobId));
  }

  async depth(queue: string): Promise<{ count: number; oldestRunAtMs: number | null }> {
    const row = this.depthStatement.get(queue) as { count: number; oldest: number | null };
    return { count: row.count, oldestRunAtMs: row.oldest };
  }
}
