import {
  type CallerIdHealthSettings,
  defaultCallerIdHealth,
  describeCallerIdHealthSettings,
  parseCallerIdHealth,
} from './callerIdHealth.js';
import { AppError } from './errors.js';
import { isPlainObject } from './outboundCallRequest.js';

/**
 * A campaign's rules beyond its window and pace (issue 37): caps on the campaign's calls per
 * rolling hour and per rolling 24 h (null: no cap), and the days no call starts (holidays, read
 * as the callee's local date).
 */
export interface CampaignRules {
  maxCallsPerHour: number | null;
  maxCallsPerDay: number | null;
  holidays: HolidayCalendar;
  /** When a caller ID is rested for a low answer rate (src/domain/callerIdHealth.ts). */
  callerIdHealth: CallerIdHealthSettings;
}

/**
 * `countries`: built-in fixed-date holidays (see `builtInHolidays`) of those countries, applied to
 * the contacts whose number belongs to that country; `dates`: custom days (`YYYY-MM-DD` for one
 * day, `MM-DD` for every year), applied to every contact.
 */
export interface HolidayCalendar {
  countries: string[];
  dates: string[];
}

export const noCampaignRules: CampaignRules = {
  maxCallsPerHour: null,
  maxCallsPerDay: null,
  holidays: { countries: [], dates: [] },
  callerIdHealth: defaultCallerIdHealth,
};

export const campaignRuleLimits = {
  callsPerHourMax: 360_000,
  callsPerDayMax: 8_640_000,
  holidayDatesMax: 366,
  priorityMin: -1_000,
  priorityMax: 1_000,
} as const;

/** The request fields these rules are read from (create and PATCH). */
export const campaignRuleFields = [
  'max_calls_per_hour',
  'max_calls_per_day',
  'holidays',
  'caller_id_health',
] as const;

/**
 * Fixed-date public holidays only — no Easter-based, "nth Monday" or substitute (observed) days,
 * and no regional ones. A team that needs those lists them in `dates`.
 */
export const builtInHolidays: Readonly<Record<string, readonly string[]>> = {
  // New Year's Day, Juneteenth, Independence Day, Veterans Day, Christmas Day (federal, fixed-date).
  US: ['01-01', '06-19', '07-04', '11-11', '12-25'],
  // New Year's Day, Canada Day, Remembrance Day, Christmas Day.
  CA: ['01-01', '07-01', '11-11', '12-25'],
  // New Year's Day, Christmas Day, Boxing Day.
  GB: ['01-01', '12-25', '12-26'],
  // Jour de l'an, fête du Travail, Victoire 1945, fête nationale, Assomption, Toussaint, Armistice, Noël.
  FR: ['01-01', '05-01', '05-08', '07-14', '08-15', '11-01', '11-11', '12-25'],
  // Neujahr, Tag der Arbeit, Tag der Deutschen Einheit, 1. und 2. Weihnachtstag.
  DE: ['01-01', '05-01', '10-03', '12-25', '12-26'],
  // Año Nuevo, Día del Trabajo, Día de la Independencia, Navidad (the Monday holidays are left out).
  MX: ['01-01', '05-01', '09-16', '12-25'],
};

function invalid(message: string): AppError {
  return new AppError('validation_error', message);
}

function capOf(value: unknown, field: string, max: number): number | null {
  if (value === null) return null;
  if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > max)
    throw invalid(`${field} must be a whole number from 1 to ${max}, or null for no cap`);
  return value as number;
}

const fullDate = /^(\d{4})-(\d{2})-(\d{2})$/;
const yearlyDate = /^(\d{2})-(\d{2})$/;

function isCalendarDate(text: string): boolean {
  const full = fullDate.exec(text);
  const [year, month, day] = full
    ? [Number(full[1]), Number(full[2]), Number(full[3])]
    : (() => {
        const yearly = yearlyDate.exec(text);
        // A leap year, so that 02-29 is a valid yearly date.
        return yearly ? [2024, Number(yearly[1]), Number(yearly[2])] : [0, 0, 0];
      })();
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function holidaysOf(value: unknown): HolidayCalendar {
  if (value === null) return { countries: [], dates: [] };
  if (!isPlainObject(value)) throw invalid('holidays must be an object {countries, dates}');
  for (const key of Object.keys(value)) {
    if (key !== 'countries' && key !== 'dates')
      throw invalid(`holidays has an unknown field ${key.slice(0, 40)} (countries, dates)`);
  }
  const countries = value.countries ?? [];
  const known = Object.keys(builtInHolidays);
  if (!Array.isArray(countries) || countries.some((country) => !known.includes(country as string)))
    throw invalid(`holidays.countries must list built-in calendars: ${known.join(', ')}`);
  const dates = value.dates ?? [];
  if (
    !Array.isArray(dates) ||
    dates.length > campaignRuleLimits.holidayDatesMax ||
    dates.some((date) => typeof date !== 'string' || !isCalendarDate(date))
  )
    throw invalid(
      `holidays.dates must list at most ${campaignRuleLimits.holidayDatesMax} dates YYYY-MM-DD (one day) or MM-DD (every year)`,
    );
  return {
    countries: [...new Set(countries as string[])].sort(),
    dates: [...new Set(dates as string[])].sort(),
  };
}

/**
 * The rules given in a create or PATCH body: only the fields present (a PATCH changes only those).
 * Throws a 400 naming the field.
 */
export function parseCampaignRules(body: Record<string, unknown>): Partial<CampaignRules> {
  const rules: Partial<CampaignRules> = {};
  if (body.max_calls_per_hour !== undefined)
    rules.maxCallsPerHour = capOf(
      body.max_calls_per_hour,
      'max_calls_per_hour',
      campaignRuleLimits.callsPerHourMax,
    );
  if (body.max_calls_per_day !== undefined)
    rules.maxCallsPerDay = capOf(
      body.max_calls_per_day,
      'max_calls_per_day',
      campaignRuleLimits.callsPerDayMax,
    );
  if (body.holidays !== undefined) rules.holidays = holidaysOf(body.holidays);
  if (body.caller_id_health !== undefined) rules.callerIdHealth = parseCallerIdHealth(body.caller_id_health);
  return rules;
}

/** A contact's priority (higher is called first among due contacts); 0 when absent. */
export function parseContactPriority(value: unknown): number {
  if (value === undefined) return 0;
  if (
    !Number.isInteger(value) ||
    (value as number) < campaignRuleLimits.priorityMin ||
    (value as number) > campaignRuleLimits.priorityMax
  )
    throw invalid(
      `priority must be a whole number from ${campaignRuleLimits.priorityMin} to ${campaignRuleLimits.priorityMax}`,
    );
  return value as number;
}

/** The rules as the API shows them. */
export function describeCampaignRules(rules: CampaignRules) {
  return {
    max_calls_per_hour: rules.maxCallsPerHour,
    max_calls_per_day: rules.maxCallsPerDay,
    holidays: rules.holidays,
    caller_id_health: describeCallerIdHealthSettings(rules.callerIdHealth),
  };
}

/** Whether a local date (`YYYY-MM-DD`) is a holiday for a contact whose number is in `country`. */
export function isHoliday(calendar: HolidayCalendar, country: string | null, localDate: string): boolean {
  const monthDay = localDate.slice(5);
  if (calendar.dates.includes(localDate) || calendar.dates.includes(monthDay)) return true;
  if (country === null || !calendar.countries.includes(country)) return false;
  return builtInHolidays[country]?.includes(monthDay) ?? false;
}

export function hasHolidays(calendar: HolidayCalendar): boolean {
  return calendar.countries.length > 0 || calendar.dates.length > 0;
}
