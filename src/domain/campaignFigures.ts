import { DateTime } from 'luxon';

/**
 * A campaign's figures (issue 37): what its calls did, overall, per caller ID and per hour of the
 * callee's local day. The store keeps the sums per (caller ID, local hour) as calls finish
 * (src/store/campaignFiguresSql.ts); this file turns those few rows into the figures shown.
 */

/** The sums kept for one (caller ID, local hour) of a campaign. */
export interface FigureSums {
  /** Calls that rang out and finished (a call canceled before it was dialled is no attempt). */
  attempts: number;
  /** Time from answer to hang-up, summed. */
  connectedMs: number;
  /** Cost at the account's prices, in millionths of a US dollar. */
  costMicroUsd: number;
  /** Picked up by a person. */
  answered: number;
  /** Picked up by a machine or voicemail. */
  voicemail: number;
  /** The post-call analysis judged the call a success. */
  succeeded: number;
}

export interface FigureRow extends FigureSums {
  callerId: string;
  /** 0–23, or -1 for attempts recorded before the hour was kept. */
  localHour: number;
}

const zero = (): FigureSums => ({
  attempts: 0,
  connectedMs: 0,
  costMicroUsd: 0,
  answered: 0,
  voicemail: 0,
  succeeded: 0,
});

function add(into: FigureSums, row: FigureSums): void {
  into.attempts += row.attempts;
  into.connectedMs += row.connectedMs;
  into.costMicroUsd += row.costMicroUsd;
  into.answered += row.answered;
  into.voicemail += row.voicemail;
  into.succeeded += row.succeeded;
}

/** A share with four decimals; null when there is nothing to divide by. */
function rate(part: number, whole: number): number | null {
  return whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000;
}

/**
 * The figures as the API shows them. Answer and voicemail rates are shares of attempts; the
 * success rate is the share of answered calls the analysis judged a success.
 */
export function describeFigures(sums: FigureSums) {
  return {
    attempts: sums.attempts,
    connected_minutes: Math.round((sums.connectedMs / 60_000) * 100) / 100,
    cost_usd: Math.round(sums.costMicroUsd) / 1_000_000,
    answered: sums.answered,
    voicemail: sums.voicemail,
    succeeded: sums.succeeded,
    answer_rate: rate(sums.answered, sums.attempts),
    voicemail_rate: rate(sums.voicemail, sums.attempts),
    success_rate: rate(sums.succeeded, sums.answered),
  };
}

export type FiguresResource = ReturnType<typeof describeFigures>;

/** Overall, by caller ID (sorted) and by local hour (0–23, hours without attempts left out). */
export function campaignFiguresOf(campaignId: string, rows: readonly FigureRow[]) {
  const overall = zero();
  const byCaller = new Map<string, FigureSums>();
  const byHour = new Map<number, FigureSums>();
  for (const row of rows) {
    add(overall, row);
    const caller = byCaller.get(row.callerId) ?? zero();
    add(caller, row);
    byCaller.set(row.callerId, caller);
    if (row.localHour < 0) continue;
    const hour = byHour.get(row.localHour) ?? zero();
    add(hour, row);
    byHour.set(row.localHour, hour);
  }
  return {
    campaign_id: campaignId,
    overall: describeFigures(overall),
    by_caller_id: [...byCaller.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([callerId, sums]) => ({ caller_id: callerId, ...describeFigures(sums) })),
    by_local_hour: [...byHour.entries()]
      .sort(([a], [b]) => a - b)
      .map(([hour, sums]) => ({ local_hour: hour, ...describeFigures(sums) })),
  };
}

export type CampaignFiguresResource = ReturnType<typeof campaignFiguresOf>;

/** The hour (0–23) of `atMs` in the callee's zone (the first of a number's zones). */
export function localHourOf(timeZones: readonly string[], atMs: number): number {
  return DateTime.fromMillis(atMs, { zone: timeZones[0] ?? 'UTC' }).hour;
}
