/** A rate policy: `requests` per `windowS` seconds, refilled continuously (a token bucket). */
export interface RatePolicy {
  readonly requests: number;
  readonly windowS: number;
}

export interface TokenBucket {
  tokens: number;
  updatedAtMs: number;
}

export interface RateDecision {
  readonly allowed: boolean;
  /** Whole requests left now. */
  readonly remaining: number;
  /** Seconds until the bucket is full again. */
  readonly resetS: number;
  /** Seconds until one request is allowed (0 when allowed). */
  readonly retryAfterS: number;
}

/** Parses `<requests>/<seconds>s`, e.g. `100/10s`. Returns null when malformed. */
export function parseRatePolicy(text: string): RatePolicy | null {
  const match = /^([1-9][0-9]{0,8})\/([1-9][0-9]{0,6})s$/.exec(text.trim());
  if (!match) return null;
  return { requests: Number(match[1]), windowS: Number(match[2]) };
}

export function formatRatePolicy(policy: RatePolicy): string {
  return `${policy.requests}/${policy.windowS}s`;
}

/**
 * Takes one token from `bucket` (mutating it) under `policy` at `nowMs`. Pure arithmetic: the
 * caller keeps buckets wherever it likes (memory, a database row).
 */
export function takeToken(bucket: TokenBucket, policy: RatePolicy, nowMs: number): RateDecision {
  const refillPerMs = policy.requests / (policy.windowS * 1000);
  const elapsedMs = Math.max(0, nowMs - bucket.updatedAtMs);
  bucket.tokens = Math.min(policy.requests, bucket.tokens + elapsedMs * refillPerMs);
  bucket.updatedAtMs = nowMs;
  const allowed = bucket.tokens >= 1;
  if (allowed) bucket.tokens -= 1;
  const missing = policy.requests - bucket.tokens;
  return {
    allowed,
    remaining: Math.floor(bucket.tokens),
    resetS: Math.ceil(missing / refillPerMs / 1000),
    retryAfterS: allowed ? 0 : Math.max(1, Math.ceil((1 - bucket.tokens) / refillPerMs / 1000)),
  };
}

export function fullBucket(policy: RatePolicy, nowMs: number): TokenBucket {
  return { tokens: policy.requests, updatedAtMs: nowMs };
}
