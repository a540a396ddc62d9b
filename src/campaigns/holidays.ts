import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { DateTime } from 'luxon';
import { type CallingWindow, nextWindowOpening } from '../domain/callingWindow.js';
import { type HolidayCalendar, hasHolidays, isHoliday } from '../domain/campaignRules.js';

/** The ISO country of a number (libphonenumber), or null when it names none. */
export function countryOfNumber(e164: string): string | null {
  return parsePhoneNumberFromString(e164)?.country ?? null;
}

/** Holidays in a row skipped at most (a year of them would be a calendar that never opens). */
const holidaySkipsMax = 400;

/**
 * The first instant at or after `fromMs` when the window is open in all `zones` and the local
 * date is a holiday in none of them; null when there is none (the window never opens, or every
 * day for over a year is a holiday). A holiday moves the search to the next local midnight of the
 * zone where it falls, then the window's next opening from there.
 */
export function nextOpeningPastHolidays(
  window: CallingWindow,
  calendar: HolidayCalendar,
  contact: { zones: readonly string[]; toNumber: string },
  fromMs: number,
): { openingMs: number | null; holiday: boolean } {
  let opening = nextWindowOpening(window, contact.zones, fromMs);
  if (opening === null || !hasHolidays(calendar)) return { openingMs: opening, holiday: false };
  const country = calendar.countries.length > 0 ? countryOfNumber(contact.toNumber) : null;
  let skipped = false;
  for (let skip = 0; skip < holidaySkipsMax && opening !== null; skip += 1) {
    const at: number = opening;
    const holidayZone = contact.zones.find((zone) =>
      isHoliday(calendar, country, DateTime.fromMillis(at, { zone }).toISODate() ?? ''),
    );
    if (holidayZone === undefined) return { openingMs: opening, holiday: skipped };
    skipped = true;
    const nextMidnight = DateTime.fromMillis(at, { zone: holidayZone }).startOf('day').plus({ days: 1 });
    opening = nextWindowOpening(window, contact.zones, nextMidnight.toMillis());
  }
  return { openingMs: null, holiday: true };
}
