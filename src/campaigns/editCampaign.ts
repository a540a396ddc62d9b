import { numberNotConfigured } from '../calls/createOutboundCall.js';
import { describeEdit, parseCampaignEdit } from '../domain/campaignEdits.js';
import type { CampaignRecord } from '../domain/campaigns.js';
import { AppError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import type { Store } from '../store/types.js';
import { campaignOf } from './campaignControl.js';

/**
 * A live edit of a running or paused campaign (API `PATCH /v1/campaigns/{id}`, the command line's
 * `campaigns edit`): window, pace, caps, retry rules, caller IDs, end, name — each checked as at
 * creation, effective at the scheduler's next claim (calls already queued keep their caller ID),
 * and recorded in the audit log with what changed, from what, to what, and who asked (`actor`:
 * `api_key:key_…`, `cli`, `user:usr_…`). A campaign in another state is a 409.
 */
export async function editCampaign(
  store: Store,
  accountId: string,
  campaignId: string,
  body: unknown,
  actor: string,
): Promise<{ campaign: CampaignRecord; changes: Record<string, unknown> }> {
  const campaign = await campaignOf(store, accountId, campaignId);
  const edit = parseCampaignEdit(body);
  for (const number of edit.callerIds ?? []) {
    if (!(await store.numbers.get(accountId, number))) throw numberNotConfigured();
  }
  if (edit.endsAt && campaign.startsAt && edit.endsAt <= campaign.startsAt)
    throw new AppError('validation_error', 'ends_at must be after starts_at');
  const changes = describeEdit(campaign, edit);
  if (!(await store.campaigns.updateSettings(campaign.id, edit)))
    throw new AppError('conflict', `a ${campaign.status} campaign cannot be changed`);
  const nowIso = new Date().toISOString();
  // Contacts held for the old window are looked at again under the new one.
  if (changes.calling_window) await store.campaigns.reopenWindowWaits(campaign.id, nowIso);
  if (changes.calling_window || changes.holidays)
    await store.campaignRules.reopenHolidayWaits(campaign.id, nowIso);
  if (Object.keys(changes).length > 0) {
    await store.privacy.addAudit({
      id: newId('audit'),
      accountId,
      action: 'campaign_edit',
      actor,
      subject: campaign.id,
      detail: changes,
      createdAt: nowIso,
    });
  }
  return { campaign: await campaignOf(store, accountId, campaign.id), changes };
}
