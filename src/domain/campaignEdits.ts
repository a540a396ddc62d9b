import { type CallingWindow, callingWindowOf, callingWindowProblem } from './callingWindow.js';
import { type CampaignRules, campaignRuleFields, parseCampaignRules } from './campaignRules.js';
import {
  type CallerIdSelection,
  type CampaignRecord,
  callerIdSelections,
  campaignLimits,
  instant,
  parseCallerIds,
  parseRetry,
  type RetryPolicy,
  wholeNumber,
} from './campaigns.js';
import { AppError } from './errors.js';
import { isPlainObject } from './outboundCallRequest.js';

/** The settings of a running or paused campaign that may change (effective at its next claim). */
export interface CampaignEdit {
  name?: string;
  callingWindow?: CallingWindow;
  maxConcurrency?: number;
  callsPerMinute?: number;
  maxDailyAttempts?: number;
  retry?: RetryPolicy;
  callerIds?: string[];
  callerIdSelection?: CallerIdSelection;
  endsAt?: string | null;
  /** Caps and holidays given (campaignRules.ts). */
  rules?: Partial<CampaignRules>;
}

/** The settings of a campaign that may change while it runs or is paused (the API's PATCH body). */
export const editableCampaignFields = [
  'name',
  'calling_window',
  'max_concurrency',
  'calls_per_minute',
  'max_daily_attempts',
  'retry',
  'from_number',
  'caller_ids',
  'caller_id_selection',
  'ends_at',
  ...campaignRuleFields,
] as const;

const editableFields: ReadonlySet<string> = new Set(editableCampaignFields);

function invalid(message: string): AppError {
  return new AppError('validation_error', message);
}

/**
 * A `PATCH /v1/campaigns/{id}` body: any of the editable settings, each checked as at creation.
 * The agent, the zone, the contacts' zones and `starts_at` do not change. Throws 400/422.
 */
export function parseCampaignEdit(body: unknown): CampaignEdit {
  if (!isPlainObject(body)) throw invalid('request body must be a JSON object');
  const fields = Object.keys(body);
  for (const field of fields) {
    if (!editableFields.has(field))
      throw invalid(`${field.slice(0, 70)} cannot be changed (editable: ${[...editableFields].join(', ')})`);
  }
  if (fields.length === 0) throw invalid('name at least one setting to change');
  const edit: CampaignEdit = {};
  if (body.name !== undefined) {
    if (typeof body.name !== 'string' || body.name.length > campaignLimits.nameMaxChars)
      throw invalid(`name must be a text of at most ${campaignLimits.nameMaxChars} characters`);
    edit.name = body.name;
  }
  if (body.calling_window !== undefined) {
    const problem = callingWindowProblem(body.calling_window);
    if (problem) throw invalid(problem);
    edit.callingWindow = callingWindowOf(body.calling_window as CallingWindow);
  }
  if (body.max_concurrency !== undefined)
    edit.maxConcurrency = wholeNumber(
      body.max_concurrency,
      'max_concurrency',
      1,
      campaignLimits.maxConcurrencyMax,
    );
  if (body.calls_per_minute !== undefined)
    edit.callsPerMinute = wholeNumber(
      body.calls_per_minute,
      'calls_per_minute',
      1,
      campaignLimits.callsPerMinuteMax,
    );
  if (body.max_daily_attempts !== undefined)
    edit.maxDailyAttempts = wholeNumber(
      body.max_daily_attempts,
      'max_daily_attempts',
      1,
      campaignLimits.maxDailyAttemptsMax,
    );
  if (body.retry !== undefined) edit.retry = parseRetry(body.retry);
  if (body.from_number !== undefined || body.caller_ids !== undefined) edit.callerIds = parseCallerIds(body);
  if (body.caller_id_selection !== undefined) {
    if (!(callerIdSelections as readonly unknown[]).includes(body.caller_id_selection))
      throw invalid(`caller_id_selection must be one of ${callerIdSelections.join(', ')}`);
    edit.callerIdSelection = body.caller_id_selection as CallerIdSelection;
  }
  if (body.ends_at !== undefined) edit.endsAt = instant(body.ends_at, 'ends_at');
  const rules = parseCampaignRules(body);
  if (Object.keys(rules).length > 0) edit.rules = rules;
  return edit;
}

/** Each changed setting as `{from, to}` in the API's names, for the audit log. */
export function describeEdit(campaign: CampaignRecord, edit: CampaignEdit): Record<string, unknown> {
  const pairs: [string, unknown, unknown][] = [
    ['name', campaign.name, edit.name],
    ['calling_window', campaign.callingWindow, edit.callingWindow],
    ['max_concurrency', campaign.maxConcurrency, edit.maxConcurrency],
    ['calls_per_minute', campaign.callsPerMinute, edit.callsPerMinute],
    ['max_daily_attempts', campaign.maxDailyAttempts, edit.maxDailyAttempts],
    ['retry', campaign.retry, edit.retry],
    ['caller_ids', campaign.callerIds, edit.callerIds],
    ['caller_id_selection', campaign.callerIdSelection, edit.callerIdSelection],
    ['ends_at', campaign.endsAt, edit.endsAt],
    ['max_calls_per_hour', campaign.rules.maxCallsPerHour, edit.rules?.maxCallsPerHour],
    ['max_calls_per_day', campaign.rules.maxCallsPerDay, edit.rules?.maxCallsPerDay],
    ['holidays', campaign.rules.holidays, edit.rules?.holidays],
    ['caller_id_health', campaign.rules.callerIdHealth, edit.rules?.callerIdHealth],
  ];
  const changes: Record<string, unknown> = {};
  for (const [field, from, to] of pairs) {
    if (to !== undefined && JSON.stringify(from) !== JSON.stringify(to)) changes[field] = { from, to };
  }
  return changes;
}
