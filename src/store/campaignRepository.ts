import type { CallingWindow } from '../domain/callingWindow.js';
import type { CampaignEdit } from '../domain/campaignEdits.js';
import type { FigureRow } from '../domain/campaignFigures.js';
import type { ContactResult } from '../domain/campaignResults.js';
import type {
  AttemptOutcome as CampaignAttemptOutcome,
  CampaignContactRecord,
  CampaignRecord,
  CampaignStatus,
  ContactState,
} from '../domain/campaigns.js';
import type { CampaignStatusReason, QueuedCallWait, WaitingReason } from '../domain/campaignWaits.js';
import type { VariableValue } from '../domain/templates.js';

/** The campaign ports of the store (src/store/types.ts re-exports them). */

/** A contact as a campaign is created: its zones already resolved. */
export interface NewCampaignContact {
  id: string;
  position: number;
  toNumber: string;
  variables: Record<string, VariableValue> | null;
  firstMessage: string | null;
  context: string | null;
  timeZones: string[];
  /** When it is first due (its window's next opening); the campaign's start when absent. */
  dueAt?: string;
  waitingReason?: WaitingReason | null;
  /** Higher first among due contacts; 0 when absent. */
  priority?: number;
}

/** A contact matched by a removal: its id, number, and what it was doing. */
export interface RemovedContact {
  id: string;
  toNumber: string;
  /** Waiting (now canceled) or on a call (canceled once the call is settled, never retried). */
  was: 'waiting' | 'calling';
}

/** How an attempt's call ended, as the retry policy reads it. */
export interface EndedCall {
  status: string;
  endReason: string | null;
  answeredBy: string | null;
}

export interface SettledAttempt {
  contact: CampaignContactRecord;
  call: EndedCall;
}

export interface CampaignAttempt {
  callId: string;
  campaignId: string;
  contactId: string;
  attempt: number;
  createdAt: string;
  /** The hour of the callee's local day it was made in (for the figures); absent when unknown. */
  localHour?: number;
  /** Null until the call row exists (or after it was erased). */
  call: EndedCall | null;
}

/** Contacts counted by state, and by the outcome of their latest attempt. */
export interface CampaignProgress {
  states: Partial<Record<ContactState, number>>;
  outcomes: Partial<Record<CampaignAttemptOutcome, number>>;
}

export interface CampaignRepository {
  create(campaign: CampaignRecord, contacts: readonly NewCampaignContact[]): Promise<CampaignRecord>;
  get(accountId: string, campaignId: string): Promise<CampaignRecord | null>;
  /** Newest first, strictly before the `before` id. */
  list(accountId: string, options: { limit: number; before?: string }): Promise<CampaignRecord[]>;
  /** Running campaigns, and paused or canceled ones with attempts still on a call (to settle them). */
  listActive(): Promise<CampaignRecord[]>;
  /**
   * Campaigns completed in [fromIso, toIso) whose account's endpoint asks for `campaign.completed`
   * and that have none: their completing process died before it wrote the event.
   */
  completedWithoutEvent(fromIso: string, toIso: string, limit: number): Promise<CampaignRecord[]>;
  /** Moves the campaign from one of `from` to `to`; false when it was in none of them. */
  setStatus(
    campaignId: string,
    from: readonly CampaignStatus[],
    to: CampaignStatus,
    /** Why (a pause's reason); the reason is cleared when absent. */
    reason?: CampaignStatusReason | null,
  ): Promise<boolean>;
  /** A running campaign with no contact left to call becomes completed, once; true for that once. */
  complete(campaignId: string, atIso: string): Promise<boolean>;
  progress(campaignId: string): Promise<CampaignProgress>;
  /** Contacts due by `nowIso`, earliest first. */
  dueContacts(campaignId: string, nowIso: string, limit: number): Promise<CampaignContactRecord[]>;
  countCalling(campaignId: string): Promise<number>;
  latestClaimAt(campaignId: string): Promise<string | null>;
  claimContact(
    campaign: CampaignRecord,
    contact: CampaignContactRecord,
    claim: {
      callId: string;
      nowIso: string;
      claimedAtIso: string;
      spacingSinceIso: string;
      dayAgoIso: string;
      /** For the campaign's hourly cap (migration 372). */
      hourAgoIso?: string;
    },
  ): Promise<boolean>;
  /** The account's calls to a number since `sinceIso` (any campaign or single call), and the oldest one's time. */
  callsToNumberSince(
    accountId: string,
    number: string,
    sinceIso: string,
  ): Promise<{ count: number; oldestAt: string | null }>;
  recordAttempt(attempt: Omit<CampaignAttempt, 'call'>): Promise<void>;
  updateWaiting(
    contact: CampaignContactRecord,
    change: { state: ContactState; dueAtIso: string | null; waitingReason?: WaitingReason | null },
    atIso: string,
  ): Promise<boolean>;
  endedAttempts(campaignId: string, limit: number): Promise<SettledAttempt[]>;
  claimsWithoutCall(campaignId: string, beforeIso: string): Promise<CampaignContactRecord[]>;
  settle(
    contact: CampaignContactRecord,
    next: { state: ContactState; dueAtIso: string | null; outcome: CampaignAttemptOutcome | null },
    atIso: string,
  ): Promise<boolean>;
  endWaiting(campaignId: string, state: 'canceled' | 'expired', atIso: string): Promise<number>;
  listContacts(
    campaignId: string,
    options: { limit: number; afterPosition?: number; state?: ContactState },
  ): Promise<CampaignContactRecord[]>;
  attemptsOf(contactIds: readonly string[]): Promise<CampaignAttempt[]>;
  ofCall(callId: string): Promise<{ campaign: CampaignRecord; contact: CampaignContactRecord } | null>;
  /** Undoes the claim of `contact` (as it was before it) whose call `callId` was never written. */
  releaseClaim(contact: CampaignContactRecord, callId: string, atIso: string): Promise<boolean>;
  /** Moves every due waiting contact held in these zones to `dueAtIso` at once; returns how many. */
  deferZone(
    campaignId: string,
    timeZones: readonly string[],
    /** `window`: the campaign's window the decision was taken on (a changed one moves nothing). */
    change: { nowIso: string; dueAtIso: string; reason: WaitingReason; window: CallingWindow },
  ): Promise<number>;
  /** Why a campaign call waits in the dispatch queue, on its contact (nothing for a single call). */
  noteQueuedCallWait(callId: string, reason: QueuedCallWait): Promise<void>;
  /** The key the campaign's next calls are placed under. */
  adoptApiKey(campaignId: string, apiKeyId: string): Promise<void>;
  /** A live edit, applied only while the campaign runs or is paused; false otherwise. */
  updateSettings(campaignId: string, edit: CampaignEdit): Promise<boolean>;
  /** Makes every contact waiting for the (old) window due now; returns how many. */
  reopenWindowWaits(campaignId: string, nowIso: string): Promise<number>;
}

