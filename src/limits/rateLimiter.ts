import {
  fullBucket,
  type RateDecision,
  type RatePolicy,
  type TokenBucket,
  takeToken,
} from '../domain/rateLimit.js';

/**
 * Where token buckets live. The embedded mode keeps them in process memory; a scale-out mode
 * keeps them where every process sees them.
 */
export interface RateLimiter {
  /** Takes one token from the bucket `bucketKey`. */
  take(bucketKey: string, policy: RatePolicy): Promise<RateDecision>;
  /** Looks at the bucket without taking from it. */
  peek(bucketKey: string, policy: RatePolicy): Promise<RateDecision>;
  /**
   * Puts back one token a `take` reserved for an attempt that turned out not to count (a sign-in
   * that succeeded). Never fills the bucket beyond its size.
   */
  giveBack(bucketKey: string, policy: RatePolicy): Promise<void>;
}

/** Token buckets in a Map; full buckets are forgotten (a full bucket is the default state). */
export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly maxBuckets: number;
  private readonly now: () => number;

  constructor(options: { maxBuckets?: number; now?: () => number } = {}) {
    this.maxBuckets = options.maxBuckets ?? 100_000;
    this.now = options.now ?? Date.now;
  }

  async take(bucketKey: string, policy: RatePolicy): Promise<RateDecision> {
    const nowMs = this.now();
    let bucket = this.buckets.get(bucketKey);
    if (!bucket) {
      if (this.buckets.size >= this.maxBuckets) this.forgetFullBuckets(nowMs);
      bucket = fullBucket(policy, nowMs);
      this.buckets.set(bucketKey, bucket);
    }
    return takeToken(bucket, policy, nowMs);
  }

  async peek(bucketKey: string, policy: RatePolicy): Promise<RateDecision> {
    const bucket = this.buckets.get(bucketKey);
    const copy = bucket ? { ...bucket } : fullBucket(policy, this.now());
    // Peeking is taking from a copy and giving the token back.
    const decision = takeToken(copy, policy, this.now());
    return decision.allowed ? { ...decision, remaining: decision.remaining + 1 } : decision;
  }

  async giveBack(bucketKey: string, policy: RatePolicy): Promise<void> {
    const bucket = this.buckets.get(bucketKey);
    if (bucket) bucket.tokens = Math.min(policy.requests, bucket.tokens + 1);
  }

  private forgetFullBuckets(nowMs: number): void {
    for (const [key, bucket] of this.buckets) {
      // A bucket idle for an hour has refilled under any policy with a window of an hour or less;
      // forgetting one under a longer window only lets that client start afresh.
      if (nowMs - bucket.updatedAtMs > 3_600_000) this.buckets.delete(key);
    }
    if (this.buckets.size >= this.maxBuckets) {
      const oldest = this.buckets.keys().next();
      if (!oldest.done) this.buckets.delete(oldest.value);
    }
  }
}
