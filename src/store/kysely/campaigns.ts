import { type Kysely, sql } from 'kysely';
import type { CallingWindow } from '../../domain/callingWindow.js';
import type { CampaignEdit } from '../../domain/campaignEdits.js';
import {
  type AttemptOutcome,
  attemptOutcomes,
  type CampaignContactRecord,
  type CampaignRecord,
  type CampaignStatus,
  type ContactState,
  contactStates,
} from '../../domain/campaigns.js';
import type { CampaignStatusReason, QueuedCallWait, WaitingReason } from '../../domain/campaignWaits.js';
import type {
  CampaignAttempt,
  CampaignProgress,
  CampaignRepository,
  NewCampaignContact,
  SettledAttempt,
} from '../types.js';
import { settledUnlessRemoved } from './campaignContactEdits.js';
import { reopenWindowWaits, updateCampaignSettings } from './campaignEdits.js';
import { campaignFromRow, contactFromRow } from './campaignRows.js';
import { campaignCapsOpen, campaignRulesColumns, dueContactsByPriority } from './campaignRules.js';
import { adoptApiKey, deferZone, noteQueuedCallWait, releaseClaim } from './campaignWaits.js';
import type { StoreQueries } from './dialects.js';
import { type Database, jsonText } from './schema.js';

const terminalCallStatuses = ['completed', 'busy', 'no_answer', 'failed', 'canceled'];
/** Contact rows per INSERT: 24,000 parameters, within both drivers' limits (SQLite 32,766; PostgreSQL 65,535). */
const contactsPerInsert = 2_000;

/** Campaigns, their contacts and attempts, written once for both dialects. */
export class KyselyCampaigns implements CampaignRepository {
  constructor(private readonly queries: StoreQueries) {}

  /**
   * The contacts first, then the campaign row: a campaign is listed (and scheduled) only once all
   * its contacts are stored. PostgreSQL writes all of it in one transaction; on SQLite, whose
   * Kysely has none, contacts left by a crash before the campaign row belong to no campaign.
   */
  async create(campaign: CampaignRecord, contacts: readonly NewCampaignContact[]): Promise<CampaignRecord> {
    const write = async (db: Kysely<Database>) => {
      const dueAt = campaign.startsAt ?? campaign.createdAt;
      for (let start = 0; start < contacts.length; start += contactsPerInsert) {
        await db
          .insertInto('campaign_contacts')
          .values(
            contacts.slice(start, start + contactsPerInsert).map((contact) => ({
              id: contact.id,
              campaign_id: campaign.id,
              account_id: campaign.accountId,
              position: contact.position,
              to_number: contact.toNumber,
              variables: jsonText(contact.variables),
              first_message: contact.firstMessage,
              context: contact.context,
              time_zones: contact.timeZones.join('&'),
              state: 'pending',
              due_at: contact.dueAt ?? dueAt,
              waiting_reason: contact.waitingReason ?? null,
              priority: contact.priority ?? 0,
              updated_at: campaign.createdAt,
            })),
          )
          .execute();
      }
      await db
        .insertInto('campaigns')
        .values({
          id: campaign.id,
          account_id: campaign.accountId,
          api_key_id: campaign.apiKeyId,
          name: campaign.name,
          agent_id: campaign.agentId,
          caller_ids: jsonText(campaign.callerIds),
          caller_id_selection: campaign.callerIdSelection,
          calling_window: jsonText(campaign.callingWindow),
          time_zone: campaign.timeZone,
          max_concurrency: campaign.maxConcurrency,
          calls_per_minute: campaign.callsPerMinute,
          max_daily_attempts: campaign.maxDailyAttempts,
          retry_policy: jsonText(campaign.retry),
          starts_at: campaign.startsAt,
          ends_at: campaign.endsAt,
          status: campaign.status,
          contact_count: contacts.length,
          created_at: campaign.createdAt,
          completed_at: null,
          status_reason: campaign.statusReason,
          ...campaignRulesColumns(campaign.rules),
        })
        .execute();
    };
    const { db, dialect } = this.queries;
    if (dialect.name === 'postgres') await db.transaction().execute(write);
    else await write(db);
    return { ...campaign, contactCount: contacts.length };
  }

