import { type CallingWindow, callingWindowOf, callingWindowProblem, isTimeZone } from './callingWindow.js';
import {
  type CampaignRules,
  campaignRuleFields,
  noCampaignRules,
  parseCampaignRules,
  parseContactPriority,
} from './campaignRules.js';
import type { CampaignStatusReason, WaitingReason } from './campaignWaits.js';
import { AppError, isAppError } from './errors.js';
import { isPlainObject, type OutboundCallRequest, parseOutboundCallRequest } from './outboundCallRequest.js';
import { isE164 } from './phone.js';
import type { VariableValue } from './templates.js';

/** Bounds of one campaign request. */
export const campaignLimits = {
  contactsMax: 100_000,
  callerIdsMax: 50,
  nameMaxChars: 100,
  maxConcurrencyMax: 100,
  callsPerMinuteMax: 6_000,
  attemptsMax: 10,
  maxDailyAttemptsMax: 20,
  retryAfterMinutesMax: 7 * 24 * 60,
  /** The JSON body of a 100,000-contact campaign with variables fits comfortably. */
  bodyBytesMax: 64 * 1024 * 1024,
} as const;

/** What a finished attempt came to, as the retry policy reads it. */
export const attemptOutcomes = ['answered', 'voicemail', 'busy', 'no_answer', 'failed'] as const;
export type AttemptOutcome = (typeof attemptOutcomes)[number];
/** The outcomes a retry policy may name (an answered call is never retried). */
export const retryableOutcomes = ['busy', 'no_answer', 'voicemail', 'failed'] as const;
export type RetryableOutcome = (typeof retryableOutcomes)[number];

export interface RetryRule {
  after_minutes: number;
  /** Attempts in all, the first one included. */
  max_attempts: number;
}
export type RetryPolicy = Partial<Record<RetryableOutcome, RetryRule>>;

export const campaignStatuses = ['running', 'paused', 'canceled', 'completed'] as const;
export type CampaignStatus = (typeof campaignStatuses)[number];

/**
 * A contact's place in its campaign: waiting for a first attempt, on a call, waiting to retry, or
 * finished — `done` (answered, or out of attempts; `last_outcome` says which), `expired` (no
 * attempt could start before the campaign ended), `do_not_call`, `canceled`.
 */
export const contactStates = [
  'pending',
  'calling',
  'retry_wait',
  'done',
  'expired',
  'do_not_call',
  'canceled',
] as const;
export type ContactState = (typeof contactStates)[number];
/** The states from which an attempt may still start. */
export const waitingContactStates = ['pending', 'retry_wait'] as const;

export const callerIdSelections = ['round_robin', 'local_area_code'] as const;
export type CallerIdSelection = (typeof callerIdSelections)[number];

export interface CampaignContactInput {
  to_number: string;
  variables?: Record<string, VariableValue>;
  first_message?: string;
  context?: string;
  time_zone?: string;
  priority?: number;
}

export interface CampaignRequest {
  name: string;
  agent_id: string;
  caller_ids: string[];
  caller_id_selection: CallerIdSelection;
  contacts: CampaignContactInput[];
  calling_window: CallingWindow;
  time_zone: string;
  max_concurrency: number;
  calls_per_minute: number;
  /** Calls to one number (any campaign or single call of the account) in 24 h, at most. */
  max_daily_attempts: number;
  retry: RetryPolicy;
  starts_at: string | null;
  ends_at: string | null;
  /** Caps per hour and day, holidays (absent fields: none). */
  rules: CampaignRules;
}

export interface CampaignRecord {
  id: string;
  accountId: string;
  apiKeyId: string;
  name: string;
  agentId: string;
  callerIds: string[];
  callerIdSelection: CallerIdSelection;
  callingWindow: CallingWindow;
  timeZone: string;
  maxConcurrency: number;
  callsPerMinute: number;
  maxDailyAttempts: number;
  retry: RetryPolicy;
  startsAt: string | null;
  endsAt: string | null;
  status: CampaignStatus;
  contactCount: number;
  createdAt: string;
  completedAt: string | null;
  /** Why the campaign is paused (`requested`, `api_key_revoked`); null when it is not. */
  statusReason: CampaignStatusReason | null;
  /** Caps per hour and day, holidays (campaignRules.ts). */
  rules: CampaignRules;
}

