import { sql } from 'kysely';
import type { ContactState } from '../../domain/campaigns.js';
import { AppError } from '../../domain/errors.js';
import type {
  CampaignContactEditRepository,
  NewCampaignContact,
  RemovedContact,
} from '../campaignRepository.js';
import type { StoreQueries } from './dialects.js';
import { jsonText } from './schema.js';

/**
 * Live contact edits (issue 37): contacts added to, or removed from, a running or paused campaign.
 * Each takes effect at the scheduler's next claim: an added contact is due like a new one, a
 * removed one is out of every claim (`removed_at`; the claim and the dispatcher's gate both check
 * it).
 */

/** Ids or numbers per statement: within both drivers' bound-parameter limits. */
const valuesPerStatement = 500;
/** Contact rows per INSERT (12 columns: 24,000 parameters), as at creation. */
const contactsPerInsert = 2_000;

function slices<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += size) out.push(items.slice(start, start + size));
  return out;
}

/** Which of `numbers` a contact of the campaign (not removed) already has. */
async function numbersInCampaign(
  queries: StoreQueries,
  campaignId: string,
  numbers: readonly string[],
): Promise<Set<string>> {
  const found = new Set<string>();
  for (const slice of slices(numbers, valuesPerStatement)) {
    const rows = await queries.db
      .selectFrom('campaign_contacts')
      .select('to_number')
      .where('campaign_id', '=', campaignId)
      .where('removed_at', 'is', null)
      .where('to_number', 'in', slice)
      .execute();
    for (const row of rows) found.add(row.to_number);
  }
  return found;
}

/**
 * Appends contacts after the campaign's last position, as pending and due at `contact.dueAt`. On
 * PostgreSQL in one transaction under a lock per campaign (two adds at once take turns); on SQLite,
 * whose Kysely has no transaction, two adds racing for the same positions make the later one fail
 * on the unique position (a 409 to retry), and a crash part-way keeps the rows written so far.
 * Returns the positions given, or null when the campaign was no longer running or paused.
 */
async function appendContacts(
  queries: StoreQueries,
  campaign: { id: string; accountId: string },
  contacts: readonly NewCampaignContact[],
  atIso: string,
): Promise<number | null> {
  return queries.dialect.serialized(queries.db, `campaign-contacts:${campaign.id}`, async (db) => {
    const running = await db
      .selectFrom('campaigns')
      .select('id')
      .where('id', '=', campaign.id)
      .where('status', 'in', ['running', 'paused'])
      .executeTakeFirst();
    if (!running) return null;
    const last = await db
      .selectFrom('campaign_contacts')
      .select((eb) => eb.fn.max('position').as('last'))
      .where('campaign_id', '=', campaign.id)
      .executeTakeFirst();
    const base = last?.last === null || last?.last === undefined ? 0 : Number(last.last) + 1;
    for (const [sliceIndex, slice] of slices(contacts, contactsPerInsert).entries()) {
      await insertOrConflict(
        queries,
        db
          .insertInto('campaign_contacts')
          .values(
            slice.map((contact, index) => ({
              id: contact.id,
              campaign_id: campaign.id,
              account_id: campaign.accountId,
              position: base + sliceIndex * contactsPerInsert + index,
              to_number: contact.toNumber,
              variables: jsonText(contact.variables),
              first_message: contact.firstMessage,
              context: contact.context,
              time_zones: contact.timeZones.join('&'),
              state: 'pending',
              due_at: contact.dueAt ?? atIso,
              waiting_reason: contact.waitingReason ?? null,
              updated_at: atIso,
            })),
          )
          .execute(),
      );
    }
    return base;
  });
}

/** Another add took the same positions first (SQLite): a 409 to retry. */
async function insertOrConflict(queries: StoreQueries, insert: Promise<unknown>): Promise<void> {
  try {
    await insert;
  } catch (error) {
    if (queries.dialect.isUniqueViolation(error))
      throw new AppError('conflict', 'contacts were being added to this campaign at the same time; retry');
    throw error;
  }
}

