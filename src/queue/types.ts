/** The durable job queue port: call dispatch now, webhook delivery later. */

export const queueNames = {
  dispatch: 'call.dispatch',
  webhook: 'webhook.deliver',
} as const;

export interface Job {
  id: string;
  queue: string;
  payload: Record<string, unknown>;
  attempts: number;
  runAtMs: number;
}

export interface NewJob {
  queue: string;
  payload: Record<string, unknown>;
  runAtMs: number;
}

export interface JobQueue {
  /**
   * Locks up to `limit` jobs of `queue` that are due (and not locked by a live lease) for
   * `leaseMs`, counting an attempt on each. Two workers never hold the same job at once.
   */
  claim(queue: string, workerId: string, limit: number, leaseMs: number): Promise<Job[]>;
  /** Removes a finished job. */
  complete(jobId: string): Promise<void>;
  /** Unlocks a job to run again at `runAtMs`. */
  retryAt(jobId: string, runAtMs: number): Promise<void>;
  /** How many jobs wait in `queue`, and since when the oldest is due. */
  depth(queue: string): Promise<{ count: number; oldestRunAtMs: number | null }>;
}

/** An unfinished job found by its payload, and until when a worker holds it (null: waiting). */
export interface PendingJob {
  id: string;
  lockedUntilMs: number | null;
}

/**
 * The transactional enqueue seam: a store that keeps its queue in the same database is given one
 * of these at construction. The store owns the transaction and hands over its handle; the queue
 * adds, settles or finds its own rows through it, so a record and its job commit or roll back
 * together. Neither side imports the other: the store knows this interface, the queue implements
 * it, and src/openStore.ts wires the two. `Transaction` is the dialect's handle (a pg client).
 */
export interface TransactionalJobWriter<Transaction> {
  /** Inserts a job; resolves to its id. */
  insertWithinTransaction(transaction: Transaction, job: NewJob): Promise<string>;
  /** Inserts several jobs with one statement. */
  insertManyWithinTransaction(transaction: Transaction, jobs: readonly NewJob[]): Promise<void>;
  completeWithinTransaction(transaction: Transaction, jobId: string): Promise<void>;
  retryAtWithinTransaction(transaction: Transaction, jobId: string, runAtMs: number): Promise<void>;
  /** The unfinished jobs of `queue` with exactly this payload (e.g. the delivery job of one event). */
  findByPayload(
    transaction: Transaction,
    queue: string,
    payload: Record<string, unknown>,
  ): Promise<PendingJob[]>;
  /**
   * Deletes the finished jobs of `queue` with exactly one of these payloads (a queue that keeps
   * finished jobs for a while: an erasure must not leave a call id in them). Resolves to how many.
   */
  forgetFinished(
    transaction: Transaction,
    queue: string,
    payloads: readonly Record<string, unknown>[],
  ): Promise<number>;
}

/**
 * The same seam for SQLite, whose transactions are synchronous on the one connection the store and
 * its queue share: each call runs inside the transaction the store has open, and returns at once.
 */
export interface SynchronousJobWriter {
  insertWithinTransaction(job: NewJob): string;
  completeWithinTransaction(jobId: string): void;
  retryAtWithinTransaction(jobId: string, runAtMs: number): void;
  findByPayload(queue: string, payload: Record<string, unknown>): PendingJob[];
}
