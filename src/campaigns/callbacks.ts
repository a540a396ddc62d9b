import { DateTime } from 'luxon';
import { type CallbackRequest, type CallbackResult, callbackInstant } from '../domain/callbacks.js';
import type { Store } from '../store/types.js';
import { nextOpeningPastHolidays } from './holidays.js';

/**
 * The callee asked to be called back: the contact of this campaign call gets its next attempt at
 * that time in its zone — moved forward to the campaign's next window opening on a non-holiday if
 * it falls outside — kept on the contact until the call ends, when it becomes the contact's next
 * attempt (`waiting_reason: "callback"`; the attempt is not a failed one). A call outside a running
 * or paused campaign answers "not available", truthfully, and changes nothing.
 */
export async function scheduleCampaignCallback(
  store: Store,
  callId: string,
  request: CallbackRequest,
  nowMs: number = Date.now(),
): Promise<CallbackResult> {
  const owner = await store.campaigns.ofCall(callId);
  if (!owner)
    return {
      scheduled: false,
      reason: 'callbacks are not available on this call: it is not part of a campaign',
    };
  const { campaign, contact } = owner;
  if (campaign.status !== 'running' && campaign.status !== 'paused')
    return { scheduled: false, reason: `callbacks are not available: the campaign is ${campaign.status}` };
  const zone = contact.timeZones[0] ?? campaign.timeZone;
  const askedMs = callbackInstant(request, zone, nowMs);
  if (askedMs === null)
    return { scheduled: false, reason: 'that time is not a valid future time within 30 days' };
  const { openingMs } = nextOpeningPastHolidays(
    campaign.callingWindow,
    campaign.rules.holidays,
    { zones: contact.timeZones, toNumber: contact.toNumber },
    askedMs,
  );
  if (openingMs === null || (campaign.endsAt !== null && openingMs >= Date.parse(campaign.endsAt)))
    return { scheduled: false, reason: 'the campaign may not call at or after that time before it ends' };
  const callbackAt = new Date(openingMs).toISOString();
  if (!(await store.campaignRules.setCallback(contact.id, callId, callbackAt)))
    return { scheduled: false, reason: 'this call is no longer the contact’s current attempt' };
  return {
    scheduled: true,
    callbackAt,
    localTime: DateTime.fromMillis(openingMs, { zone }).toFormat("yyyy-MM-dd'T'HH:mm"),
    movedIntoWindow: openingMs !== askedMs,
  };
}