/** Deletes contacts just added to a campaign that ended meanwhile (they were never due to it). */
async function deleteAddedContacts(
  queries: StoreQueries,
  campaignId: string,
  ids: readonly string[],
): Promise<void> {
  for (const slice of slices(ids, valuesPerStatement))
    await queries.db
      .deleteFrom('campaign_contacts')
      .where('campaign_id', '=', campaignId)
      .where('state', '=', 'pending')
      .where('id', 'in', slice)
      .execute();
}

/**
 * Marks the matching contacts (by id or by number) removed, in one statement per slice: a waiting
 * one ends as `canceled` at once; one on a call keeps its call and ends as `canceled` when the
 * call is settled (never retried). Contacts already finished or removed are left alone.
 * Returns the contacts marked, as they were before.
 */
async function markContactsRemoved(
  queries: StoreQueries,
  campaignId: string,
  match: { contactIds: readonly string[]; numbers: readonly string[] },
  atIso: string,
): Promise<RemovedContact[]> {
  const removed: RemovedContact[] = [];
  const batches = [
    ...slices(match.contactIds, valuesPerStatement).map((ids) => ({ column: 'id' as const, values: ids })),
    ...slices(match.numbers, valuesPerStatement).map((numbers) => ({
      column: 'to_number' as const,
      values: numbers,
    })),
  ];
  for (const batch of batches) {
    const waiting = await queries.db
      .updateTable('campaign_contacts')
      .set({ state: 'canceled', due_at: null, waiting_reason: null, removed_at: atIso, updated_at: atIso })
      .where('campaign_id', '=', campaignId)
      .where('removed_at', 'is', null)
      .where('state', 'in', ['pending', 'retry_wait'])
      .where(batch.column, 'in', batch.values)
      .returning(['id', 'to_number'])
      .execute();
    removed.push(...waiting.map((row) => ({ id: row.id, toNumber: row.to_number, was: 'waiting' as const })));
    const calling = await queries.db
      .updateTable('campaign_contacts')
      .set({ removed_at: atIso, updated_at: atIso })
      .where('campaign_id', '=', campaignId)
      .where('removed_at', 'is', null)
      .where('state', '=', 'calling')
      .where(batch.column, 'in', batch.values)
      .returning(['id', 'to_number'])
      .execute();
    removed.push(...calling.map((row) => ({ id: row.id, toNumber: row.to_number, was: 'calling' as const })));
  }
  return removed;
}

/**
 * What `settle` writes: a removed contact is never retried — where the retry rules would have it
 * wait for another attempt, it ends as canceled (a finished outcome stays as it is).
 */
export function settledUnlessRemoved(
  queries: StoreQueries,
  next: { state: ContactState; dueAtIso: string | null },
) {
  if (next.state !== 'retry_wait') return { state: next.state, due_at: next.dueAtIso };
  return {
    state: sql<string>`CASE WHEN removed_at IS NULL THEN ${next.state} ELSE 'canceled' END`,
    due_at:
      next.dueAtIso === null
        ? null
        : sql<string>`CASE WHEN removed_at IS NULL THEN ${queries.dialect.timestamp(next.dueAtIso)} END`,
  };
}

/** The port (`store.campaignContactEdits`), on the functions above. */
export class KyselyCampaignContactEdits implements CampaignContactEditRepository {
  constructor(private readonly queries: StoreQueries) {}

  numbersInCampaign(campaignId: string, numbers: readonly string[]): Promise<Set<string>> {
    return numbersInCampaign(this.queries, campaignId, numbers);
  }

  appendContacts(
    campaign: { id: string; accountId: string },
    contacts: readonly NewCampaignContact[],
    atIso: string,
  ): Promise<number | null> {
    return appendContacts(this.queries, campaign, contacts, atIso);
  }

  deleteAddedContacts(campaignId: string, contactIds: readonly string[]): Promise<void> {
    return deleteAddedContacts(this.queries, campaignId, contactIds);
  }

  removeContacts(
    campaignId: string,
    match: { contactIds: readonly string[]; numbers: readonly string[] },
    atIso: string,
  ): Promise<RemovedContact[]> {
    return markContactsRemoved(this.queries, campaignId, match, atIso);
  }
}
