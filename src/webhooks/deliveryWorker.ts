/**
 * The durable webhook delivery worker. Everything it knows lives in the database: the event row
 * (the exact bytes to send), its `webhook.deliver` job, the endpoint. It claims due jobs, signs
 * the stored body with the endpoint's active secrets, makes one bounded attempt, and writes the
 * attempt with its outcome (delivered, rescheduled, failed, or endpoint gone) in one transaction.
 * A process that stops, cleanly or not, loses nothing: an unfinished job is claimed again.
 */

import type { Tracer } from '@opentelemetry/api';
import type { EventRecord, WebhookEndpointRecord } from '../domain/records.js';
import type { Logger } from '../logger.js';
import type { Job, JobQueue } from '../queue/types.js';
import { queueNames } from '../queue/types.js';
import type { SecretBox } from '../secrets/secretBox.js';
import { openStoredSecret } from '../secrets/secretsAtRest.js';
import type { AttemptOutcome, EventRepository, WebhookEndpointRepository } from '../store/types.js';
import { recordWebhookAttempt } from '../telemetry/webhookSpans.js';
import { type DeliveryAttemptResult, defaultDeliveryTimeoutMs, deliverOnce } from './httpDelivery.js';
import { nextAttemptDelayMs } from './retrySchedule.js';
import { webhookHeaders } from './signing.js';
import type { HostnameLookup } from './urlGuard.js';

/** Delay before the next attempt after `attemptsMade` attempts, or null when the schedule is exhausted. */
export type RetryDelayPolicy = (attemptsMade: number, retryAfterMs: number | null) => number | null;

export const defaultRetryDelay: RetryDelayPolicy = (attemptsMade, retryAfterMs) =>
  nextAttemptDelayMs(attemptsMade, { retryAfterMs });

export interface DeliveryWorkerOptions {
  events: EventRepository;
  endpoints: WebhookEndpointRepository;
  queue: JobQueue;
  logger: Logger;
  /** Opens the endpoints' sealed signing secrets. */
  secretBox: SecretBox;
  /** Deliver to private, loopback and link-local addresses (CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  workerId: string;
  /** Fallback poll when nothing wakes the worker. */
  pollIntervalMs?: number;
  /** Attempts in flight at most. */
  concurrency?: number;
  /** Deadline of one attempt. */
  timeoutMs?: number;
  retryDelay?: RetryDelayPolicy;
  lookup?: HostnameLookup;
  /** Each attempt becomes a span in its call's trace (src/telemetry/webhookSpans.ts); absent: none. */
  tracer?: Tracer;
}

export const maxResponseExcerptChars = 1024;

export interface DeliveryWorker {
  /** A hint that an event was written: poll now rather than at the next tick. */
  wake(): void;
  /** Stops claiming, waits for attempts in flight (each bounded by the timeout). */
  stop(): Promise<void>;
  readonly inFlight: number;
}

/** The secrets that sign now: the current one, and the previous one until it expires. */
export function activeSecrets(
  endpoint: WebhookEndpointRecord,
  nowMs: number,
  secretBox: SecretBox,
): string[] {
  const secrets = [openStoredSecret(secretBox, endpoint.secretCiphertext)];
  const expiresAt = endpoint.previousSecretExpiresAt;
  if (endpoint.previousSecretCiphertext && expiresAt && Date.parse(expiresAt) > nowMs)
    secrets.push(openStoredSecret(secretBox, endpoint.previousSecretCiphertext));
  return secrets;
}

function outcomeOf(
  result: DeliveryAttemptResult,
  attemptsMade: number,
  retryDelay: RetryDelayPolicy,
  nowMs: number,
): AttemptOutcome {
  if (result.ok) return { kind: 'delivered' };
  if (result.gone) return { kind: 'gone', reason: 'the endpoint answered 410 Gone' };
  const delayMs = retryDelay(attemptsMade, result.retryAfterMs);
  return delayMs === null ? { kind: 'failed' } : { kind: 'retry', runAtMs: nowMs + delayMs };
}

