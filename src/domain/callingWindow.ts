import { DateTime, IANAZone } from 'luxon';

/**
 * When calls may start, in local time: `start`/`end` as `HH:MM` (end exclusive; an end before the
 * start runs past midnight, e.g. quiet hours 21:00–08:00 inverted), on ISO weekdays (1 = Monday …
 * 7 = Sunday) counted on the day the window starts.
 */
export interface CallingWindow {
  start: string;
  end: string;
  weekdays: number[];
}

const clockPattern = /^([01][0-9]|2[0-3]):([0-5][0-9])$/;

/** A problem with a window as a user wrote it, or null. */
export function callingWindowProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'calling_window must be an object with start, end and weekdays';
  const window = value as Record<string, unknown>;
  for (const key of Object.keys(window)) {
    if (!['start', 'end', 'weekdays'].includes(key)) return `calling_window has an unknown field ${key}`;
  }
  for (const key of ['start', 'end'] as const) {
    if (typeof window[key] !== 'string' || !clockPattern.test(window[key] as string))
      return `calling_window.${key} must be a local time HH:MM (00:00–23:59)`;
  }
  if (window.start === window.end) return 'calling_window.start and end must differ';
  const weekdays = window.weekdays;
  if (weekdays !== undefined) {
    if (
      !Array.isArray(weekdays) ||
      weekdays.length === 0 ||
      weekdays.some((day) => !Number.isInteger(day) || day < 1 || day > 7) ||
      new Set(weekdays).size !== weekdays.length
    )
      return 'calling_window.weekdays must list distinct ISO weekdays 1 (Monday) to 7 (Sunday)';
  }
  return null;
}

/** Zone names already checked, and whether each is valid (at most `checkedZonesMax`). */
const checkedZones = new Map<string, boolean>();
const checkedZonesMax = 1_000;

/** A window as stored: weekdays default to every day. */
export function callingWindowOf(value: { start: string; end: string; weekdays?: number[] }): CallingWindow {
  return {
    start: value.start,
    end: value.end,
    weekdays: [...(value.weekdays ?? [1, 2, 3, 4, 5, 6, 7])].sort((a, b) => a - b),
  };
}

export function isTimeZone(name: unknown): name is string {
  if (typeof name !== 'string' || name.length > 64) return false;
  // Luxon builds an Intl.DateTimeFormat per check (about 1 ms): a list of 100,000 contacts naming
  // a handful of zones asks the same few questions, so the answers are kept (a bounded set).
  const known = checkedZones.get(name);
  if (known !== undefined) return known;
  const valid = IANAZone.isValidZone(name);
  if (checkedZones.size >= checkedZonesMax) checkedZones.clear();
  checkedZones.set(name, valid);
  return valid;
}

function minutesOf(clock: string): number {
  return Number(clock.slice(0, 2)) * 60 + Number(clock.slice(3, 5));
}

/** The instants [openMs, closeMs) of the window that starts on the local day `day` in `zone`. */
function windowOnDay(window: CallingWindow, day: DateTime): { openMs: number; closeMs: number } | null {
  if (!window.weekdays.includes(day.weekday)) return null;
  const start = minutesOf(window.start);
  const end = minutesOf(window.end);
  const midnight = day.startOf('day');
  // `set` keeps wall-clock time: a start inside a DST gap moves forward to the first valid instant.
  const open = midnight.set({ hour: Math.floor(start / 60), minute: start % 60 });
  const closeDay = end > start ? midnight : midnight.plus({ days: 1 });
  const close = closeDay.set({ hour: Math.floor(end / 60), minute: end % 60 });
  return { openMs: open.toMillis(), closeMs: close.toMillis() };
}

/** The window intervals in `zone` that may contain `atMs` or follow it within `days` days. */
function intervalsAround(window: CallingWindow, zone: string, atMs: number, days: number) {
  const today = DateTime.fromMillis(atMs, { zone });
  const intervals: { openMs: number; closeMs: number }[] = [];
  for (let offset = -1; offset <= days; offset += 1) {
    const interval = windowOnDay(window, today.plus({ days: offset }));
    if (interval && interval.closeMs > atMs) intervals.push(interval);
  }
  return intervals;
}

/** Whether the window is open at `atMs` in one zone. */
function openIn(window: CallingWindow, zone: string, atMs: number): boolean {
  return intervalsAround(window, zone, atMs, 0).some(
    (interval) => interval.openMs <= atMs && atMs < interval.closeMs,
  );
}

/**
 * Whether a call may start at `atMs` for a callee who may be in any of `zones`: the window must be
 * open in every one of them (a number whose region spans zones takes the most restrictive).
 */
export function isWindowOpen(window: CallingWindow, zones: readonly string[], atMs: number): boolean {
  return zones.every((zone) => openIn(window, zone, atMs));
}

/** How far ahead an opening is looked for: a week and a day covers every weekday pattern. */
const searchDays = 8;

/**
 * The first instant at or after `fromMs` when the window is open in all `zones`, or null when there
 * is none within eight days (the zones' windows never overlap). The intersection can only open
 * at `fromMs` or where one zone's window opens, so those are the candidates.
 */
export function nextWindowOpening(
  window: CallingWindow,
  zones: readonly string[],
  fromMs: number,
): number | null {
  if (isWindowOpen(window, zones, fromMs)) return fromMs;
  const candidates = new Set<number>();
  for (const zone of zones) {
    for (const interval of intervalsAround(window, zone, fromMs, searchDays)) {
      if (interval.openMs > fromMs) candidates.add(interval.openMs);
    }
  }
  for (const candidate of [...candidates].sort((a, b) => a - b)) {
    if (isWindowOpen(window, zones, candidate)) return candidate;
  }
  return null;
}