/** The ledger of claims the campaign caps are counted on (campaign_claims, kept by a trigger). */
export interface CampaignRulesRepository {
  /** The campaign's claims after `sinceIso`, and the oldest of them. */
  claimsSince(campaignId: string, sinceIso: string): Promise<{ count: number; oldestAt: string | null }>;
  /** After a change of holidays or window: contacts held for a holiday are due now, to be looked at again. */
  reopenHolidayWaits(campaignId: string, nowIso: string): Promise<number>;
  /** The callback the callee asked for on this call (only while it is the contact's current call). */
  setCallback(contactId: string, callId: string, callbackAtIso: string): Promise<boolean>;
  /**
   * Settles an ended attempt that carries a callback: the contact waits for it (`retry_wait`,
   * reason `callback`), the call's outcome recorded, the callback cleared — one statement.
   */
  settleWithCallback(
    contact: CampaignContactRecord,
    outcome: CampaignAttemptOutcome | null,
    atIso: string,
  ): Promise<boolean>;
}

/** Live edits of a campaign's contact list (issue 37): contacts added and removed. */
export interface CampaignContactEditRepository {
  /** Which of `numbers` a (not removed) contact of the campaign has. */
  numbersInCampaign(campaignId: string, numbers: readonly string[]): Promise<Set<string>>;
  /** Adds contacts after the last position; the first position given, or null when the campaign is no longer running or paused. */
  appendContacts(
    campaign: { id: string; accountId: string },
    contacts: readonly NewCampaignContact[],
    atIso: string,
  ): Promise<number | null>;
  /** Undoes `appendContacts` for a campaign that ended meanwhile. */
  deleteAddedContacts(campaignId: string, contactIds: readonly string[]): Promise<void>;
  /** Marks contacts (by id or number) removed: never dialled again; a call under way goes on. */
  removeContacts(
    campaignId: string,
    match: { contactIds: readonly string[]; numbers: readonly string[] },
    atIso: string,
  ): Promise<RemovedContact[]>;
}

/** What a campaign's contacts came to (issue 37): the results export and the figures. */
export interface CampaignResultRepository {
  /** Contacts after a list position, in order, each with its latest call (the results export). */
  contactResults(campaignId: string, afterPosition: number, limit: number): Promise<ContactResult[]>;
  /** The figure sums the trigger keeps per (caller ID, local hour). */
  figureRows(campaignId: string): Promise<FigureRow[]>;
}
