import { callerIdHealthLimits, defaultCallerIdHealth } from '../domain/callerIdHealth.js';
import { builtInHolidays, campaignRuleLimits } from '../domain/campaignRules.js';

/** The schemas of a campaign's caps, holidays and contact priority (docs/campaigns.md, "Rules"). */

const holidaysSchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  description:
    "Days no attempt starts, read as the callee's local date. `countries`: built-in fixed-date public holidays, " +
    'applied to contacts whose number is in that country (no movable or observed days); `dates`: custom days for every contact, ' +
    '`YYYY-MM-DD` (that day) or `MM-DD` (every year).',
  properties: {
    countries: { type: 'array', items: { type: 'string', enum: Object.keys(builtInHolidays) } },
    dates: {
      type: 'array',
      maxItems: campaignRuleLimits.holidayDatesMax,
      items: { type: 'string', examples: ['2026-12-24', '12-31'] },
    },
  },
  examples: [{ countries: ['US'], dates: ['2026-12-24'] }],
} as const;

const callerIdHealthProperties = {
  window_attempts: {
    type: 'integer',
    minimum: 1,
    maximum: callerIdHealthLimits.windowAttemptsMax,
    default: defaultCallerIdHealth.windowAttempts,
    description: "A number's answer rate is taken over its last this many finished attempts in the campaign",
  },
  min_attempts: {
    type: 'integer',
    minimum: 1,
    default: defaultCallerIdHealth.minAttempts,
    description: 'A number is judged once its window holds this many attempts (at most window_attempts)',
  },
  min_share_of_pool: {
    type: 'number',
    minimum: 0,
    maximum: 1,
    default: defaultCallerIdHealth.minShareOfPool,
    description: "Rested when its rate is below this share of the pool's rate (0: never rest)",
  },
  rest_minutes: {
    type: 'integer',
    minimum: 1,
    maximum: callerIdHealthLimits.restMinutesMax,
    default: defaultCallerIdHealth.restMinutes,
    description: 'How long a rested number stays out of the rotation',
  },
} as const;

const callerIdHealthSchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  description:
    "Caller-ID health: a number answered far less than the pool is rested (left out of the campaign's rotation) " +
    'for a while; the last active number of a pool is never rested. Absent fields (or null): the defaults.',
  properties: callerIdHealthProperties,
  examples: [{ window_attempts: 20, min_attempts: 10, min_share_of_pool: 0.5, rest_minutes: 240 }],
} as const;

/** The rule fields of a create or PATCH body. */
export const campaignRuleRequestProperties = {
  max_calls_per_hour: {
    type: ['integer', 'null'],
    minimum: 1,
    maximum: campaignRuleLimits.callsPerHourMax,
    description: "The campaign's attempts started in any rolling hour, at most (null or absent: no cap)",
  },
  max_calls_per_day: {
    type: ['integer', 'null'],
    minimum: 1,
    maximum: campaignRuleLimits.callsPerDayMax,
    description: "The campaign's attempts started in any rolling 24 h, at most (null or absent: no cap)",
  },
  holidays: holidaysSchema,
  caller_id_health: callerIdHealthSchema,
} as const;

/** The same fields as a campaign shows them. */
export const campaignRuleProperties = {
  max_calls_per_hour: { type: ['integer', 'null'] },
  max_calls_per_day: { type: ['integer', 'null'] },
  holidays: {
    type: 'object',
    properties: holidaysSchema.properties,
  },
  caller_id_health: { type: 'object', properties: callerIdHealthProperties },
} as const;

export const contactPrioritySchema = {
  type: 'integer',
  minimum: campaignRuleLimits.priorityMin,
  maximum: campaignRuleLimits.priorityMax,
  default: 0,
  description: 'Higher is called first among the contacts due at once (a CSV column `priority` too)',
} as const;

/** Each caller ID of the pool as the campaign shows it (caller-ID health). */
export const callerIdStatusSchema = {
  type: 'array',
  description:
    "The pool's numbers: `rested` ones are left out of the rotation until `rested_until` (their window starts afresh); " +
    "`answer_rate` is over the number's last `window_attempts` finished attempts (null before any).",
  items: {
    type: 'object',
    required: ['number', 'status', 'answer_rate', 'attempts', 'rested_until'],
    properties: {
      number: { type: 'string' },
      status: { type: 'string', enum: ['active', 'rested'] },
      answer_rate: { type: ['number', 'null'] },
      attempts: { type: 'integer' },
      rested_until: { type: ['string', 'null'], format: 'date-time' },
    },
  },
} as const;
