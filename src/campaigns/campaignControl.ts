import { completedEventBuilder } from '../calls/completedEvents.js';
import { type CallerIdHealth, callerIdHealthOf } from '../domain/callerIdHealth.js';
import { terminalOutcomeOf } from '../domain/callOutcome.js';
import { describeCampaignRules } from '../domain/campaignRules.js';
import type { CampaignContactRecord, CampaignRecord, CampaignStatus } from '../domain/campaigns.js';
import { waitingReasonOf } from '../domain/campaignWaits.js';
import { AppError } from '../domain/errors.js';
import { createLogger, type Logger } from '../logger.js';
import type { CampaignAttempt, CampaignProgress, Store } from '../store/types.js';
import { StatusEventWriter } from '../webhooks/statusEventWriter.js';
import { campaignCapWait } from './campaignCaps.js';

/** What a campaign looks like to its owner: settings, status and progress by state and outcome. */
export function describeCampaign(
  campaign: CampaignRecord,
  progress: CampaignProgress,
  callerIdHealth?: readonly CallerIdHealth[],
) {
  return {
    campaign_id: campaign.id,
    name: campaign.name,
    status: campaign.status,
    status_reason: campaign.statusReason,
    agent_id: campaign.agentId,
    caller_ids: campaign.callerIds,
    caller_id_selection: campaign.callerIdSelection,
    calling_window: campaign.callingWindow,
    time_zone: campaign.timeZone,
    max_concurrency: campaign.maxConcurrency,
    calls_per_minute: campaign.callsPerMinute,
    max_daily_attempts: campaign.maxDailyAttempts,
    retry: campaign.retry,
    ...describeCampaignRules(campaign.rules),
    ...(callerIdHealth ? { caller_id_status: callerIdHealth.map(describeCallerIdHealth) } : {}),
    starts_at: campaign.startsAt,
    ends_at: campaign.endsAt,
    // What the contacts are now (erasure deletes some, live edits add some): the sum of the
    // counters, so it always agrees with the progress below.
    contact_count: Object.values(progress.states).reduce((sum, count) => sum + (count ?? 0), 0),
    created_at: campaign.createdAt,
    completed_at: campaign.completedAt,
    progress: {
      pending: progress.states.pending ?? 0,
      calling: progress.states.calling ?? 0,
      retry_wait: progress.states.retry_wait ?? 0,
      done: progress.states.done ?? 0,
      expired: progress.states.expired ?? 0,
      do_not_call: progress.states.do_not_call ?? 0,
      canceled: progress.states.canceled ?? 0,
      outcomes: {
        answered: progress.outcomes.answered ?? 0,
        voicemail: progress.outcomes.voicemail ?? 0,
        busy: progress.outcomes.busy ?? 0,
        no_answer: progress.outcomes.no_answer ?? 0,
        failed: progress.outcomes.failed ?? 0,
      },
    },
  };
}

export type CampaignResource = ReturnType<typeof describeCampaign>;

/** One caller ID as a campaign shows it: active or rested (until when), and its recent answer rate. */
function describeCallerIdHealth(health: CallerIdHealth) {
  return {
    number: health.number,
    status: health.status,
    answer_rate: health.answerRate === null ? null : Math.round(health.answerRate * 10_000) / 10_000,
    attempts: health.attempts,
    rested_until: health.restedUntil,
  };
}

/** What `waiting_reason` is read against: the contact's campaign, now, and its calls on the line. */
export interface WaitingContext {
  campaign: CampaignRecord;
  nowMs: number;
  callingCount: number;
  /** The campaign cap reached now, if any (campaignCaps.ts). */
  capReached?: 'hourly_cap' | 'daily_cap' | null;
}

