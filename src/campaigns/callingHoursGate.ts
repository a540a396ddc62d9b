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

/**
 * `open` (with the campaign of a campaign call), `wait` (until when, and why), `expired` (may never
 * start in time), `canceled` (its campaign was canceled) or `suppressed` (the number is on the
 * account's do-not-call list).
 */
export type CallingHoursDecision =
  | { kind: 'open'; campaignId: string | null }
  | { kind: 'wait'; untilMs: number; reason: 'window' | 'quiet_hours'; campaignId: string | null }
  | { kind: 'expired' }
  | { kind: 'canceled' }
  | { kind: 'suppressed' };

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
 * A held call looks again at least this often, so quiet hours removed or shortened (or a window
 * changed) release it: its job is not left sleeping until the old end.
 */
const defaultRecheckMs = 60_000;

/**
 * The last check before a call is dialled (the dispatcher asks it right before the at-most-once
 * claim): a campaign attempt only inside its contact's window and before the campaign's end, and
 * any call only outside the quiet hours. A queued call that may not start yet waits in the queue
 * until the window opens; one whose window would open only after its campaign ends is not dialled.
 */
export class CallingHoursGate {
  private readonly accountsQuietHours: RefreshingSnapshot<Map<string, QuietHours>>;
  private readonly recheckMs: number;

  /** `quietHours`: the deployment's (CALLWRIGHT_QUIET_HOURS), for accounts without their own. */
  constructor(
    private readonly store: Store,
    private readonly quietHours: QuietHours | null,
    options: { recheckMs?: number } = {},
  ) {
    this.recheckMs = options.recheckMs ?? defaultRecheckMs;
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
    // A canceled campaign's call, or a removed contact's, is never dialled, whichever process
    // canceled or removed it.
    if (attempt?.campaign.status === 'canceled' || attempt?.contact.removedAt) return { kind: 'canceled' };
    const campaignId = attempt?.campaign.id ?? null;
    let endsAtMs: number | null = null;
    const call = attempt
      ? { accountId: attempt.campaign.accountId, toNumber: attempt.contact.toNumber }
      : await loadCall();
    if (!call) return { kind: 'open', campaignId };
    // Suppression is decided here, before the call is claimed: a listed number is never `dialing`.
    if (await this.store.doNotCall.get(call.accountId, call.toNumber)) return { kind: 'suppressed' };
    if (attempt) {
      constraints.push({ window: attempt.campaign.callingWindow, zones: attempt.contact.timeZones });
      endsAtMs = attempt.campaign.endsAt ? Date.parse(attempt.campaign.endsAt) : null;
    }
    const byAccount = await this.accountsQuietHours.get(nowMs);
    const quiet = byAccount.get(call.accountId) ?? this.quietHours;
    let quietConstraint: Constraint | null = null;
    if (quiet) {
      quietConstraint = { window: quiet.window, zones: timeZonesOfNumber(call.toNumber) ?? [quiet.timeZone] };
      constraints.push(quietConstraint);
    }
    if (constraints.length === 0) return { kind: 'open', campaignId };
    const opening = firstCommonOpening(constraints, nowMs);
    if (opening === nowMs) return { kind: 'open', campaignId };
    // Windows that never meet (zones a day apart), or meet only after the campaign: never dialled.
    if (opening === null || (endsAtMs !== null && opening >= endsAtMs)) return { kind: 'expired' };
    const reason =
      quietConstraint && !isWindowOpen(quietConstraint.window, quietConstraint.zones, nowMs)
        ? 'quiet_hours'
        : 'window';
    return { kind: 'wait', untilMs: Math.min(opening, nowMs + this.recheckMs), reason, campaignId };
  }
}
