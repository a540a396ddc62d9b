import type { CampaignContactRecord, CampaignRecord } from './campaigns.js';

/** Why a campaign is paused: its owner asked, or the API key its calls are placed under was revoked. */
export const campaignStatusReasons = ['requested', 'api_key_revoked'] as const;
export type CampaignStatusReason = (typeof campaignStatusReasons)[number];

/**
 * Why a contact is not on a call yet. Stored when the scheduler or the dispatcher decides it:
 * `window` (outside its calling window), `daily_cap` (the number's calls of the last 24 h), and for
 * a claimed contact whose call is still queued `quiet_hours`, `dial_rate` (a caller-ID or trunk
 * calls-per-second cap) or `account_live_calls` (the account's live-call cap). Read from the
 * campaign: `paused`, `starts_at`, `retry` (after an outcome), `concurrency` (the campaign's
 * calls at once), `pace` (its calls per minute: due, next in line) and `dispatch` (queued, about
 * to be dialled).
 */
export const waitingReasons = [
  'window',
  'daily_cap',
  'retry',
  'paused',
  'starts_at',
  'concurrency',
  'pace',
  'quiet_hours',
  'dial_rate',
  'account_live_calls',
  'dispatch',
  'hourly_cap',
  'holiday',
  'callback',
] as const;
export type WaitingReason = (typeof waitingReasons)[number];
/** The reasons the dispatcher stores on a claimed contact whose call waits in the queue. */
export type QueuedCallWait = Extract<
  WaitingReason,
  'window' | 'quiet_hours' | 'dial_rate' | 'account_live_calls'
>;

/** A sentence for people (CLI and dashboard) saying why a contact waits. */
export const waitingReasonTexts: Record<WaitingReason, string> = {
  window: 'outside its calling window (callee time)',
  daily_cap:
    "a daily cap is reached: the number's (max_daily_attempts, counting all the account's calls) or the campaign's (max_calls_per_day)",
  retry: 'waiting to retry after its last outcome',
  paused: 'the campaign is paused',
  starts_at: 'the campaign has not started yet (starts_at)',
  concurrency: 'max_concurrency calls of the campaign are on the line',
  pace: 'due: next in line at the campaign pace (calls_per_minute)',
  quiet_hours: "its call waits for the account's quiet hours to end",
  dial_rate: "its call waits for the caller ID's or trunk's calls-per-second cap",
  account_live_calls: "its call waits for a free line under the account's live-call cap",
  dispatch: 'its call is queued and about to be dialled',
  hourly_cap: "the campaign's max_calls_per_hour is reached (calls started in the last hour)",
  holiday: "a holiday in the callee's zone (the campaign's holidays)",
  callback: 'the callee asked to be called back then (schedule_callback)',
};

/**
 * Why a contact is not on a call, or null when it is on one or finished. `callingCount` is how
 * many of the campaign's contacts are on a call; `callStatus` the status of a calling contact's call.
 */
export function waitingReasonOf(
  contact: Pick<CampaignContactRecord, 'state' | 'dueAt' | 'waitingReason'>,
  campaign: Pick<CampaignRecord, 'status' | 'startsAt' | 'maxConcurrency'>,
  context: {
    nowMs: number;
    callingCount: number;
    callStatus: string | null;
    /** The campaign cap reached now (`hourly_cap`, `daily_cap`), if any. */
    capReached?: 'hourly_cap' | 'daily_cap' | null;
  },
): WaitingReason | null {
  if (contact.state === 'calling') {
    if (context.callStatus !== 'queued') return null;
    return contact.waitingReason ?? 'dispatch';
  }
  if (contact.state !== 'pending' && contact.state !== 'retry_wait') return null;
  if (campaign.status === 'paused') return 'paused';
  if (campaign.status !== 'running') return null;
  if (campaign.startsAt !== null && Date.parse(campaign.startsAt) > context.nowMs) return 'starts_at';
  if (contact.dueAt !== null && Date.parse(contact.dueAt) > context.nowMs) {
    if (
      contact.waitingReason === 'window' ||
      contact.waitingReason === 'daily_cap' ||
      contact.waitingReason === 'holiday' ||
      contact.waitingReason === 'callback'
    )
      return contact.waitingReason;
    return contact.state === 'retry_wait' ? 'retry' : 'window';
  }
  if (context.capReached) return context.capReached;
  return context.callingCount >= campaign.maxConcurrency ? 'concurrency' : 'pace';
}
