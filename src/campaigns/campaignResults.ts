import { type CampaignFiguresResource, campaignFiguresOf } from '../domain/campaignFigures.js';
import {
  csvHeaderLine,
  csvLine,
  describeResult,
  jsonLine,
  type ResultFormat,
} from '../domain/campaignResults.js';
import type { CampaignRecord } from '../domain/campaigns.js';
import type { Store } from '../store/types.js';

/** Contacts read per page of the export: one chunk written per page. */
export const resultsPageSize = 500;

/**
 * A campaign's results as text chunks (a header line for CSV, then one chunk per page of contacts
 * in list order): the store is read page by page after the last position seen, so the export
 * holds one page at a time however long the list, and a reader that stops (a closed connection)
 * stops the reads.
 */
export async function* campaignResultChunks(
  store: Store,
  campaign: CampaignRecord,
  format: ResultFormat,
  pageSize: number = resultsPageSize,
): AsyncGenerator<string> {
  if (format === 'csv') yield csvHeaderLine();
  const line = format === 'csv' ? csvLine : jsonLine;
  let after = -1;
  for (;;) {
    const page = await store.campaignResults.contactResults(campaign.id, after, pageSize);
    if (page.length > 0) yield page.map((result) => line(describeResult(result))).join('');
    if (page.length < pageSize) return;
    after = page.at(-1)?.position ?? after;
  }
}

/** The figures of a campaign, from the sums kept as its calls finished. */
export async function campaignFigures(
  store: Store,
  campaign: CampaignRecord,
): Promise<CampaignFiguresResource> {
  return campaignFiguresOf(campaign.id, await store.campaignResults.figureRows(campaign.id));
}