export function startDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const logger = options.logger.child({ component: 'webhooks' });
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  const concurrency = options.concurrency ?? 64;
  const timeoutMs = options.timeoutMs ?? defaultDeliveryTimeoutMs;
  const retryDelay = options.retryDelay ?? defaultRetryDelay;
  // A job whose worker died becomes claimable again once the attempt could not still be running.
  const leaseMs = timeoutMs + 30_000;
  const running = new Set<Promise<void>>();
  let stopped = false;
  let polling = false;
  let pollAgain = false;
  let timer: NodeJS.Timeout | null = null;

  async function deliver(job: Job): Promise<void> {
    const eventId = typeof job.payload.event_id === 'string' ? job.payload.event_id : '';
    const event = await options.events.getById(eventId);
    if (!event || event.status === 'delivered' || event.status === 'failed') {
      await options.queue.complete(job.id);
      return;
    }
    const endpoint = await options.endpoints.get(event.accountId);
    if (!endpoint?.enabled) {
      if (await options.events.park(event.id, job.id)) {
        logger.info({ eventId: event.id, accountId: event.accountId }, 'event parked: no enabled endpoint');
      } else {
        await options.queue.retryAt(job.id, Date.now());
      }
      return;
    }
    await attempt(job, event, endpoint);
  }

  async function attempt(job: Job, event: EventRecord, endpoint: WebhookEndpointRecord): Promise<void> {
    const attemptedAtMs = Date.now();
    const headers = webhookHeaders({
      secrets: activeSecrets(endpoint, attemptedAtMs, options.secretBox),
      id: event.id,
      timestampS: Math.floor(attemptedAtMs / 1000),
      body: event.body,
    });
    const result = await deliverOnce({
      url: endpoint.url,
      body: event.body,
      headers,
      timeoutMs,
      allowPrivate: options.allowPrivate,
      ...(options.lookup ? { lookup: options.lookup } : {}),
    });
    const attemptEndedAtMs = Date.now();
    const outcome = outcomeOf(result, event.attempts + 1, retryDelay, attemptEndedAtMs);
    if (options.tracer)
      recordWebhookAttempt(options.tracer, {
        eventId: event.id,
        eventType: event.type,
        callId: event.callId,
        attempt: event.attempts + 1,
        startedAtMs: attemptedAtMs,
        endedAtMs: attemptEndedAtMs,
        statusCode: result.status,
        outcome: outcome.kind,
        errorKind: result.ok ? null : result.status === null ? 'no_response' : `http_${result.status}`,
      });
    await options.events.recordAttempt(
      job.id,
      {
        eventId: event.id,
        attemptedAt: new Date(attemptedAtMs).toISOString(),
        url: endpoint.url,
        statusCode: result.status,
        latencyMs: result.latencyMs,
        responseExcerpt: result.responseExcerpt.slice(0, maxResponseExcerptChars),
        error: result.error,
      },
      outcome,
    );
    // A retry due before the next regular poll gets its own wake-up.
    if (outcome.kind === 'retry') wakeAt(outcome.runAtMs);
    const fields = {
      eventId: event.id,
      accountId: event.accountId,
      attempt: event.attempts + 1,
      status: result.status,
      latencyMs: result.latencyMs,
      outcome: outcome.kind,
    };
    if (outcome.kind === 'delivered') logger.debug(fields, 'webhook delivered');
    else if (outcome.kind === 'gone') logger.warn(fields, 'webhook endpoint answered 410: disabled');
    else logger.info({ ...fields, error: result.error }, 'webhook attempt failed');
  }

  function track(job: Job): void {
    const work = deliver(job)
      .catch((error: unknown) => {
        logger.error({ err: error, jobId: job.id }, 'webhook delivery job failed; it will be retried');
        return options.queue.retryAt(job.id, Date.now() + pollIntervalMs * 4).catch(() => undefined);
      })
      .finally(() => {
        running.delete(work);
        // Refill in batches: one claim (one fsync) for many free slots, not one per finished job.
        if (running.size <= concurrency / 2) schedulePoll(0);
      });
    running.add(work);
  }

  async function claimDue(): Promise<void> {
    const room = concurrency - running.size;
    if (room <= 0 || stopped) return;
    const jobs = await options.queue.claim(queueNames.webhook, options.workerId, room, leaseMs);
    for (const job of jobs) track(job);
    if (jobs.length === room) pollAgain = true;
  }

  async function poll(): Promise<void> {
    if (polling) {
      pollAgain = true;
      return;
    }
    polling = true;
    try {
      do {
        pollAgain = false;
        await claimDue();
      } while (pollAgain && !stopped && running.size < concurrency);
    } catch (error) {
      logger.error({ err: error }, 'webhook poll failed');
    } finally {
      polling = false;
      schedulePoll(pollIntervalMs);
    }
  }

  const retryTimers = new Set<NodeJS.Timeout>();
  function wakeAt(runAtMs: number): void {
    const delayMs = runAtMs - Date.now();
    if (stopped || delayMs >= pollIntervalMs) return;
    const retryTimer = setTimeout(
      () => {
        retryTimers.delete(retryTimer);
        schedulePoll(0);
      },
      Math.max(0, delayMs),
    );
    retryTimers.add(retryTimer);
  }

  let timerDueMs = 0;
  /** Polls after `delayMs`, unless a poll is already due sooner. */
  function schedulePoll(delayMs: number): void {
    if (stopped) return;
    const dueMs = Date.now() + delayMs;
    if (timer) {
      if (timerDueMs <= dueMs) return;
      clearTimeout(timer);
    }
    timerDueMs = dueMs;
    timer = setTimeout(() => {
      timer = null;
      void poll();
    }, delayMs);
  }

  schedulePoll(0);
  return {
    wake() {
      schedulePoll(0);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      for (const retryTimer of retryTimers) clearTimeout(retryTimer);
      retryTimers.clear();
      while (running.size > 0) await Promise.allSettled([...running]);
    },
    get inFlight() {
      return running.size;
    },
  };
}
