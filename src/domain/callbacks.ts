import { DateTime } from 'luxon';

/**
 * A callback the callee asked for ("call me tomorrow after four"): the `schedule_callback` tool of
 * an llm agent gives a local date-time or a delay; a script node gives a delay or a day and a local
 * time. Resolved in the callee's zone (the contact's first), never in the server's.
 */
export type CallbackRequest =
  | { kind: 'local_time'; localDateTime: string }
  | { kind: 'in_minutes'; minutes: number }
  | { kind: 'day_time'; daysAhead: number; clock: string };

/** How far ahead a callback may be asked for. */
export const callbackLimits = { aheadDaysMax: 30 } as const;

const localDateTimePattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/;
const clockPattern = /^([01][0-9]|2[0-3]):([0-5][0-9])$/;

/** The tool's arguments as the model gave them; a problem is a sentence for the model. */
export function callbackRequestOfArguments(value: unknown): CallbackRequest | { problem: string } {
  const args = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  if (typeof args.local_time === 'string' && localDateTimePattern.test(args.local_time))
    return { kind: 'local_time', localDateTime: args.local_time };
  const minutes = args.in_minutes;
  if (
    Number.isInteger(minutes) &&
    (minutes as number) >= 1 &&
    (minutes as number) <= callbackLimits.aheadDaysMax * 1440
  )
    return { kind: 'in_minutes', minutes: minutes as number };
  return {
    problem:
      'give local_time as the callee local date and time (YYYY-MM-DDTHH:MM, e.g. 2026-11-29T16:00) or in_minutes (a whole number)',
  };
}

/** A script node's `schedule_callback` (checked when the script is saved). */
export interface ScriptCallback {
  in_minutes?: number;
  days_ahead?: number;
  at?: string;
}

/** The problem with a script node's `schedule_callback`, or null. */
export function scriptCallbackProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'must be {in_minutes} or {days_ahead, at: "HH:MM"}';
  const node = value as Record<string, unknown>;
  for (const key of Object.keys(node)) {
    if (!['in_minutes', 'days_ahead', 'at'].includes(key)) return `has an unknown field ${key.slice(0, 40)}`;
  }
  if (node.in_minutes !== undefined) {
    if (node.days_ahead !== undefined || node.at !== undefined)
      return 'takes in_minutes, or days_ahead and at';
    return Number.isInteger(node.in_minutes) &&
      (node.in_minutes as number) >= 1 &&
      (node.in_minutes as number) <= callbackLimits.aheadDaysMax * 1440
      ? null
      : `in_minutes must be a whole number from 1 to ${callbackLimits.aheadDaysMax * 1440}`;
  }
  if (typeof node.at !== 'string' || !clockPattern.test(node.at)) return 'at must be a local time HH:MM';
  const days = node.days_ahead ?? 0;
  if (!Number.isInteger(days) || (days as number) < 0 || (days as number) > callbackLimits.aheadDaysMax)
    return `days_ahead must be a whole number from 0 to ${callbackLimits.aheadDaysMax}`;
  return null;
}

export function callbackRequestOfScript(node: ScriptCallback): CallbackRequest {
  if (node.in_minutes !== undefined) return { kind: 'in_minutes', minutes: node.in_minutes };
  return { kind: 'day_time', daysAhead: node.days_ahead ?? 0, clock: node.at ?? '09:00' };
}

/** The instant a request names, read in `zone` from `nowMs`; null when it is not a valid future time. */
export function callbackInstant(request: CallbackRequest, zone: string, nowMs: number): number | null {
  let at: DateTime;
  if (request.kind === 'in_minutes') return nowMs + request.minutes * 60_000;
  if (request.kind === 'local_time') at = DateTime.fromISO(request.localDateTime, { zone });
  else {
    const [hour, minute] = request.clock.split(':').map(Number);
    at = DateTime.fromMillis(nowMs, { zone })
      .startOf('day')
      .plus({ days: request.daysAhead })
      .set({ hour: hour ?? 0, minute: minute ?? 0 });
  }
  if (!at.isValid) return null;
  const atMs = at.toMillis();
  if (atMs <= nowMs || atMs > nowMs + callbackLimits.aheadDaysMax * 86_400_000) return null;
  return atMs;
}

/** What the agent is told: scheduled (when, in the callee's local time) or why not. */
export type CallbackResult =
  | { scheduled: true; callbackAt: string; localTime: string; movedIntoWindow: boolean }
  | { scheduled: false; reason: string };

export function callbackResultText(result: CallbackResult): string {
  return JSON.stringify(
    result.scheduled
      ? {
          scheduled: true,
          callback_local_time: result.localTime,
          ...(result.movedIntoWindow
            ? { note: 'moved to the first time the campaign may call (its calling hours or a holiday)' }
            : {}),
        }
      : { scheduled: false, error: result.reason },
  );
}
