/**
 * A fixed-bucket histogram of durations in milliseconds: constant memory, no allocation per
 * sample, percentiles to the bucket width. Values beyond the last bucket land in it.
 */
export interface LatencySummary {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
}

export class LatencyHistogram {
  private readonly buckets: Uint32Array;
  private readonly bucketWidthMs: number;
  private count = 0;
  private sumMs = 0;
  private maxMs = 0;

  constructor(options: { bucketWidthMs?: number; rangeMs?: number } = {}) {
    this.bucketWidthMs = options.bucketWidthMs ?? 0.1;
    const rangeMs = options.rangeMs ?? 200;
    this.buckets = new Uint32Array(Math.ceil(rangeMs / this.bucketWidthMs) + 1);
  }

  record(valueMs: number): void {
    const v = Math.max(valueMs, 0);
    let index = Math.floor(v / this.bucketWidthMs);
    if (index >= this.buckets.length) index = this.buckets.length - 1;
    this.buckets[index]!++;
    this.count++;
    this.sumMs += v;
    if (v > this.maxMs) this.maxMs = v;
  }

  /** The upper edge of the bucket holding the q-quantile (0 < q ≤ 1); 0 when empty. */
  quantileMs(q: number): number {
    if (this.count === 0) return 0;
    const rank = Math.max(1, Math.ceil(q * this.count));
    let seen = 0;
    for (let i = 0; i < this.buckets.length; i++) {
      seen += this.buckets[i]!;
      if (seen >= rank) return Math.min((i + 1) * this.bucketWidthMs, this.maxMs);
    }
    return this.maxMs;
  }

  summary(): LatencySummary {
    return {
      count: this.count,
      p50Ms: this.quantileMs(0.5),
      p99Ms: this.quantileMs(0.99),
      maxMs: this.maxMs,
      meanMs: this.count === 0 ? 0 : this.sumMs / this.count,
    };
  }

  reset(): void {
    this.buckets.fill(0);
    this.count = 0;
    this.sumMs = 0;
    this.maxMs = 0;
  }
}
