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
