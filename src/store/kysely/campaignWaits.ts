import { sql } from 'kysely';
import type { CallingWindow } from '../../domain/callingWindow.js';
import type { CampaignContactRecord } from '../../domain/campaigns.js';
import type { QueuedCallWait, WaitingReason } from '../../domain/campaignWaits.js';
import type { StoreQueries } from './dialects.js';
import { jsonText } from './schema.js';

/**
 * The campaign statements of issue 37 (waiting reasons, released claims, deferring a zone at once),
 * kept apart from campaigns.ts; `KyselyCampaigns` delegates to them.
 */

/**
 * Undoes a claim whose call could not be written (the campaign's key was revoked): the attempt row
 * goes first, then the contact waits again as it was before the claim, due at `atIso`. A crash
 * between the two leaves a claim without a call, which the scheduler writes (and releases) again.
 */
export async function releaseClaim(
  queries: StoreQueries,
  contact: CampaignContactRecord,
  callId: string,
  atIso: string,
): Promise<boolean> {
  await queries.db.deleteFrom('campaign_attempts').where('call_id', '=', callId).execute();
  const result = await queries.db
    .updateTable('campaign_contacts')
    .set({
      state: contact.attempts === 0 ? 'pending' : 'retry_wait',
      attempts: contact.attempts,
      due_at: atIso,
      call_id: contact.callId,
      waiting_reason: null,
      updated_at: atIso,
    })
    .where('id', '=', contact.id)
    .where('state', '=', 'calling')
    .where('call_id', '=', callId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Moves every contact of the campaign that is due by `nowIso` and held in exactly these zones to
 * `dueAtIso` (their common next opening) in one statement: a window shut for a zone costs one
 * write for all its contacts, not a read of each. Returns how many moved.
 */
export async function deferZone(
  queries: StoreQueries,
  campaignId: string,
  timeZones: readonly string[],
  change: { nowIso: string; dueAtIso: string; reason: WaitingReason; window: CallingWindow },
): Promise<number> {
  // Only under the window the scheduler judged by: a live edit of the window in between (which
  // made these contacts due again) must not be undone by a decision taken on the old one.
  const windowText = jsonText(change.window);
  const sameWindow =
    queries.dialect.name === 'postgres' ? sql`CAST(${windowText} AS jsonb)` : sql`${windowText}`;
  const result = await queries.db
    .updateTable('campaign_contacts')
    .set({ due_at: change.dueAtIso, waiting_reason: change.reason, updated_at: change.nowIso })
    .where('campaign_id', '=', campaignId)
    .where('due_at', 'is not', null)
    .where('due_at', '<=', change.nowIso)
    .where('time_zones', '=', timeZones.join('&'))
    .where('state', 'in', ['pending', 'retry_wait'])
    .where(
      sql<boolean>`EXISTS (SELECT 1 FROM campaigns WHERE campaigns.id = ${campaignId} AND campaigns.calling_window = ${sameWindow})`,
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Why a campaign's queued call waits in the dispatch queue, on its contact (a single call has
 * none: nothing is written). Written only when it changes, so a call held for minutes costs one
 * write, not one per look.
 */
export async function noteQueuedCallWait(
  queries: StoreQueries,
  callId: string,
  reason: QueuedCallWait,
): Promise<void> {
  await queries.db
    .updateTable('campaign_contacts')
    .set({ waiting_reason: reason })
    .where(
      'id',
      '=',
      queries.db.selectFrom('campaign_attempts').select('contact_id').where('call_id', '=', callId),
    )
    .where('call_id', '=', callId)
    .where('state', '=', 'calling')
    .where(sql<boolean>`(waiting_reason IS NULL OR waiting_reason <> ${reason})`)
    .execute();
}

/** Places the campaign's next calls under another key (a resume after its key was revoked). */
export async function adoptApiKey(
  queries: StoreQueries,
  campaignId: string,
  apiKeyId: string,
): Promise<void> {
  await queries.db
    .updateTable('campaigns')
    .set({ api_key_id: apiKeyId })
    .where('id', '=', campaignId)
    .execute();
}
