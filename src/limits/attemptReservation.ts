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
  /** The refusing bucket's decision, or the last bucket's when all allowed (for headers). */
  readonly decision: RateDecision;
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
  buckets: readonly [AttemptBucket, ...AttemptBucket[]],
): Promise<AttemptReservation> {
  const taken: AttemptBucket[] = [];
  // Once only, whoever calls it twice.
  const giveBack = async () => {
    await Promise.all(taken.splice(0).map((bucket) => limiter.giveBack(bucket.key, bucket.policy)));
  };
  let decision: RateDecision | undefined;
  for (const bucket of buckets) {
    decision = await limiter.take(bucket.key, bucket.policy);
    if (!decision.allowed) {
      await giveBack();
      return { allowed: false, decision, giveBack };
    }
    taken.push(bucket);
  }
  // At least one bucket (the parameter's type), so a decision was made.
  return { allowed: true, decision: decision as RateDecision, giveBack };
}
