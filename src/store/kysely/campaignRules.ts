import { type RawBuilder, sql } from 'kysely';
import { type CampaignRules, campaignRuleLimits } from '../../domain/campaignRules.js';
import type { AttemptOutcome, CampaignContactRecord } from '../../domain/campaigns.js';
import type { CampaignRulesRepository } from '../campaignRepository.js';
import { contactFromRow } from './campaignRows.js';
import type { StoreQueries } from './dialects.js';
import { jsonText } from './schema.js';

/** The columns of the rules given (a PATCH writes only those). */
export function campaignRulesColumns(rules: Partial<CampaignRules>) {
  return {
    ...(rules.maxCallsPerHour !== undefined ? { max_calls_per_hour: rules.maxCallsPerHour } : {}),
    ...(rules.maxCallsPerDay !== undefined ? { max_calls_per_day: rules.maxCallsPerDay } : {}),
    ...(rules.holidays !== undefined ? { holidays: jsonText(rules.holidays) } : {}),
    ...(rules.callerIdHealth !== undefined ? { caller_id_health: jsonText(rules.callerIdHealth) } : {}),
  };
}

const hourMs = 3_600_000;
const dayMs = 86_400_000;

/**
 * The part of the claim's WHERE that keeps the campaign's caps: fewer claims in the last hour than
 * `max_calls_per_hour` and in the last 24 h than `max_calls_per_day` (the live settings, read in
 * the statement). The claims are rows of `campaign_claims`, which a trigger writes in the claiming
 * statement itself; claims are serialized per account (one statement on SQLite, an advisory lock
 * on PostgreSQL), so two schedulers cannot both take the last place under a cap.
 */
export function campaignCapsOpen(
  campaignId: string,
  claim: { dayAgoIso: string; hourAgoIso?: string },
): RawBuilder<boolean> {
  const hourAgoIso = claim.hourAgoIso ?? new Date(Date.parse(claim.dayAgoIso) + dayMs - hourMs).toISOString();
  const since = (iso: string) =>
    sql`(SELECT count(*) FROM campaign_claims AS claim WHERE claim.campaign_id = ${campaignId} AND claim.claimed_at > ${iso})`;
  return sql<boolean>`NOT EXISTS (SELECT 1 FROM campaigns AS capped WHERE capped.id = ${campaignId} AND (
    (capped.max_calls_per_hour IS NOT NULL AND ${since(hourAgoIso)} >= capped.max_calls_per_hour)
    OR (capped.max_calls_per_day IS NOT NULL AND ${since(claim.dayAgoIso)} >= capped.max_calls_per_day)))`;
}

/** Priority levels looked at in one read at most: every level a contact may have. */
const priorityLevelsMax = campaignRuleLimits.priorityMax - campaignRuleLimits.priorityMin + 1;

/**
 * The campaign's due contacts, highest priority first, then earliest due, then list order — read
 * level by level on the index `(campaign_id, priority desc, due_at, position)`: the highest level
 * holding any timed contact (one index seek), its due contacts (a range of that level), then the
 * next level down while fewer than `limit` were found. The cost follows the due contacts and the
 * levels above them, never the contacts that wait: sorting every due row by priority (or walking
 * the index past the future ones) would make a tick cost the list.
 */
export async function dueContactsByPriority(
  queries: StoreQueries,
  campaignId: string,
  nowIso: string,
  limit: number,
): Promise<CampaignContactRecord[]> {
  const found: CampaignContactRecord[] = [];
  let below: number | null = null;
  for (let levels = 0; levels < priorityLevelsMax && found.length < limit; levels += 1) {
    let top = queries.db
      .selectFrom('campaign_contacts')
      .select('priority')
      .where('campaign_id', '=', campaignId)
      .where('due_at', 'is not', null);
    if (below !== null) top = top.where('priority', '<', below);
    const level = await top.orderBy('priority', 'desc').limit(1).executeTakeFirst();
    if (!level) break;
    const priority = Number(level.priority);
    const rows = await queries.db
      .selectFrom('campaign_contacts')
      .selectAll()
      .where('campaign_id', '=', campaignId)
      .where('priority', '=', priority)
      .where('due_at', 'is not', null)
      .where('due_at', '<=', nowIso)
      .orderBy('due_at')
      .orderBy('position')
      .limit(limit - found.length)
      .execute();
    found.push(...rows.map((row) => contactFromRow(row, queries.dialect.columns)));
    below = priority;
  }
  return found;
}

/** The reads the scheduler and the API make of the caps' ledger. */
export class KyselyCampaignRules implements CampaignRulesRepository {
  constructor(private readonly queries: StoreQueries) {}

  async claimsSince(
    campaignId: string,
    sinceIso: string,
  ): Promise<{ count: number; oldestAt: string | null }> {
    const row = await this.queries.db
      .selectFrom('campaign_claims')
      .select((eb) => [eb.fn.countAll().as('count'), eb.fn.min('claimed_at').as('oldest')])
      .where('campaign_id', '=', campaignId)
      .where('claimed_at', '>', sinceIso)
      .executeTakeFirst();
    return {
      count: Number(row?.count ?? 0),
      oldestAt: this.queries.dialect.columns.timeOrNull(row?.oldest ?? null),
    };
  }

  async reopenHolidayWaits(campaignId: string, nowIso: string): Promise<number> {
    const result = await this.queries.db
      .updateTable('campaign_contacts')
      .set({ due_at: nowIso, waiting_reason: null, updated_at: nowIso })
      .where('campaign_id', '=', campaignId)
      .where('state', 'in', ['pending', 'retry_wait'])
      .where('waiting_reason', '=', 'holiday')
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async setCallback(contactId: string, callId: string, callbackAtIso: string): Promise<boolean> {
    const result = await this.queries.db
      .updateTable('campaign_contacts')
      .set({ callback_at: callbackAtIso })
      .where('id', '=', contactId)
      .where('state', '=', 'calling')
      .where('call_id', '=', callId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async settleWithCallback(
    contact: CampaignContactRecord,
    outcome: AttemptOutcome | null,
    atIso: string,
  ): Promise<boolean> {
    const result = await this.queries.db
      .updateTable('campaign_contacts')
      .set({
        state: 'retry_wait',
        due_at: sql`callback_at`,
        callback_at: null,
        last_outcome: outcome,
        waiting_reason: 'callback',
        updated_at: atIso,
      })
      .where('id', '=', contact.id)
      .where('state', '=', 'calling')
      .where('call_id', '=', contact.callId)
      .where('callback_at', 'is not', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }
}
