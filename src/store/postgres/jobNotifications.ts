import pg from 'pg';
import type { Logger } from '../../logger.js';
import type { PgPool } from './database.js';

/** The channel whose notifications wake workers early; correctness never depends on them. */
export const jobNotifyChannel = 'callwright_jobs';

/**
 * Hints workers in every process that `queue` has a job. Sent after the commit: a NOTIFY inside
 * the transaction would serialise every committing transaction on the notification queue.
 */
export function notifyJobs(pool: PgPool, queue: string): void {
  pool.query('SELECT pg_notify($1, $2)', [jobNotifyChannel, queue]).catch(() => undefined);
}

/**
 * Wake-up hints across processes: one connection LISTENs on the channel the stores notify when
 * they commit a job, and calls `onJob` with the queue's name. Only a hint — workers still poll,
 * and `SKIP LOCKED` decides who gets a job — so a lost connection is retried quietly.
 */
export function listenForJobs(options: {
  connectionString: string;
  logger: Logger;
  onJob: (queue: string) => void;
  retryMs?: number;
}): { close(): Promise<void> } {
  let client: pg.Client | null = null;
  let closed = false;
  let retryTimer: NodeJS.Timeout | null = null;

  const connect = async () => {
    if (closed) return;
    const next = new pg.Client({ connectionString: options.connectionString });
    next.on('notification', (message) => {
      if (message.channel === jobNotifyChannel && message.payload) options.onJob(message.payload);
    });
    next.on('error', (error) => {
      options.logger.warn({ err: error }, 'job notification connection lost; workers keep polling');
      void next.end().catch(() => undefined);
      if (client === next) client = null;
      scheduleRetry();
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${jobNotifyChannel}`);
      if (closed) await next.end();
      else client = next;
    } catch (error) {
      options.logger.warn({ err: error }, 'cannot listen for job notifications; workers keep polling');
      await next.end().catch(() => undefined);
      scheduleRetry();
    }
  };
  const scheduleRetry = () => {
    if (closed || retryTimer) return;
    retryTimer = setTimeout(() => {
      retryTimer = null;
      void connect();
    }, options.retryMs ?? 2_000);
    retryTimer.unref();
  };
  void connect();
  return {
    async close() {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      await client?.end().catch(() => undefined);
      client = null;
    },
  };
}
