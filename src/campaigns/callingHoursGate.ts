import {
  type CallingWindow,
  callingWindowOf,
  isWindowOpen,
  nextWindowOpening,
} from '../domain/callingWindow.js';
import { RefreshingSnapshot } from '../limits/refreshingSnapshot.js';
import type { Store } from '../store/types.js';
import { timeZonesOfNumber } from './numberTimeZones.js';

/** Account-wide quiet hours: when no call may start, in the callee's zone (else `timeZone`). */
export interface QuietHours {
  /** The hours calls may start: the complement of the quiet ones. */
  window: CallingWindow;
  timeZone: string;
}

export type CallingHoursDecision = { kind: 'open' } | { kind: 'wait'; untilMs: number } | { kind: 'expired' };

interface Constraint {
  window: CallingWindow;
  zones: readonly string[];
}

/** The first instant at or after `fromMs` when every constraint's window is open, or null. */
function firstCommonOpening(constraints: readonly Constraint[], fromMs: number): number | null {
  let candidate = fromMs;
  // Each step moves to one constraint's next opening; a handful settle any realistic pair.
  for (let step = 0; step < 16; step += 1) {
    if (constraints.every((constraint) => isWindowOpen(constraint.window, constraint.zones, candidate)))
      return candidate;
    for (const constraint of constraints) {
      const opening = nextWindowOpening(constraint.window, constraint.zones, candidate);
      if (opening === null) return null;
      candidate = Math.max(candidate, opening);
    }
  }
  return null;
}

/** How long accounts' quiet hours are kept in memory before they are read again. */
const quietHoursTtlMs = 5_000;

/**
 * The last check before a call is dialled (the dispatcher asks it right before the at-most-once
 * claim): a campaign attempt only inside its contact's window and before the campaign's end, and
 * any call only outside the quiet hours. A queued call that may not start yet waits in the queue
 * until the window opens; one whose window would open only after its campaign ends is not dialled.
 */
export class CallingHoursGate {
  private readonly accountsQuietHours: RefreshingSnapshot<Map<string, QuietHours>>;

  /** `quietHours`: the deployment's (CALLWRIGHT_QUIET_HOURS), for accounts without their own. */
  constructor(
    private readonly store: Store,
    private readonly quietHours: QuietHours | null,
  ) {
    this.accountsQuietHours = new RefreshingSnapshot(quietHoursTtlMs, async () => {
      const hours = new Map<string, QuietHours>();
      for (const rule of await store.dialRates.allQuietHours()) {
        hours.set(rule.accountId, {
          window: callingWindowOf({ start: rule.end, end: rule.start }),
          timeZone: rule.timeZone,
        });
      }
      return hours;
    });
  }

  /** `loadCall` reads the call row (the dispatcher shares one read with its other gate). */
  async decide(
    callId: string,
    nowMs: number,
    loadCall: () => Promise<{ accountId: string; toNumber: string } | null>,
  ): Promise<CallingHoursDecision> {
    const constraints: Constraint[] = [];
    const attempt = await this.store.campaigns.ofCall(callId);
    let endsAtMs: number | null = null;
    let call: { accountId: string; toNumber: string } | null = null;
    if (attempt) {
      constraints.push({ window: attempt.campaign.callingWindow, zones: attempt.contact.timeZones });
      endsAtMs = attempt.campaign.endsAt ? Date.parse(attempt.campaign.endsAt) : null;
      call = { accountId: attempt.campaign.accountId, toNumber: attempt.contact.toNumber };
    }
    const byAccount = await this.accountsQuietHours.get(nowMs);
    if (this.quietHours || byAccount.size > 0) {
      call ??= await loadCall();
      const quiet = call ? (byAccount.get(call.accountId) ?? this.quietHours) : null;
      if (call && quiet) {
        const zones = timeZonesOfNumber(call.toNumber) ?? [quiet.timeZone];
        constraints.push({ window: quiet.window, zones });
      }
    }
    if (constraints.length === 0) return { kind: 'open' };
    const opening = firstCommonOpening(constraints, nowMs);
    if (opening === nowMs) return { kind: 'open' };
    // Windows that never meet (zones a day apart), or meet only after the campaign: never dialled.
    if (opening === null || (endsAtMs !== null && opening >= endsAtMs)) return { kind: 'expired' };
    return { kind: 'wait', untilMs: opening };
  }
}
