import type { CallerIdWindow } from '../../domain/callerIdHealth.js';
import type { CallerIdHealthRepository } from '../callerIdHealthRepository.js';
import type { StoreQueries } from './dialects.js';

/** Caller-ID windows (kept by the trigger in src/store/callerIdHealthSql.ts) and rests, for both dialects. */
export class KyselyCallerIdHealth implements CallerIdHealthRepository {
  constructor(private readonly queries: StoreQueries) {}

  async windows(campaignId: string): Promise<CallerIdWindow[]> {
    const rows = await this.queries.db
      .selectFrom('campaign_caller_ids')
      .select(['caller_id', 'recent', 'rested_until'])
      .where('campaign_id', '=', campaignId)
      .execute();
    const { columns } = this.queries.dialect;
    return rows.map((row) => ({
      callerId: row.caller_id,
      recent: row.recent,
      restedUntil: columns.timeOrNull(row.rested_until),
    }));
  }

  async windowsOfCampaigns(campaignIds: readonly string[]): Promise<Map<string, CallerIdWindow[]>> {
    const byCampaign = new Map<string, CallerIdWindow[]>(campaignIds.map((id) => [id, []]));
    if (campaignIds.length === 0) return byCampaign;
    const rows = await this.queries.db
      .selectFrom('campaign_caller_ids')
      .select(['campaign_id', 'caller_id', 'recent', 'rested_until'])
      .where('campaign_id', 'in', [...new Set(campaignIds)])
      .execute();
    const { columns } = this.queries.dialect;
    for (const row of rows)
      byCampaign.get(row.campaign_id)?.push({
        callerId: row.caller_id,
        recent: row.recent,
        restedUntil: columns.timeOrNull(row.rested_until),
      });
    return byCampaign;
  }

  async rest(rest: {
    campaignId: string;
    callerId: string;
    pool: readonly string[];
    restedUntilIso: string;
    nowIso: string;
  }): Promise<boolean> {
    const { db, dialect } = this.queries;
    if (!rest.pool.includes(rest.callerId) || rest.pool.length < 2) return false;
    // One statement (SQLite's single write lock), under a per-campaign lock on PostgreSQL: the
    // count of the pool's rested numbers cannot change between the check and the write.
    const result = await dialect.serialized(db, `caller-id-rest:${rest.campaignId}`, (locked) =>
      locked
        .updateTable('campaign_caller_ids')
        .set({ rested_until: rest.restedUntilIso, recent: '' })
        .where('campaign_id', '=', rest.campaignId)
        .where('caller_id', '=', rest.callerId)
        .where((eb) => eb.or([eb('rested_until', 'is', null), eb('rested_until', '<=', rest.nowIso)]))
        .where(
          (eb) =>
            eb
              .selectFrom('campaign_caller_ids as others')
              .select((inner) => inner.fn.countAll().as('rested'))
              .where('others.campaign_id', '=', rest.campaignId)
              .where('others.caller_id', 'in', [...rest.pool])
              .where('others.caller_id', '<>', rest.callerId)
              .where('others.rested_until', '>', rest.nowIso),
          '<',
          rest.pool.length - 1,
        )
        .executeTakeFirst(),
    );
    return Number(result.numUpdatedRows) > 0;
  }
}
