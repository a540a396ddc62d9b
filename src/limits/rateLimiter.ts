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

/** A bucket in memory, with the policy it was last taken under (to tell how full it is now). */
interface HeldBucket extends TokenBucket {
  policy: RatePolicy;
}

/** How full `held` is at `nowMs`, from 0 (empty) to 1 (refilled: the same as no bucket). */
function fillAt(held: HeldBucket, nowMs: number): number {
  const refillPerMs = held.policy.requests / (held.policy.windowS * 1000);
  const tokens = held.tokens + Math.max(0, nowMs - held.updatedAtMs) * refillPerMs;
  return Math.min(1, tokens / held.policy.requests);
}

/** Token buckets in a Map; full buckets are forgotten (a full bucket is the default state). */
export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, HeldBucket>();
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
      if (this.buckets.size >= this.maxBuckets) this.makeRoom(nowMs);
      bucket = { ...fullBucket(policy, nowMs), policy };
      this.buckets.set(bucketKey, bucket);
    }
    bucket.policy = policy;
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

  /**
   * Forgets every bucket that has refilled (it holds nothing); if the map is still full — a flood
   * of fresh keys, e.g. one per address — the fullest tenth, fullest first. The emptiest go last:
   * a flood cannot push out the bucket that holds an address or an email off right now.
   */
  private makeRoom(nowMs: number): void {
    for (const [key, held] of this.buckets) {
      if (fillAt(held, nowMs) >= 1) this.buckets.delete(key);
    }
    if (this.buckets.size < this.maxBuckets) return;
    // Each fill worked out once, not twice per comparison.
    const fullestFirst = [...this.buckets]
      .map(([key, held]) => ({ key, fill: fillAt(held, nowMs) }))
      .sort((a, b) => b.fill - a.fill);
    for (const { key } of fullestFirst.slice(0, Math.max(1, Math.floor(this.maxBuckets / 10)))) {
      this.buckets.delete(key);
    }
  }
}
