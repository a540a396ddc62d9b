import type { CampaignRecord } from '../domain/campaigns.js';
import type { Store } from '../store/types.js';

const hourMs = 3_600_000;
const dayMs = 86_400_000;

/**
 * Whether one of the campaign's caps (`max_calls_per_hour`, `max_calls_per_day`, over a rolling
 * hour and 24 h) is reached at `nowMs`, and when a place frees up (the oldest claim in the span
 * ages out); null when a call may start. The claim re-checks the caps in its own statement, so
 * this only saves useless claims and says why contacts wait.
 */
export async function campaignCapWait(
  store: Store,
  campaign: CampaignRecord,
  nowMs: number,
): Promise<{ reason: 'hourly_cap' | 'daily_cap'; untilMs: number } | null> {
  const caps = [
    { reason: 'daily_cap', cap: campaign.rules.maxCallsPerDay, spanMs: dayMs },
    { reason: 'hourly_cap', cap: campaign.rules.maxCallsPerHour, spanMs: hourMs },
  ] as const;
  let wait: { reason: 'hourly_cap' | 'daily_cap'; untilMs: number } | null = null;
  for (const { reason, cap, spanMs } of caps) {
    if (cap === null) continue;
    const claims = await store.campaignRules.claimsSince(campaign.id, new Date(nowMs - spanMs).toISOString());
    if (claims.count < cap || claims.oldestAt === null) continue;
    const untilMs = Date.parse(claims.oldestAt) + spanMs + 1;
    // The later of the two: both must have room.
    if (wait === null || untilMs > wait.untilMs) wait = { reason, untilMs };
  }
  return wait;
}
