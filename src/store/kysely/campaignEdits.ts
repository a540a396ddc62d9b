import type { CampaignEdit } from '../../domain/campaignEdits.js';
import { campaignRulesColumns } from './campaignRules.js';
import type { StoreQueries } from './dialects.js';
import { jsonText } from './schema.js';

/**
 * A live edit of a running or paused campaign's settings, in one UPDATE that only applies while the
 * campaign is still in one of those states; false otherwise. The scheduler reads the campaign on
 * each turn, so the change holds from its next claim.
 */
export async function updateCampaignSettings(
  queries: StoreQueries,
  campaignId: string,
  edit: CampaignEdit,
): Promise<boolean> {
  const result = await queries.db
    .updateTable('campaigns')
    .set({
      ...(edit.name !== undefined ? { name: edit.name } : {}),
      ...(edit.callingWindow !== undefined ? { calling_window: jsonText(edit.callingWindow) } : {}),
      ...(edit.maxConcurrency !== undefined ? { max_concurrency: edit.maxConcurrency } : {}),
      ...(edit.callsPerMinute !== undefined ? { calls_per_minute: edit.callsPerMinute } : {}),
      ...(edit.maxDailyAttempts !== undefined ? { max_daily_attempts: edit.maxDailyAttempts } : {}),
      ...(edit.retry !== undefined ? { retry_policy: jsonText(edit.retry) } : {}),
      ...(edit.callerIds !== undefined ? { caller_ids: jsonText(edit.callerIds) } : {}),
      ...(edit.callerIdSelection !== undefined ? { caller_id_selection: edit.callerIdSelection } : {}),
      ...(edit.endsAt !== undefined ? { ends_at: edit.endsAt } : {}),
      ...campaignRulesColumns(edit.rules ?? {}),
    })
    .where('id', '=', campaignId)
    .where('status', 'in', ['running', 'paused'])
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * After a window change: every waiting contact held for the old window is due now, so the scheduler
 * looks at it again under the new one (one statement; a zone still shut is moved back at once,
 * all its contacts together). Returns how many.
 */
export async function reopenWindowWaits(
  queries: StoreQueries,
  campaignId: string,
  nowIso: string,
): Promise<number> {
  const result = await queries.db
    .updateTable('campaign_contacts')
    .set({ due_at: nowIso, waiting_reason: null, updated_at: nowIso })
    .where('campaign_id', '=', campaignId)
    .where('state', 'in', ['pending', 'retry_wait'])
    .where('waiting_reason', '=', 'window')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
