import type { CallControl } from '../calls/callControl.js';
import type { CampaignContactRecord, CampaignRecord, CampaignStatus } from '../domain/campaigns.js';
import { AppError } from '../domain/errors.js';
import type { CampaignAttempt, CampaignProgress, Store } from '../store/types.js';

/** What a campaign looks like to its owner: settings, status and progress by state and outcome. */
export function describeCampaign(campaign: CampaignRecord, progress: CampaignProgress) {
  return {
    campaign_id: campaign.id,
    name: campaign.name,
    status: campaign.status,
    agent_id: campaign.agentId,
    caller_ids: campaign.callerIds,
    caller_id_selection: campaign.callerIdSelection,
    calling_window: campaign.callingWindow,
    time_zone: campaign.timeZone,
    max_concurrency: campaign.maxConcurrency,
    calls_per_minute: campaign.callsPerMinute,
    max_daily_attempts: campaign.maxDailyAttempts,
    retry: campaign.retry,
    starts_at: campaign.startsAt,
    ends_at: campaign.endsAt,
    contact_count: campaign.contactCount,
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

/** A contact with every attempt made so far and each attempt's call. */
export function describeContact(contact: CampaignContactRecord, attempts: readonly CampaignAttempt[]) {
  return {
    contact_id: contact.id,
    position: contact.position,
    to_number: contact.toNumber,
    state: contact.state,
    attempts: contact.attempts,
    last_outcome: contact.lastOutcome,
    next_attempt_at: contact.dueAt,
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

export async function campaignResource(store: Store, campaign: CampaignRecord): Promise<CampaignResource> {
  return describeCampaign(campaign, await store.campaigns.progress(campaign.id));
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

/**
 * Pause (no new attempts; calls already queued or live go on), resume, or cancel: no new attempts,
 * waiting contacts end as canceled, and calls still queued are canceled (live ones end as they
 * would). A campaign in another state is a 409.
 */
export async function changeCampaign(
  store: Store,
  callControl: CallControl | null,
  accountId: string,
  campaignId: string,
  action: 'pause' | 'resume' | 'cancel',
): Promise<CampaignRecord> {
  const campaign = await campaignOf(store, accountId, campaignId);
  const { from, to } = transitions[action];
  if (!(await store.campaigns.setStatus(campaign.id, from, to))) {
    const now = await campaignOf(store, accountId, campaignId);
    throw new AppError('conflict', `a ${now.status} campaign cannot be told to ${action}`);
  }
  if (action === 'cancel') {
    await store.campaigns.endWaiting(campaign.id, 'canceled', new Date().toISOString());
    let after = -1;
    for (;;) {
      const calling = await store.campaigns.listContacts(campaign.id, {
        limit: 500,
        afterPosition: after,
        state: 'calling',
      });
      for (const contact of calling) {
        const call = contact.callId ? await store.calls.get(accountId, contact.callId) : null;
        if (call?.status === 'queued') await (callControl?.cancel(call) ?? Promise.resolve(null));
      }
      if (calling.length < 500) break;
      after = calling.at(-1)?.position ?? after;
    }
  }
  return campaignOf(store, accountId, campaignId);
}
