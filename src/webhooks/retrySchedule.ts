/**
 * When to try a webhook delivery again: at once, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and
 * 10 h, each delay with ±10% jitter so that endpoints recovering from an outage are not hit by
 * every pending event at the same instant. A later Retry-After from the endpoint is honoured.
 */
import { AppError } from '../domain/errors.js';

const secondMs = 1000;
const minuteMs = 60 * secondMs;
const hourMs = 60 * minuteMs;

/** Delay before each attempt, by attempt index (the first attempt is immediate). */
export const deliveryAttemptDelaysMs: readonly number[] = [
  0,
  5 * secondMs,
  5 * minuteMs,
  30 * minuteMs,
  2 * hourMs,
  5 * hourMs,
  10 * hourMs,
  10 * hourMs,
];
export const maxDeliveryAttempts = deliveryAttemptDelaysMs.length;
export const retryJitterFraction = 0.1;
/** A Retry-After never postpones an attempt by more than this. */
export const maxRetryAfterMs = 24 * hourMs;

export interface NextAttemptOptions {
  /** Retry-After of the last response, if any. */
  retryAfterMs?: number | null;
  /** Uniform source in [0, 1); defaults to Math.random. */
  random?: () => number;
}

/**
 * Milliseconds to wait before the next attempt, given how many attempts were already made, or
 * null when the schedule is exhausted. `attemptsMade` 0 gives 0 (the first attempt is immediate).
 */
export function nextAttemptDelayMs(attemptsMade: number, options: NextAttemptOptions = {}): number | null {
  if (!Number.isSafeInteger(attemptsMade) || attemptsMade < 0) {
    throw new AppError(
      'validation_error',
      `attemptsMade must be a non-negative integer, got ${attemptsMade}`,
    );
  }
  const scheduledMs = deliveryAttemptDelaysMs[attemptsMade];
  if (scheduledMs === undefined) return null;

  const randomUnit = Math.min(Math.max((options.random ?? Math.random)(), 0), 1);
  const jitterFactor = 1 + (randomUnit * 2 - 1) * retryJitterFraction;
  const jitteredMs = Math.round(scheduledMs * jitterFactor);

  const retryAfterMs = options.retryAfterMs;
  if (retryAfterMs === undefined || retryAfterMs === null || !Number.isFinite(retryAfterMs))
    return jitteredMs;
  return Math.max(jitteredMs, Math.min(Math.max(retryAfterMs, 0), maxRetryAfterMs));
}