  async get(accountId: string, campaignId: string): Promise<CampaignRecord | null> {
    const row = await this.queries.db
      .selectFrom('campaigns')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', campaignId)
      .executeTakeFirst();
    return row ? campaignFromRow(row, this.queries.dialect.columns) : null;
  }

  async list(accountId: string, options: { limit: number; before?: string }): Promise<CampaignRecord[]> {
    const rows = await this.queries.db
      .selectFrom('campaigns')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '<', options.before ?? '~')
      .orderBy('id', 'desc')
      .limit(options.limit)
      .execute();
    return rows.map((row) => campaignFromRow(row, this.queries.dialect.columns));
  }

  async completedWithoutEvent(fromIso: string, toIso: string, limit: number): Promise<CampaignRecord[]> {
    const rows = await this.queries.db
      .selectFrom('campaigns')
      .selectAll()
      .where('status', '=', 'completed')
      .where('completed_at', '>=', fromIso)
      .where('completed_at', '<', toIso)
      .where(({ and, not, exists, selectFrom }) =>
        and([
          // Only where the event would be kept: the account's endpoint asks for it.
          exists(
            selectFrom('webhook_endpoints')
              .select('webhook_endpoints.account_id')
              .whereRef('webhook_endpoints.account_id', '=', 'campaigns.account_id')
              .where('webhook_endpoints.event_types', 'like', '%"campaign.completed"%'),
          ),
          not(
            exists(
              selectFrom('events')
                .select('events.id')
                .whereRef('events.campaign_id', '=', 'campaigns.id')
                .where('events.type', '=', 'campaign.completed'),
            ),
          ),
        ]),
      )
      .limit(limit)
      .execute();
    return rows.map((row) => campaignFromRow(row, this.queries.dialect.columns));
  }

  async listActive(): Promise<CampaignRecord[]> {
    const rows = await this.queries.db
      .selectFrom('campaigns')
      .selectAll()
      .where((eb) =>
        eb.or([
          eb('status', '=', 'running'),
          eb.and([
            eb('status', 'in', ['paused', 'canceled']),
            sql<boolean>`EXISTS (SELECT 1 FROM campaign_contacts AS busy WHERE busy.campaign_id = campaigns.id AND busy.state = 'calling')`,
          ]),
        ]),
      )
      .execute();
    return rows.map((row) => campaignFromRow(row, this.queries.dialect.columns));
  }

  async setStatus(
    campaignId: string,
    from: readonly CampaignStatus[],
    to: CampaignStatus,
    reason: CampaignStatusReason | null = null,
  ): Promise<boolean> {
    const result = await this.queries.db
      .updateTable('campaigns')
      .set({ status: to, status_reason: reason })
      .where('id', '=', campaignId)
      .where('status', 'in', [...from])
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async complete(campaignId: string, atIso: string): Promise<boolean> {
    const result = await this.queries.db
      .updateTable('campaigns')
      .set({ status: 'completed', completed_at: atIso })
      .where('id', '=', campaignId)
      .where('status', '=', 'running')
      .where(
        sql<boolean>`NOT EXISTS (SELECT 1 FROM campaign_contacts AS open WHERE open.campaign_id = ${campaignId} AND open.state IN ('pending', 'calling', 'retry_wait'))`,
      )
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** One primary-key read of the counters the triggers keep (campaignCounterSql.ts). */
  async progress(campaignId: string): Promise<CampaignProgress> {
    const row = await this.queries.db
      .selectFrom('campaign_counters')
      .selectAll()
      .where('campaign_id', '=', campaignId)
      .executeTakeFirst();
    const progress: CampaignProgress = { states: {}, outcomes: {} };
    if (!row) return progress;
    for (const state of contactStates) {
      const count = Number(row[`state_${state}`]);
      if (count > 0) progress.states[state] = count;
    }
    for (const outcome of attemptOutcomes) {
      const count = Number(row[`outcome_${outcome}`]);
      if (count > 0) progress.outcomes[outcome] = count;
    }
    return progress;
  }

  /** Highest priority first, then earliest due, then list order (campaignRules.ts). */
  dueContacts(campaignId: string, nowIso: string, limit: number): Promise<CampaignContactRecord[]> {
    return dueContactsByPriority(this.queries, campaignId, nowIso, limit);
  }

  async countCalling(campaignId: string): Promise<number> {
    const row = await this.queries.db
      .selectFrom('campaign_contacts')
      .select((eb) => eb.fn.countAll().as('count'))
      .where('campaign_id', '=', campaignId)
      .where('state', '=', 'calling')
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  async latestClaimAt(campaignId: string): Promise<string | null> {
    const row = await this.queries.db
      .selectFrom('campaign_contacts')
      .select((eb) => eb.fn.max('claimed_at').as('latest'))
      .where('campaign_id', '=', campaignId)
      .executeTakeFirst();
    return this.queries.dialect.columns.timeOrNull(row?.latest ?? null);
  }

  /**
   * The race-free start of one attempt: in one serialized statement, the contact moves to
   * `calling` only if it is still due with the attempts the scheduler saw, the campaign runs, fewer
   * than `max_concurrency` of its contacts are on a call, and no attempt started after
   * `spacingSinceIso` (the pace). Several schedulers may try the same contact; one wins.
   */
  async claimContact(
    campaign: CampaignRecord,
    contact: CampaignContactRecord,
    claim: {
      callId: string;
      nowIso: string;
      claimedAtIso: string;
      spacingSinceIso: string;
      dayAgoIso: string;
      /** For the campaign's hourly cap; the daily one counts from `dayAgoIso`. */
      hourAgoIso?: string;
    },
  ): Promise<boolean> {
    const campaignId = campaign.id;
    const result = await this.queries.dialect.serialized(
      this.queries.db,
      `campaign-claims:${campaign.accountId}`,
      (db) =>
        db
          .updateTable('campaign_contacts')
          .set({
            state: 'calling',
            attempts: sql`attempts + 1`,
            due_at: null,
            claimed_at: claim.claimedAtIso,
            call_id: claim.callId,
            updated_at: claim.nowIso,
            waiting_reason: null,
          })
          .where('id', '=', contact.id)
          .where('state', 'in', ['pending', 'retry_wait'])
          .where('removed_at', 'is', null)
          .where('attempts', '=', contact.attempts)
          .where('due_at', '<=', claim.nowIso)
          .where(
            sql<boolean>`(SELECT count(*) FROM campaign_contacts AS busy WHERE busy.campaign_id = ${campaignId} AND busy.state = 'calling') < ${campaign.maxConcurrency}`,
          )
          .where(
            sql<boolean>`NOT EXISTS (SELECT 1 FROM campaign_contacts AS recent WHERE recent.campaign_id = ${campaignId} AND recent.claimed_at > ${claim.spacingSinceIso})`,
          )
          .where(
            sql<boolean>`EXISTS (SELECT 1 FROM campaigns WHERE campaigns.id = ${campaignId} AND campaigns.status = 'running')`,
          )
          .where(
            sql<boolean>`(SELECT count(*) FROM calls WHERE calls.account_id = ${campaign.accountId} AND calls.to_number = ${contact.toNumber} AND calls.created_at > ${claim.dayAgoIso}) < ${campaign.maxDailyAttempts}`,
          )
          .where(campaignCapsOpen(campaignId, claim))
          .executeTakeFirst(),
    );
    return Number(result.numUpdatedRows) > 0;
  }

  async callsToNumberSince(
    accountId: string,
    number: string,
    sinceIso: string,
  ): Promise<{ count: number; oldestAt: string | null }> {
    const row = await this.queries.db
      .selectFrom('calls')
      .select((eb) => [eb.fn.countAll().as('count'), eb.fn.min('created_at').as('oldest')])
      .where('account_id', '=', accountId)
      .where('to_number', '=', number)
      .where('created_at', '>', sinceIso)
      .executeTakeFirst();
    return {
      count: Number(row?.count ?? 0),
      oldestAt: this.queries.dialect.columns.timeOrNull(row?.oldest ?? null),
    };
  }

  async recordAttempt(attempt: Omit<CampaignAttempt, 'call'>): Promise<void> {
    await this.queries.db
      .insertInto('campaign_attempts')
      .values({
        call_id: attempt.callId,
        campaign_id: attempt.campaignId,
        contact_id: attempt.contactId,
        attempt: attempt.attempt,
        created_at: attempt.createdAt,
        local_hour: attempt.localHour ?? null,
      })
      .onConflict((conflict) => conflict.column('call_id').doNothing())
      .execute();
  }

  /** Moves a waiting contact (still as the scheduler saw it) to another state or due time. */
  async updateWaiting(
    contact: CampaignContactRecord,
    change: { state: ContactState; dueAtIso: string | null; waitingReason?: WaitingReason | null },
    atIso: string,
  ): Promise<boolean> {
    const result = await this.queries.db
      .updateTable('campaign_contacts')
      .set({
        state: change.state,
        due_at: change.dueAtIso,
        updated_at: atIso,
        ...(change.waitingReason !== undefined ? { waiting_reason: change.waitingReason } : {}),
      })
      .where('id', '=', contact.id)
      .where('state', '=', contact.state)
      .where('attempts', '=', contact.attempts)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Contacts on a call that has ended, with how it ended (at most `limit`). */
  async endedAttempts(campaignId: string, limit: number): Promise<SettledAttempt[]> {
    const rows = await this.queries.db
      .selectFrom('campaign_contacts as contact')
      .innerJoin('calls', 'calls.id', 'contact.call_id')
      .selectAll('contact')
      .select([
        'calls.status as call_status',
        'calls.end_reason as call_end_reason',
        'calls.answered_by as call_answered_by',
      ])
      .where('contact.campaign_id', '=', campaignId)
      .where('contact.state', '=', 'calling')
      .where('calls.status', 'in', terminalCallStatuses)
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      contact: contactFromRow(row, this.queries.dialect.columns),
      call: { status: row.call_status, endReason: row.call_end_reason, answeredBy: row.call_answered_by },
    }));
  }

  /** Contacts claimed before `beforeIso` whose call was never written (their scheduler died). */
  async claimsWithoutCall(campaignId: string, beforeIso: string): Promise<CampaignContactRecord[]> {
    const rows = await this.queries.db
      .selectFrom('campaign_contacts as contact')
      .leftJoin('calls', 'calls.id', 'contact.call_id')
      .selectAll('contact')
      .where('contact.campaign_id', '=', campaignId)
      .where('contact.state', '=', 'calling')
      // When the claim was made (claimed_at is the pace slot it took, up to one spacing earlier).
      .where('contact.updated_at', '<', beforeIso)
      .where('calls.id', 'is', null)
      .limit(100)
      .execute();
    return rows.map((row) => contactFromRow(row, this.queries.dialect.columns));
  }

  /** Finishes an attempt once: only while the contact is still on that call. */
  async settle(
    contact: CampaignContactRecord,
    next: { state: ContactState; dueAtIso: string | null; outcome: AttemptOutcome | null },
    atIso: string,
  ): Promise<boolean> {
    const result = await this.queries.db
      .updateTable('campaign_contacts')
      .set({
        ...settledUnlessRemoved(this.queries, next),
        last_outcome: next.outcome,
        updated_at: atIso,
        waiting_reason: null,
      })
      .where('id', '=', contact.id)
      .where('state', '=', 'calling')
      .where('call_id', '=', contact.callId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Ends every contact still waiting (a canceled or ended campaign); returns how many. */
  async endWaiting(campaignId: string, state: 'canceled' | 'expired', atIso: string): Promise<number> {
    const result = await this.queries.db
      .updateTable('campaign_contacts')
      .set({ state, due_at: null, updated_at: atIso })
      .where('campaign_id', '=', campaignId)
      .where('state', 'in', ['pending', 'retry_wait'])
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async listContacts(
    campaignId: string,
    options: { limit: number; afterPosition?: number; state?: ContactState },
  ): Promise<CampaignContactRecord[]> {
    let query = this.queries.db
      .selectFrom('campaign_contacts')
      .selectAll()
      .where('campaign_id', '=', campaignId)
      .where('position', '>', options.afterPosition ?? -1)
      .orderBy('position')
      .limit(options.limit);
    if (options.state) query = query.where('state', '=', options.state);
    return (await query.execute()).map((row) => contactFromRow(row, this.queries.dialect.columns));
  }

  async attemptsOf(contactIds: readonly string[]): Promise<CampaignAttempt[]> {
    if (contactIds.length === 0) return [];
    const rows = await this.queries.db
      .selectFrom('campaign_attempts as attempt')
      .leftJoin('calls', 'calls.id', 'attempt.call_id')
      .select([
        'attempt.call_id',
        'attempt.campaign_id',
        'attempt.contact_id',
        'attempt.attempt',
        'attempt.created_at',
        'calls.status',
        'calls.end_reason',
        'calls.answered_by',
      ])
      .where('attempt.contact_id', 'in', [...contactIds])
      .orderBy('attempt.contact_id')
      .orderBy('attempt.attempt')
      .execute();
    return rows.map((row) => ({
      callId: row.call_id,
      campaignId: row.campaign_id,
      contactId: row.contact_id,
      attempt: Number(row.attempt),
      createdAt: this.queries.dialect.columns.time(row.created_at),
      call: row.status
        ? { status: row.status, endReason: row.end_reason, answeredBy: row.answered_by }
        : null,
    }));
  }

  /** The campaign and contact an attempt's call belongs to, or null for a single call. */
  async ofCall(callId: string): Promise<{ campaign: CampaignRecord; contact: CampaignContactRecord } | null> {
    const attempt = await this.queries.db
      .selectFrom('campaign_attempts')
      .select(['campaign_id', 'contact_id'])
      .where('call_id', '=', callId)
      .executeTakeFirst();
    if (!attempt) return null;
    const [campaign, contact] = await Promise.all([
      this.queries.db
        .selectFrom('campaigns')
        .selectAll()
        .where('id', '=', attempt.campaign_id)
        .executeTakeFirst(),
      this.queries.db
        .selectFrom('campaign_contacts')
        .selectAll()
        .where('id', '=', attempt.contact_id)
        .executeTakeFirst(),
    ]);
    if (!campaign || !contact) return null;
    return {
      campaign: campaignFromRow(campaign, this.queries.dialect.columns),
      contact: contactFromRow(contact, this.queries.dialect.columns),
    };
  }

  releaseClaim(contact: CampaignContactRecord, callId: string, atIso: string): Promise<boolean> {
    return releaseClaim(this.queries, contact, callId, atIso);
  }

  deferZone(
    campaignId: string,
    timeZones: readonly string[],
    change: { nowIso: string; dueAtIso: string; reason: WaitingReason; window: CallingWindow },
  ): Promise<number> {
    return deferZone(this.queries, campaignId, timeZones, change);
  }

  noteQueuedCallWait(callId: string, reason: QueuedCallWait): Promise<void> {
    return noteQueuedCallWait(this.queries, callId, reason);
  }

  adoptApiKey(campaignId: string, apiKeyId: string): Promise<void> {
    return adoptApiKey(this.queries, campaignId, apiKeyId);
  }

  updateSettings(campaignId: string, edit: CampaignEdit): Promise<boolean> {
    return updateCampaignSettings(this.queries, campaignId, edit);
  }

  reopenWindowWaits(campaignId: string, nowIso: string): Promise<number> {
    return reopenWindowWaits(this.queries, campaignId, nowIso);
  }
}