export interface CampaignContactRecord {
  id: string;
  campaignId: string;
  position: number;
  toNumber: string;
  variables: Record<string, VariableValue> | null;
  firstMessage: string | null;
  context: string | null;
  /** The zones the window is held in (the contact's, the number's, or the campaign's). */
  timeZones: string[];
  state: ContactState;
  attempts: number;
  dueAt: string | null;
  callId: string | null;
  lastOutcome: AttemptOutcome | null;
  /** The stored reason of a wait (see `waitingReasonOf` for the ones read from the campaign). */
  waitingReason: WaitingReason | null;
  /** Higher first among due contacts. */
  priority: number;
  /** The callback the callee asked for on the current call, until that call is settled. */
  callbackAt: string | null;
  /** When a live edit removed it: it is never dialled again (absent on records built elsewhere). */
  removedAt?: string | null;
}

/** One row's problem, by its place in the list (0-based) or its line in a CSV file (1-based). */
export interface RowProblem {
  index: number;
  message: string;
}

const knownFields = new Set([
  'name',
  'agent_id',
  'from_number',
  'caller_ids',
  'caller_id_selection',
  'contacts',
  'calling_window',
  'time_zone',
  'max_concurrency',
  'calls_per_minute',
  'max_daily_attempts',
  'retry',
  'starts_at',
  'ends_at',
  ...campaignRuleFields,
]);
const contactFields = new Set([
  'to_number',
  'variables',
  'first_message',
  'context',
  'time_zone',
  'priority',
]);

function invalid(message: string): AppError {
  return new AppError('validation_error', message);
}

export function wholeNumber(
  value: unknown,
  field: string,
  min: number,
  max: number,
  fallback?: number,
): number {
  if (value === undefined && fallback !== undefined) return fallback;
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > max)
    throw invalid(`${field} must be a whole number from ${min} to ${max}`);
  return value as number;
}

export function instant(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(Date.parse(value)))
    throw invalid(`${field} must be an ISO 8601 date-time such as 2026-12-01T09:00:00Z`);
  return new Date(value).toISOString();
}

export function parseRetry(value: unknown): RetryPolicy {
  if (value === undefined) return {};
  if (!isPlainObject(value)) throw invalid('retry must be an object keyed by outcome');
  const policy: RetryPolicy = {};
  for (const [outcome, rule] of Object.entries(value)) {
    if (!(retryableOutcomes as readonly string[]).includes(outcome))
      throw invalid(`retry: ${outcome.slice(0, 40)} is not one of ${retryableOutcomes.join(', ')}`);
    if (!isPlainObject(rule)) throw invalid(`retry.${outcome} must be {after_minutes, max_attempts}`);
    for (const key of Object.keys(rule)) {
      if (key !== 'after_minutes' && key !== 'max_attempts')
        throw invalid(`retry.${outcome} has an unknown field ${key.slice(0, 40)}`);
    }
    policy[outcome as RetryableOutcome] = {
      after_minutes: wholeNumber(
        rule.after_minutes,
        `retry.${outcome}.after_minutes`,
        1,
        campaignLimits.retryAfterMinutesMax,
      ),
      max_attempts: wholeNumber(
        rule.max_attempts,
        `retry.${outcome}.max_attempts`,
        1,
        campaignLimits.attemptsMax,
      ),
    };
  }
  return policy;
}

