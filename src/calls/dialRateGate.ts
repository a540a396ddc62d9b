import type { RateLimiter } from '../limits/rateLimiter.js';
import { RefreshingSnapshot } from '../limits/refreshingSnapshot.js';
import type { DialRate, Store } from '../store/types.js';

/** How long the caps are kept in memory before they are read again. */
const capsTtlMs = 5_000;

/**
 * Caps on calls per second leaving one caller ID or one trunk, for every call whatever placed it
 * (the API, a campaign): asked by the dispatcher right before the at-most-once claim. The buckets
 * are the rate limiter's — PostgreSQL rows in scale-out, so all worker processes share one
 * bucket per caller ID and per trunk.
 */
export class DialRateGate {
  private readonly capsByAccount: RefreshingSnapshot<Map<string, DialRate[]>>;

  constructor(
    private readonly store: Store,
    private readonly limiter: RateLimiter,
  ) {
    this.capsByAccount = new RefreshingSnapshot(capsTtlMs, async () => {
      const caps = new Map<string, DialRate[]>();
      for (const { accountId, ...rate } of await store.dialRates.listAll()) {
        caps.set(accountId, [...(caps.get(accountId) ?? []), rate]);
      }
      return caps;
    });
  }

  /** Null when the call may be dialled now (its tokens taken); else how long to wait, in ms. */
  async waitMs(
    nowMs: number,
    loadCall: () => Promise<{ accountId: string; fromNumber: string } | null>,
  ): Promise<number | null> {
    const caps = await this.capsByAccount.get(nowMs);
    if (caps.size === 0) return null;
    const call = await loadCall();
    const mine = call ? caps.get(call.accountId) : undefined;
    if (!call || !mine) return null;
    const route = (await this.store.numbers.get(call.accountId, call.fromNumber))?.route ?? null;
    const applying = mine.filter(
      (rate) =>
        (rate.scope === 'caller_id' && rate.subject === call.fromNumber) ||
        (rate.scope === 'trunk' && rate.subject === route),
    );
    const taken: { key: string; policy: { requests: number; windowS: number } }[] = [];
    for (const rate of applying) {
      const key = `dial:${rate.scope}:${call.accountId}:${rate.subject}`;
      const policy = { requests: rate.callsPerSecond, windowS: 1 };
      const decision = await this.limiter.take(key, policy);
      if (!decision.allowed) {
        // The other caps' tokens were not used: give them back.
        for (const earlier of taken) await this.limiter.giveBack(earlier.key, earlier.policy);
        return Math.max(50, Math.ceil(decision.retryAfterS * 1000));
      }
      taken.push({ key, policy });
    }
    return null;
  }
}
