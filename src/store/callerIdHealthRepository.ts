import type { CallerIdWindow } from '../domain/callerIdHealth.js';

/** Each caller ID's window of recent outcomes in a campaign, and its rests (src/domain/callerIdHealth.ts). */
export interface CallerIdHealthRepository {
  /** The windows kept so far for the campaign's numbers (a number never finished a call has none). */
  windows(campaignId: string): Promise<CallerIdWindow[]>;
  /** The windows of several campaigns in one query (a page of the campaign list), by campaign id. */
  windowsOfCampaigns(campaignIds: readonly string[]): Promise<Map<string, CallerIdWindow[]>>;
  /**
   * Rests `callerId` until `restedUntilIso` and starts its window afresh — unless it is already
   * rested, or every other number of `pool` is: one atomic check-then-write across processes, so
   * two workers never both rest it, nor rest the last active number. True when this call rested it.
   */
  rest(rest: {
    campaignId: string;
    callerId: string;
    pool: readonly string[];
    restedUntilIso: string;
    nowIso: string;
  }): Promise<boolean>;
}
