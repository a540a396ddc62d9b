import {
  type CallerIdHealth,
  callerIdHealthOf,
  numbersToRest,
  rotationOf,
} from '../domain/callerIdHealth.js';
import type { CampaignRecord } from '../domain/campaigns.js';
import { maskPhone } from '../domain/phone.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/types.js';
import { StatusEventWriter } from '../webhooks/statusEventWriter.js';

/** What happened to a number that was rested, as the `number.rested` event and the log tell it. */
export interface NumberRested {
  campaignId: string;
  number: CallerIdHealth;
  poolRate: number;
  restedUntil: string;
}

/**
 * The numbers a campaign dials from at `nowMs`: first rests the active numbers whose answer rate
 * fell below the pool's (src/domain/callerIdHealth.ts) — each rest an atomic step in the store
 * that refuses the last active number and a number another process rested first — then returns
 * the pool less the rested numbers. `onRested` is called once per rest this process made.
 */
export async function callerIdRotation(
  store: Store,
  logger: Logger,
  campaign: CampaignRecord,
  nowMs: number,
  onRested: (rested: NumberRested) => Promise<void>,
): Promise<string[]> {
  const pool = campaign.callerIds;
  if (pool.length < 2) return [...pool];
  const settings = campaign.rules.callerIdHealth;
  let health = callerIdHealthOf(pool, await store.callerIdHealth.windows(campaign.id), nowMs);
  const candidates = numbersToRest(settings, health);
  if (candidates.length > 0) {
    const restedUntil = new Date(nowMs + settings.restMinutes * 60_000).toISOString();
    for (const { number, poolRate } of candidates) {
      const rested = await store.callerIdHealth.rest({
        campaignId: campaign.id,
        callerId: number.number,
        pool,
        restedUntilIso: restedUntil,
        nowIso: new Date(nowMs).toISOString(),
      });
      if (!rested) continue;
      logger.warn(
        {
          campaignId: campaign.id,
          callerId: maskPhone(number.number),
          answerRate: number.answerRate,
          poolRate,
          attempts: number.attempts,
          restedUntil,
        },
        'caller ID rested: answer rate far below the pool',
      );
      await onRested({ campaignId: campaign.id, number, poolRate, restedUntil });
    }
    health = callerIdHealthOf(pool, await store.callerIdHealth.windows(campaign.id), nowMs);
  }
  return rotationOf(pool, health);
}

/** The `number.rested` event (opt-in, once per rest): the number masked as in every webhook and log line. */
export async function announceNumberRested(
  store: Store,
  logger: Logger,
  accountId: string,
  rested: NumberRested,
): Promise<void> {
  const type = 'number.rested';
  await new StatusEventWriter(store.events, logger).write(
    accountId,
    type,
    { campaignId: rested.campaignId },
    (event) => ({
      type,
      id: event.id,
      created_at: event.createdAt,
      data: {
        campaign_id: rested.campaignId,
        number: maskPhone(rested.number.number),
        answer_rate: rested.number.answerRate,
        pool_answer_rate: rested.poolRate,
        attempts: rested.number.attempts,
        rested_until: rested.restedUntil,
        reason: 'low_answer_rate',
      },
    }),
  );
}