/** A contact with every attempt made so far and each attempt's call, and why it waits. */
export function describeContact(
  contact: CampaignContactRecord,
  attempts: readonly CampaignAttempt[],
  waiting: WaitingContext,
) {
  const latest = attempts.find((attempt) => attempt.callId === contact.callId) ?? attempts.at(-1);
  return {
    contact_id: contact.id,
    position: contact.position,
    priority: contact.priority,
    to_number: contact.toNumber,
    state: contact.state,
    attempts: contact.attempts,
    last_outcome: contact.lastOutcome,
    next_attempt_at: contact.dueAt,
    waiting_reason: waitingReasonOf(contact, waiting.campaign, {
      nowMs: waiting.nowMs,
      callingCount: waiting.callingCount,
      callStatus: latest?.call?.status ?? null,
      capReached: waiting.capReached ?? null,
    }),
    time_zones: contact.timeZones,
    calls: attempts.map((attempt) => ({
      attempt: attempt.attempt,
      call_id: attempt.callId,
      created_at: attempt.createdAt,
      status: attempt.call?.status ?? null,
      end_reason: attempt.call?.endReason ?? null,
      answered_by: attempt.call?.answeredBy ?? null,
    })),
  };
}

/** A page of contacts as the API shows them: attempts, calls and why each waits. */
export async function describeContacts(
  store: Store,
  campaign: CampaignRecord,
  contacts: readonly CampaignContactRecord[],
) {
  const nowMs = Date.now();
  const [attempts, callingCount, cap] = await Promise.all([
    store.campaigns.attemptsOf(contacts.map((contact) => contact.id)),
    store.campaigns.countCalling(campaign.id),
    campaignCapWait(store, campaign, nowMs),
  ]);
  const waiting: WaitingContext = { campaign, nowMs, callingCount, capReached: cap?.reason ?? null };
  return contacts.map((contact) =>
    describeContact(
      contact,
      attempts.filter((attempt) => attempt.contactId === contact.id),
      waiting,
    ),
  );
}

export async function campaignResource(store: Store, campaign: CampaignRecord): Promise<CampaignResource> {
  const [progress, windows] = await Promise.all([
    store.campaigns.progress(campaign.id),
    store.callerIdHealth.windows(campaign.id),
  ]);
  return describeCampaign(campaign, progress, callerIdHealthOf(campaign.callerIds, windows, Date.now()));
}

/**
 * A page of campaigns as the API, the CLI and the dashboard list them: the same resources as
 * `campaignResource`, with every campaign's caller-ID windows read in one query, not one per campaign.
 */
export async function campaignResources(
  store: Store,
  campaigns: readonly CampaignRecord[],
): Promise<CampaignResource[]> {
  const [progresses, windows] = await Promise.all([
    Promise.all(campaigns.map((campaign) => store.campaigns.progress(campaign.id))),
    store.callerIdHealth.windowsOfCampaigns(campaigns.map((campaign) => campaign.id)),
  ]);
  const nowMs = Date.now();
  return campaigns.map((campaign, index) =>
    describeCampaign(
      campaign,
      progresses[index] as CampaignProgress,
      callerIdHealthOf(campaign.callerIds, windows.get(campaign.id) ?? [], nowMs),
    ),
  );
}

export async function campaignOf(
  store: Store,
  accountId: string,
  campaignId: string,
): Promise<CampaignRecord> {
  const campaign = await store.campaigns.get(accountId, campaignId);
  if (!campaign) throw new AppError('not_found', `campaign ${campaignId.slice(0, 64)} not found`);
  return campaign;
}

const transitions: Record<'pause' | 'resume' | 'cancel', { from: CampaignStatus[]; to: CampaignStatus }> = {
  pause: { from: ['running'], to: 'paused' },
  resume: { from: ['paused'], to: 'running' },
  cancel: { from: ['running', 'paused'], to: 'canceled' },
};

/** What a change is made with: the key of the caller (a resume after a revocation adopts it), a logger. */
export interface CampaignChangeOptions {
  /** The API key of the request, the command line's or the dashboard's: calls are placed under it. */
  apiKeyId?: string;
  logger?: Logger;
}

