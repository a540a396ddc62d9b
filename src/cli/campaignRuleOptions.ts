import { UsageError } from './context.js';

/**
 * The command-line options of a campaign's rules (caps, holidays), shared by `campaigns create`
 * and `campaigns edit`: `--per-hour N|none`, `--per-day N|none`, `--holidays US,FR|none`,
 * `--holiday-dates 2026-12-24,12-31`. The values are checked by the same code as the API's.
 */
export const campaignRuleOptions = {
  'per-hour': { type: 'string' },
  'per-day': { type: 'string' },
  holidays: { type: 'string' },
  'holiday-dates': { type: 'string' },
} as const;

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
  return settings;
}