export function parseCallerIds(body: Record<string, unknown>): string[] {
  if (body.from_number !== undefined && body.caller_ids !== undefined)
    throw invalid('give from_number or caller_ids, not both');
  const list = body.caller_ids !== undefined ? body.caller_ids : [body.from_number];
  if (
    !Array.isArray(list) ||
    list.length === 0 ||
    list.length > campaignLimits.callerIdsMax ||
    list[0] === undefined
  )
    throw invalid(
      `from_number, or caller_ids as a list of 1 to ${campaignLimits.callerIdsMax} numbers, is required`,
    );
  for (const number of list) {
    if (typeof number !== 'string' || !isE164(number))
      throw new AppError(
        'invalid_phone',
        'every caller ID must be an E.164 phone number such as +14155550123',
      );
  }
  return [...new Set(list as string[])];
}

/**
 * One contact as a single call request would be checked (the same shape rules and limits), plus
 * its optional time zone. Throws the row's AppError.
 */
export function parseCampaignContact(
  value: unknown,
  agentId: string,
  callerId: string,
): CampaignContactInput {
  if (!isPlainObject(value)) throw invalid('a contact must be an object with to_number');
  for (const field of Object.keys(value)) {
    if (!contactFields.has(field)) throw invalid(`unknown field: ${field.slice(0, 70)}`);
  }
  const { time_zone: timeZone, priority, ...callFields } = value;
  const call: OutboundCallRequest = parseOutboundCallRequest({
    ...callFields,
    agent_id: agentId,
    from_number: callerId,
  });
  const contact: CampaignContactInput = { to_number: call.to_number };
  if (call.variables !== undefined) contact.variables = call.variables;
  if (call.first_message !== undefined) contact.first_message = call.first_message;
  if (call.context !== undefined) contact.context = call.context;
  if (timeZone !== undefined) {
    if (!isTimeZone(timeZone)) throw invalid('time_zone must be an IANA time zone such as America/Chicago');
    contact.time_zone = timeZone;
  }
  if (priority !== undefined) contact.priority = parseContactPriority(priority);
  return contact;
}

/**
 * Everything of a campaign request but its contacts' rows, which `parseCampaignContacts` checks one
 * by one so that every bad row is reported at once. Throws the first problem (400/422).
 */
export function parseCampaignSettings(body: unknown): Omit<CampaignRequest, 'contacts'> {
  if (!isPlainObject(body)) throw invalid('request body must be a JSON object');
  for (const field of Object.keys(body)) {
    if (!knownFields.has(field)) throw invalid(`unknown field: ${field.slice(0, 70)}`);
  }
  const agentId = body.agent_id;
  if (typeof agentId !== 'string' || agentId.length === 0 || agentId.length > 64)
    throw invalid('agent_id is required (a string of at most 64 characters)');
  const name = body.name ?? '';
  if (typeof name !== 'string' || name.length > campaignLimits.nameMaxChars)
    throw invalid(`name must be a text of at most ${campaignLimits.nameMaxChars} characters`);
  const windowProblem = callingWindowProblem(body.calling_window);
  if (windowProblem) throw invalid(windowProblem);
  if (!isTimeZone(body.time_zone))
    throw invalid('time_zone (the campaign zone, e.g. America/New_York) must be an IANA time zone');
  const selection = body.caller_id_selection ?? 'round_robin';
  if (!(callerIdSelections as readonly unknown[]).includes(selection))
    throw invalid(`caller_id_selection must be one of ${callerIdSelections.join(', ')}`);
  const startsAt = instant(body.starts_at, 'starts_at');
  const endsAt = instant(body.ends_at, 'ends_at');
  if (startsAt && endsAt && endsAt <= startsAt) throw invalid('ends_at must be after starts_at');
  return {
    name,
    agent_id: agentId,
    caller_ids: parseCallerIds(body),
    caller_id_selection: selection as CallerIdSelection,
    calling_window: callingWindowOf(body.calling_window as CallingWindow),
    time_zone: body.time_zone,
    max_concurrency: wholeNumber(
      body.max_concurrency,
      'max_concurrency',
      1,
      campaignLimits.maxConcurrencyMax,
      1,
    ),
    calls_per_minute: wholeNumber(
      body.calls_per_minute,
      'calls_per_minute',
      1,
      campaignLimits.callsPerMinuteMax,
      10,
    ),
    max_daily_attempts: wholeNumber(
      body.max_daily_attempts,
      'max_daily_attempts',
      1,
      campaignLimits.maxDailyAttemptsMax,
      3,
    ),
    retry: parseRetry(body.retry),
    starts_at: startsAt,
    ends_at: endsAt,
    rules: { ...noCampaignRules, ...parseCampaignRules(body) },
  };
}

