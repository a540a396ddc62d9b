import { UsageError } from './context.js';

/**
 * The command-line options of a campaign's rules (caps, holidays, caller-ID health), shared by
 * `campaigns create` and `campaigns edit`: `--per-hour N|none`, `--per-day N|none`,
 * `--holidays US,FR|none`, `--holiday-dates 2026-12-24,12-31`,
 * `--caller-id-health window=20,min=10,share=0.5,rest=240|default`. The values are checked by the
 * same code as the API's.
 */
export const campaignRuleOptions = {
  'per-hour': { type: 'string' },
  'per-day': { type: 'string' },
  holidays: { type: 'string' },
  'holiday-dates': { type: 'string' },
  'caller-id-health': { type: 'string' },
} as const;

/** `--caller-id-health` keys: short names and the API's own. */
const healthFields: Record<string, string> = {
  window: 'window_attempts',
  window_attempts: 'window_attempts',
  min: 'min_attempts',
  min_attempts: 'min_attempts',
  share: 'min_share_of_pool',
  min_share_of_pool: 'min_share_of_pool',
  rest: 'rest_minutes',
  rest_minutes: 'rest_minutes',
};

/**
 * `--caller-id-health window=20,min=10,share=0.5,rest=240` as the API's `caller_id_health`
 * (`default`: the defaults). Each value must be a number; its range is checked with the API's rules.
 */
function callerIdHealthOption(text: string): Record<string, number> | null {
  if (text === 'default') return null;
  const settings: Record<string, number> = {};
  for (const part of text.split(',')) {
    const match = /^([a-z_]+)=([0-9.]+)$/.exec(part.trim());
    const field = match ? healthFields[match[1] as string] : undefined;
    if (!match || !field || !Number.isFinite(Number(match[2])))
      throw new UsageError(
        `--caller-id-health takes window=N,min=N,share=0..1,rest=MINUTES (any of them) or default, got "${part.slice(0, 40)}"`,
      );
    settings[field] = Number(match[2]);
  }
  return settings;
}

function capOption(text: string, option: string): number | null {
  if (text === 'none') return null;
  if (!/^\d{1,9}$/.test(text)) throw new UsageError(`--${option} takes a whole number, or none for no cap`);
  return Number(text);
}

const listOf = (text: string) =>
  text === 'none' || text === '' ? [] : text.split(',').map((item) => item.trim());

/** The API fields the given options set (none given: nothing). */
export function campaignRuleSettings(values: Record<string, unknown>): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  if (typeof values['per-hour'] === 'string')
    settings.max_calls_per_hour = capOption(values['per-hour'], 'per-hour');
  if (typeof values['per-day'] === 'string')
    settings.max_calls_per_day = capOption(values['per-day'], 'per-day');
  const countries = values.holidays;
  const dates = values['holiday-dates'];
  if (typeof countries === 'string' || typeof dates === 'string')
    settings.holidays = {
      countries: typeof countries === 'string' ? listOf(countries) : [],
      dates: typeof dates === 'string' ? listOf(dates) : [],
    };
  if (typeof values['caller-id-health'] === 'string')
    settings.caller_id_health = callerIdHealthOption(values['caller-id-health']);
  return settings;
}
