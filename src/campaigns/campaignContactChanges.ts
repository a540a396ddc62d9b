import { agentNotFound } from '../calls/createOutboundCall.js';
import type { CampaignRecord } from '../domain/campaigns.js';
import { campaignLimits } from '../domain/campaigns.js';
import { AppError } from '../domain/errors.js';
import { isIdOf, newId } from '../domain/ids.js';
import { isPlainObject } from '../domain/outboundCallRequest.js';
import { isE164 } from '../domain/phone.js';
import type { Store } from '../store/types.js';
import { campaignOf } from './campaignControl.js';
import { type CampaignContactsSource, checkedContacts, storeDueAtOpenings } from './createCampaign.js';

/**
 * Live contact edits of a running or paused campaign (issue 37): contacts added (a JSON list or a
 * CSV file, checked exactly as at creation, line-numbered errors included, within the same cap on
 * a campaign's contacts) and contacts removed (by id or by number). Effective at the scheduler's
 * next claim; each change is recorded in the audit log (`campaign_contacts_added`,
 * `campaign_contacts_removed`) with who asked and how many — never the numbers.
 */

const changeableStatuses = new Set(['running', 'paused']);

function refuseUnlessChangeable(campaign: CampaignRecord): void {
  if (!changeableStatuses.has(campaign.status))
    throw new AppError('conflict', `a ${campaign.status} campaign cannot be changed`);
}

async function contactRowCount(store: Store, campaignId: string): Promise<number> {
  const progress = await store.campaigns.progress(campaignId);
  return Object.values(progress.states).reduce((sum, count) => sum + (count ?? 0), 0);
}

export async function addCampaignContacts(
  store: Store,
  accountId: string,
  campaignId: string,
  source: CampaignContactsSource,
  actor: string,
  now: () => Date = () => new Date(),
): Promise<{ campaign: CampaignRecord; added: number; firstPosition: number }> {
  const campaign = await campaignOf(store, accountId, campaignId);
  refuseUnlessChangeable(campaign);
  const agent = await store.agents.get(accountId, campaign.agentId);
  if (!agent?.active) throw agentNotFound(campaign.agentId);
  const contacts = await checkedContacts(
    source,
    agent,
    { callerId: campaign.callerIds[0] as string, timeZone: campaign.timeZone, action: 'added' },
    (numbers) => store.campaignContactEdits.numbersInCampaign(campaign.id, numbers),
  );
  const existing = await contactRowCount(store, campaign.id);
  if (existing + contacts.length > campaignLimits.contactsMax)
    throw new AppError(
      'validation_error',
      `contacts: the campaign has ${existing} contacts and may have at most ${campaignLimits.contactsMax}; nothing was added`,
    );
  const nowMs = now().getTime();
  const fromMs = Math.max(nowMs, campaign.startsAt ? Date.parse(campaign.startsAt) : nowMs);
  storeDueAtOpenings(
    contacts,
    { calling_window: campaign.callingWindow, ends_at: campaign.endsAt, rules: campaign.rules },
    fromMs,
  );
  const atIso = new Date(nowMs).toISOString();
  for (const contact of contacts) contact.dueAt ??= new Date(fromMs).toISOString();
  const firstPosition = await store.campaignContactEdits.appendContacts(campaign, contacts, atIso);
  const after = await campaignOf(store, accountId, campaign.id);
  if (firstPosition === null || !changeableStatuses.has(after.status)) {
    // The campaign ended between the check and the write: the new contacts go again, unseen.
    if (firstPosition !== null)
      await store.campaignContactEdits.deleteAddedContacts(
        campaign.id,
        contacts.map((contact) => contact.id),
      );
    throw new AppError('conflict', `a ${after.status} campaign cannot be changed`);
  }
  await store.privacy.addAudit({
    id: newId('audit'),
    accountId,
    action: 'campaign_contacts_added',
    actor,
    subject: campaign.id,
    detail: { added: contacts.length, first_position: firstPosition },
    createdAt: atIso,
  });
  return { campaign: after, added: contacts.length, firstPosition };
}

/** What to remove: `contact_ids` and/or `to_numbers`, at most `contactsMax` in all. */
export function parseContactRemoval(body: unknown): { contactIds: string[]; numbers: string[] } {
  if (!isPlainObject(body)) throw new AppError('validation_error', 'request body must be a JSON object');
  const unknown = Object.keys(body).filter((key) => key !== 'contact_ids' && key !== 'to_numbers');
  if (unknown.length > 0) throw new AppError('validation_error', `${unknown[0]} is not a field of a removal`);
  const list = (field: 'contact_ids' | 'to_numbers', valid: (value: string) => boolean, what: string) => {
    const value = body[field];
    if (value === undefined) return [];
    if (!Array.isArray(value) || value.length > campaignLimits.contactsMax)
      throw new AppError(
        'validation_error',
        `${field} must be a list of at most ${campaignLimits.contactsMax} ${what}`,
      );
    value.forEach((item, index) => {
      if (typeof item !== 'string' || !valid(item))
        throw new AppError('validation_error', `${field}[${index}] is not ${what}`);
    });
    return [...new Set(value as string[])];
  };
  const contactIds = list('contact_ids', (id) => isIdOf('campaignContact', id), 'a contact id (cct_…)');
  const numbers = list('to_numbers', isE164, 'an E.164 number');
  if (contactIds.length + numbers.length === 0)
    throw new AppError('validation_error', 'contact_ids or to_numbers must name at least one contact');
  if (contactIds.length + numbers.length > campaignLimits.contactsMax)
    throw new AppError('validation_error', `at most ${campaignLimits.contactsMax} contacts per removal`);
  return { contactIds, numbers };
}

/**
 * Removes contacts: a waiting one ends as canceled at once and is never dialled; one on a call is
 * not interrupted (its call goes on, a call still queued is not dialled) and ends as canceled when
 * its call is settled, never retried. Ids and numbers that match no waiting or calling contact
 * (unknown, finished, already removed) are counted as `unmatched`.
 */
export async function removeCampaignContacts(
  store: Store,
  accountId: string,
  campaignId: string,
  body: unknown,
  actor: string,
) {
  const campaign = await campaignOf(store, accountId, campaignId);
  const match = parseContactRemoval(body);
  refuseUnlessChangeable(campaign);
  const atIso = new Date().toISOString();
  const removed = await store.campaignContactEdits.removeContacts(campaign.id, match, atIso);
  const matchedIds = new Set(removed.map((contact) => contact.id));
  const matchedNumbers = new Set(removed.map((contact) => contact.toNumber));
  const unmatched =
    match.contactIds.filter((id) => !matchedIds.has(id)).length +
    match.numbers.filter((number) => !matchedNumbers.has(number)).length;
  const onCall = removed.filter((contact) => contact.was === 'calling').map((contact) => contact.id);
  const summary = { removed: removed.length, on_call: onCall.length, unmatched };
  await store.privacy.addAudit({
    id: newId('audit'),
    accountId,
    action: 'campaign_contacts_removed',
    actor,
    subject: campaign.id,
    detail: summary,
    createdAt: atIso,
  });
  return {
    campaign: await campaignOf(store, accountId, campaign.id),
    ...summary,
    removed_contact_ids: removed.map((contact) => contact.id),
    on_call_contact_ids: onCall,
  };
}