/** Every contact checked; the problems name each bad one by its index. */
export function parseCampaignContacts(
  value: unknown,
  settings: Pick<CampaignRequest, 'agent_id' | 'caller_ids'>,
): { contacts: CampaignContactInput[]; problems: RowProblem[] } {
  if (!Array.isArray(value) || value.length === 0 || value.length > campaignLimits.contactsMax)
    throw invalid(`contacts must be a list of 1 to ${campaignLimits.contactsMax} contacts`);
  const contacts: CampaignContactInput[] = [];
  const problems: RowProblem[] = [];
  const callerId = settings.caller_ids[0] as string;
  value.forEach((row, index) => {
    try {
      contacts.push(parseCampaignContact(row, settings.agent_id, callerId));
    } catch (error) {
      if (!isAppError(error)) throw error;
      problems.push({ index, message: error.message });
    }
  });
  return { contacts, problems };
}

/** What a finished call counts as for its contact. */
export function attemptOutcomeOf(call: {
  status: string;
  endReason: string | null;
  answeredBy: string | null;
}): AttemptOutcome | 'do_not_call' | 'canceled' | 'expired' {
  switch (call.status) {
    case 'busy':
      return 'busy';
    case 'no_answer':
      return 'no_answer';
    case 'failed':
      return 'failed';
    case 'canceled':
      if (call.endReason === 'do_not_call') return 'do_not_call';
      return call.endReason === 'outside_calling_hours' ? 'expired' : 'canceled';
    default:
      return call.endReason === 'voicemail' || call.answeredBy === 'machine' ? 'voicemail' : 'answered';
  }
}

/**
 * What follows an attempt: another one after the policy's pause while attempts remain for that
 * outcome, else the contact is finished. `retryAtMs` is when the next attempt becomes due.
 */
export function nextAfterAttempt(
  outcome: ReturnType<typeof attemptOutcomeOf>,
  attempts: number,
  policy: RetryPolicy,
  nowMs: number,
): { state: 'retry_wait'; retryAtMs: number } | { state: 'done' | 'do_not_call' | 'canceled' | 'expired' } {
  if (outcome === 'do_not_call' || outcome === 'canceled' || outcome === 'expired') return { state: outcome };
  if (outcome === 'answered') return { state: 'done' };
  const rule = policy[outcome];
  if (rule && attempts < rule.max_attempts)
    return { state: 'retry_wait', retryAtMs: nowMs + rule.after_minutes * 60_000 };
  return { state: 'done' };
}

function commonPrefixLength(a: string, b: string): number {
  let length = 0;
  while (length < a.length && a[length] === b[length]) length += 1;
  return length;
}

/** A caller ID is "local" when it shares at least this much with the callee: `+` and four digits (+1 and an area code). */
const localPrefixChars = 5;

/**
 * The caller ID of one attempt: the pool in turn (by contact and attempt, so no shared counter is
 * needed), or with `local_area_code` the pool number sharing the longest prefix with the callee
 * (at least the country code and area code of a NANP number), falling back to the turn.
 */
export function callerIdFor(
  pool: readonly string[],
  selection: CallerIdSelection,
  contact: { position: number; attempts: number; toNumber: string },
): string {
  const turn = pool[(contact.position + contact.attempts) % pool.length] as string;
  if (selection !== 'local_area_code') return turn;
  let best = turn;
  let bestLength = localPrefixChars - 1;
  for (const number of pool) {
    const length = commonPrefixLength(number, contact.toNumber);
    if (length > bestLength) {
      best = number;
      bestLength = length;
    }
  }
  return best;
}
