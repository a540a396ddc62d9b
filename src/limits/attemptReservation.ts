import type { RateDecision, RatePolicy } from '../domain/rateLimit.js';
import type { RateLimiter } from './rateLimiter.js';

/** One failure limit an attempt counts against, e.g. per client address or per email. */
export interface AttemptBucket {
  key: string;
  policy: RatePolicy;
}

export interface AttemptReservation {
  /** False: a bucket was empty; nothing stays taken and the attempt must not be made. */
  readonly allowed: boolean;
  /** Each take's decision, in the order of the buckets, up to the one that refused. */
  readonly decisions: readonly RateDecision[];
  /** Seconds until the refusing bucket allows an attempt (0 when allowed). */
  readonly retryAfterS: number;
  /** The attempt did not fail (a sign-in that succeeded): its tokens go back to every bucket. */
  giveBack(): Promise<void>;
}

/**
 * Reserves one attempt in every bucket BEFORE the work the limits guard (a password hash, a key
 * lookup). Each take is atomic where its bucket lives (one process's memory, or one PostgreSQL
 * statement), so N concurrent attempts against a bucket of L tokens let at most L through, however
 * many processes serve them. Checking first and counting the failure after the work would let a
 * burst through: every attempt checks before any has failed.
 */
export async function reserveAttempt(
  limiter: RateLimiter,
  buckets: readonly AttemptBucket[],
): Promise<AttemptReservation> {
  const decisions: RateDecision[] = [];
  const taken: AttemptBucket[] = [];
  // Once only, whoever calls it twice.
  const giveBack = async () => {
    await Promise.all(taken.splice(0).map((bucket) => limiter.giveBack(bucket.key, bucket.policy)));
  };
  for (const bucket of buckets) {
    const decision = await limiter.take(bucket.key, bucket.policy);
    decisions.push(decision);
    if (!decision.allowed) {
      await giveBack();
      return { allowed: false, decisions, retryAfterS: decision.retryAfterS, giveBack };
    }
    taken.push(bucket);
  }
  return { allowed: true, decisions, retryAfterS: 0, giveBack };
}
