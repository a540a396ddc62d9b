import type { CallAnalysis } from '../../domain/callAnalysis.js';
import type { FigureRow } from '../../domain/campaignFigures.js';
import type { ContactResult } from '../../domain/campaignResults.js';
import type { AttemptOutcome, ContactState } from '../../domain/campaigns.js';
import type { CampaignResultRepository } from '../campaignRepository.js';
import type { StoreQueries } from './dialects.js';

/**
 * Reads for the results export and the figures (issue 37): a page of contacts after a list
 * position with each one's latest call (the export walks a campaign page by page, never holding it
 * whole), and the few figure rows the trigger keeps (src/store/campaignFiguresSql.ts).
 */

async function contactResultsPage(
  queries: StoreQueries,
  campaignId: string,
  afterPosition: number,
  limit: number,
): Promise<ContactResult[]> {
  const { db, dialect } = queries;
  const rows = await db
    .selectFrom('campaign_contacts as contact')
    .leftJoin('calls', 'calls.id', 'contact.call_id')
    .select([
      'contact.id',
      'contact.position',
      'contact.to_number',
      'contact.state',
      'contact.removed_at',
      'contact.attempts',
      'contact.last_outcome',
      'calls.id as call_id',
      'calls.status as call_status',
      'calls.in_progress_at',
      'calls.ended_at',
      'calls.extracted_data',
      'calls.analysis',
      'calls.metrics',
    ])
    .where('contact.campaign_id', '=', campaignId)
    .where('contact.position', '>', afterPosition)
    .orderBy('contact.position')
    .limit(limit)
    .execute();
  return rows.map((row) => {
    const metrics = dialect.columns.json<{ cost?: { total_usd?: unknown } } | null>(row.metrics);
    const cost = metrics?.cost?.total_usd;
    return {
      contactId: row.id,
      position: Number(row.position),
      toNumber: row.to_number,
      state: row.state as ContactState,
      removed: row.removed_at !== null,
      attempts: Number(row.attempts),
      lastOutcome: (row.last_outcome as AttemptOutcome | null) ?? null,
      lastCall:
        row.call_id && row.call_status
          ? {
              id: row.call_id,
              status: row.call_status,
              inProgressAt: dialect.columns.timeOrNull(row.in_progress_at),
              endedAt: dialect.columns.timeOrNull(row.ended_at),
              extractedData: dialect.columns.json<Record<string, unknown> | null>(row.extracted_data),
              analysis: dialect.columns.json<CallAnalysis | null>(row.analysis) ?? null,
              costUsd: typeof cost === 'number' ? cost : null,
            }
          : null,
    };
  });
}

async function figureRows(queries: StoreQueries, campaignId: string): Promise<FigureRow[]> {
  const rows = await queries.db
    .selectFrom('campaign_figures')
    .selectAll()
    .where('campaign_id', '=', campaignId)
    .execute();
  return rows.map((row) => ({
    callerId: row.caller_id,
    localHour: Number(row.local_hour),
    attempts: Number(row.attempts),
    connectedMs: Number(row.connected_ms),
    costMicroUsd: Number(row.cost_micro_usd),
    answered: Number(row.answered),
    voicemail: Number(row.voicemail),
    succeeded: Number(row.succeeded),
  }));
}

/** The port (`store.campaignResults`), on the functions above. */
export class KyselyCampaignResults implements CampaignResultRepository {
  constructor(private readonly queries: StoreQueries) {}

  contactResults(campaignId: string, afterPosition: number, limit: number): Promise<ContactResult[]> {
    return contactResultsPage(this.queries, campaignId, afterPosition, limit);
  }

  figureRows(campaignId: string): Promise<FigureRow[]> {
    return figureRows(this.queries, campaignId);
  }
}
