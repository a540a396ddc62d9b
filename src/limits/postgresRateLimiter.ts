import { type RateDecision, type RatePolicy, takeToken } from '../domain/rateLimit.js';
import type { PgPool } from '../store/postgres/database.js';
import type { RateLimiter } from './rateLimiter.js';

/** The database clock in ms: one clock for every process, whatever their machines' skew. */
const dbNowMs = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

/**
 * Token buckets in PostgreSQL (`rate_buckets`), so an account's rate limit and an address's
 * auth-failure limit hold across every API process. A take is one atomic statement: insert a
 * full bucket less one token, or refill-and-take on the existing row under its row lock.
 */
export class PostgresRateLimiter implements RateLimiter {
  private takesSincePrune = 0;

  constructor(
    private readonly pool: PgPool,
    private readonly pruneEveryTakes = 1_000,
  ) {}

  /**
   * Whether these buckets are `store`'s own (the same pool): then the store's one-round-trip call
   * creation, which takes from the same rows, counts against the same limits as every other route.
   */
  keepsBucketsIn(store: object): boolean {
    return 'pool' in store && store.pool === this.pool;
  }

  async take(bucketKey: string, policy: RatePolicy): Promise<RateDecision> {
    const refillPerMs = policy.requests / (policy.windowS * 1000);
    const refilled = `LEAST($2::float8, b.tokens + GREATEST(0, ${dbNowMs} - b.updated_at_ms) * $3::float8)`;
    const { rows } = await this.pool.query<{ tokens: number; updated_at_ms: string; allowed: boolean }>(
      `INSERT INTO rate_buckets AS b (bucket_key, tokens, updated_at_ms, allowed)
       VALUES ($1, $2::float8 - 1, ${dbNowMs}, true)
       ON CONFLICT (bucket_key) DO UPDATE SET
         tokens = CASE WHEN ${refilled} >= 1 THEN ${refilled} - 1 ELSE ${refilled} END,
         allowed = ${refilled} >= 1,
         updated_at_ms = GREATEST(b.updated_at_ms, ${dbNowMs})
       RETURNING tokens, updated_at_ms, allowed`,
      [bucketKey, policy.requests, refillPerMs],
    );
    this.maybePrune();
    const row = rows[0];
    if (!row) throw new Error('rate bucket update returned nothing');
    const missing = policy.requests - row.tokens;
    return {
      allowed: row.allowed,
      remaining: Math.floor(row.tokens),
      resetS: Math.ceil(missing / refillPerMs / 1000),
      retryAfterS: row.allowed ? 0 : Math.max(1, Math.ceil((1 - row.tokens) / refillPerMs / 1000)),
    };
  }

  async peek(bucketKey: string, policy: RatePolicy): Promise<RateDecision> {
    const { rows } = await this.pool.query<{
      tokens: number | null;
      updated_at_ms: string | null;
      now_ms: string;
    }>(
      `SELECT b.tokens, b.updated_at_ms, ${dbNowMs} AS now_ms
       FROM (SELECT 1) AS one LEFT JOIN rate_buckets b ON b.bucket_key = $1`,
      [bucketKey],
    );
    const row = rows[0];
    const nowMs = Number(row?.now_ms ?? Date.now());
    const bucket =
      row?.tokens !== null && row?.tokens !== undefined
        ? { tokens: row.tokens, updatedAtMs: Number(row.updated_at_ms) }
        : { tokens: policy.requests, updatedAtMs: nowMs };
    // Peeking is taking from a copy and giving the token back.
    const decision = takeToken(bucket, policy, nowMs);
    return decision.allowed ? { ...decision, remaining: decision.remaining + 1 } : decision;
  }

  async giveBack(bucketKey: string, policy: RatePolicy): Promise<void> {
    // Adding before the refill is the same as after it: the refill is capped at the same size.
    await this.pool.query(
      'UPDATE rate_buckets SET tokens = LEAST($2::float8, tokens + 1) WHERE bucket_key = $1',
      [bucketKey, policy.requests],
    );
  }

  /** A bucket idle for an hour has refilled under any policy with a window of an hour or less. */
  private maybePrune(): void {
    this.takesSincePrune += 1;
    if (this.takesSincePrune < this.pruneEveryTakes) return;
    this.takesSincePrune = 0;
    void this.pool
      .query(`DELETE FROM rate_buckets WHERE updated_at_ms < ${dbNowMs} - 3600000`)
      .catch(() => undefined);
  }
}
