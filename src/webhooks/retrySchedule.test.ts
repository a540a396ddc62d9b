import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../domain/errors.js';
import { maxDeliveryAttempts, maxRetryAfterMs, nextAttemptDelayMs } from './retrySchedule.js';

const second = 1000;
const minute = 60 * second;
const hour = 60 * minute;
const noJitter = () => 0.5;
const lowestJitter = () => 0;
const highestJitter = () => 0.999_999_999;

describe('nextAttemptDelayMs', () => {
  it('follows at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then stops', () => {
    const delays = Array.from({ length: 10 }, (_, attemptsMade) =>
      nextAttemptDelayMs(attemptsMade, { random: noJitter }),
    );
    expect(delays).toEqual([
      0,
      5 * second,
      5 * minute,
      30 * minute,
      2 * hour,
      5 * hour,
      10 * hour,
      10 * hour,
      null,
      null,
    ]);
    expect(maxDeliveryAttempts).toBe(8);
  });

  it('jitters by at most 10% either way', () => {
    expect(nextAttemptDelayMs(1, { random: lowestJitter })).toBe(4500);
    expect(nextAttemptDelayMs(1, { random: highestJitter })).toBe(5500);
    expect(nextAttemptDelayMs(4, { random: lowestJitter })).toBe(6_480_000);
    expect(nextAttemptDelayMs(4, { random: highestJitter })).toBe(7_920_000);
  });

  it('stays within the jitter band for any random value and attempt', () => {
    const scheduledMs = [0, 5 * second, 5 * minute, 30 * minute, 2 * hour, 5 * hour, 10 * hour, 10 * hour];
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 7 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attemptsMade, randomValue) => {
          const delayMs = nextAttemptDelayMs(attemptsMade, { random: () => randomValue });
          const planned = scheduledMs[attemptsMade] ?? Number.NaN;
          expect(delayMs).not.toBeNull();
          expect(delayMs).toBeGreaterThanOrEqual(Math.floor(planned * 0.9));
          expect(delayMs).toBeLessThanOrEqual(Math.ceil(planned * 1.1));
        },
      ),
    );
  });

  it('spreads delays with the default random source', () => {
    const delays = new Set(Array.from({ length: 20 }, () => nextAttemptDelayMs(3)));
    expect(delays.size).toBeGreaterThan(1);
  });

  it('waits for a Retry-After that is later than the schedule', () => {
    expect(nextAttemptDelayMs(1, { random: noJitter, retryAfterMs: 60 * second })).toBe(60 * second);
    expect(nextAttemptDelayMs(6, { random: noJitter, retryAfterMs: 12 * hour })).toBe(12 * hour);
  });

  it('keeps the schedule when Retry-After is sooner, absent or unreadable', () => {
    expect(nextAttemptDelayMs(3, { random: noJitter, retryAfterMs: 10 * second })).toBe(30 * minute);
    expect(nextAttemptDelayMs(3, { random: noJitter, retryAfterMs: null })).toBe(30 * minute);
    expect(nextAttemptDelayMs(3, { random: noJitter, retryAfterMs: Number.NaN })).toBe(30 * minute);
    expect(nextAttemptDelayMs(3, { random: noJitter, retryAfterMs: -5 })).toBe(30 * minute);
  });

  it('caps Retry-After at 24 h', () => {
    expect(maxRetryAfterMs).toBe(24 * hour);
    expect(nextAttemptDelayMs(1, { random: noJitter, retryAfterMs: 30 * 24 * hour })).toBe(24 * hour);
    expect(nextAttemptDelayMs(1, { random: noJitter, retryAfterMs: Number.POSITIVE_INFINITY })).toBe(
      5 * second,
    );
  });

  it('does not extend an exhausted schedule for a Retry-After', () => {
    expect(nextAttemptDelayMs(8, { random: noJitter, retryAfterMs: minute })).toBeNull();
  });

  it('refuses a negative or fractional attempt count', () => {
    for (const attemptsMade of [-1, 1.5, Number.NaN]) {
      expect(() => nextAttemptDelayMs(attemptsMade)).toThrow(AppError);
    }
  });
});