/**
 * Pause (no new attempts; calls already placed go on), resume, or cancel — the one path of the
 * API, the command line and the dashboard. Cancel: no new attempts, waiting contacts end as
 * canceled, and calls still queued are finished as canceled here, through the store (no call
 * worker is needed; the dispatcher re-checks the campaign's state around its claim, so a call it
 * takes meanwhile is not dialled either); live calls end as they would. A campaign paused because
 * its key was revoked resumes under the caller's key. A campaign in another state is a 409.
 * Pause and cancel write `campaign.paused` / `campaign.canceled` for endpoints that asked.
 */
export async function changeCampaign(
  store: Store,
  accountId: string,
  campaignId: string,
  action: 'pause' | 'resume' | 'cancel',
  options: CampaignChangeOptions = {},
): Promise<CampaignRecord> {
  const campaign = await campaignOf(store, accountId, campaignId);
  const { from, to } = transitions[action];
  if (action === 'resume') await adoptCallerKey(store, campaign, options.apiKeyId);
  if (!(await store.campaigns.setStatus(campaign.id, from, to, action === 'pause' ? 'requested' : null))) {
    const now = await campaignOf(store, accountId, campaignId);
    throw new AppError('conflict', `a ${now.status} campaign cannot be told to ${action}`);
  }
  if (action === 'cancel') await cancelQueuedAttempts(store, campaign);
  const changed = await campaignOf(store, accountId, campaignId);
  if (action !== 'resume') {
    await announceCampaignChange(store, options.logger ?? createLogger('silent'), changed);
  }
  return changed;
}

/** A campaign whose key was revoked takes the caller's (valid) key; without one it stays paused. */
async function adoptCallerKey(store: Store, campaign: CampaignRecord, apiKeyId: string | undefined) {
  const keys = await store.apiKeys.list(campaign.accountId);
  if (keys.find((key) => key.id === campaign.apiKeyId)?.revokedAt === null) return;
  const caller = keys.find((key) => key.id === apiKeyId && key.revokedAt === null);
  if (!caller)
    throw new AppError(
      'conflict',
      'the API key this campaign places its calls under was revoked; resume it with a valid key',
    );
  await store.campaigns.adoptApiKey(campaign.id, caller.id);
}

/** Waiting contacts end as canceled; calls still queued are finished as canceled (never dialled). */
async function cancelQueuedAttempts(store: Store, campaign: CampaignRecord): Promise<void> {
  await store.campaigns.endWaiting(campaign.id, 'canceled', new Date().toISOString());
  // A queued call has no recording: its call.completed needs no link.
  const buildEvent = completedEventBuilder(() => null);
  let after = -1;
  for (;;) {
    const calling = await store.campaigns.listContacts(campaign.id, {
      limit: 500,
      afterPosition: after,
      state: 'calling',
    });
    for (const contact of calling) {
      const call = contact.callId ? await store.calls.get(campaign.accountId, contact.callId) : null;
      if (call?.status !== 'queued') continue;
      await store.calls.finish(
        call.id,
        { ...terminalOutcomeOf({ kind: 'canceled', answered: false }), atIso: new Date().toISOString() },
        buildEvent,
      );
    }
    if (calling.length < 500) break;
    after = calling.at(-1)?.position ?? after;
  }
}

/** `campaign.paused` (each pause) or `campaign.canceled`, with the campaign as the API shows it. */
export async function announceCampaignChange(
  store: Store,
  logger: Logger,
  campaign: CampaignRecord,
): Promise<void> {
  const type = campaign.status === 'paused' ? 'campaign.paused' : 'campaign.canceled';
  const resource = await campaignResource(store, campaign);
  await new StatusEventWriter(store.events, logger).write(
    campaign.accountId,
    type,
    { campaignId: campaign.id },
    (event) => ({ type, id: event.id, created_at: event.createdAt, data: resource }),
  );
}
