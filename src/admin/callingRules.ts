import { callingWindowProblem, isTimeZone } from '../domain/callingWindow.js';
import { AppError } from '../domain/errors.js';
import { isPlainObject } from '../domain/outboundCallRequest.js';
import { isE164 } from '../domain/phone.js';
import {
  type DialRate,
  type DialRateScope,
  dialRateScopes,
  type QuietHoursRule,
  type Store,
} from '../store/types.js';

/*
 * An account's calling rules, shared by the API, the command line and the dashboard: caps on calls
 * per second by caller ID and by trunk, and the quiet hours of every call. Each input is checked
 * here, so the three say the same thing about a bad one.
 */

export const callsPerSecondMax = 100;

export function describeDialRate(
  rate: DialRate | { scope: DialRateScope; subject: string; callsPerSecond: null },
) {
  return { scope: rate.scope, subject: rate.subject, calls_per_second: rate.callsPerSecond };
}

export function describeQuietHours(rule: QuietHoursRule | null) {
  return { quiet_hours: rule ? { start: rule.start, end: rule.end, time_zone: rule.timeZone } : null };
}

/**
 * Sets (or, with `calls_per_second: null`, removes) the cap of one caller ID or trunk of the
 * account. The subject must be the account's: a number it owns, a trunk it added.
 */
export async function setDialRate(store: Store, accountId: string, input: unknown) {
  if (
    !isPlainObject(input) ||
    Object.keys(input).some((key) => !['scope', 'subject', 'calls_per_second'].includes(key))
  )
    throw new AppError('validation_error', 'the body is {"scope", "subject", "calls_per_second"}');
  const { scope, subject, calls_per_second: perSecond } = input;
  if (!(dialRateScopes as readonly unknown[]).includes(scope))
    throw new AppError('validation_error', `scope must be one of ${dialRateScopes.join(', ')}`);
  if (typeof subject !== 'string' || subject.length === 0 || subject.length > 100)
    throw new AppError('validation_error', 'subject must be the caller ID or the trunk name');
  if (
    perSecond !== null &&
    (!Number.isInteger(perSecond) || (perSecond as number) < 1 || (perSecond as number) > callsPerSecondMax)
  )
    throw new AppError(
      'validation_error',
      `calls_per_second must be a whole number from 1 to ${callsPerSecondMax}, or null`,
    );
  if (scope === 'caller_id') {
    if (!isE164(subject)) throw new AppError('invalid_phone', 'subject must be an E.164 phone number');
    if (!(await store.numbers.get(accountId, subject)))
      throw new AppError('not_found', 'no such number in this account');
  } else if (!(await store.trunks.get(accountId, subject))) {
    throw new AppError('not_found', 'no such trunk in this account');
  }
  const rate = { scope: scope as DialRateScope, subject, callsPerSecond: perSecond as number | null };
  await store.dialRates.set(accountId, rate);
  return describeDialRate(rate);
}

const quietHoursShape =
  'quiet hours are {"start": "21:00", "end": "08:00", "time_zone": "America/New_York"}, or null for none';

/** Sets (or, with null, removes) the account's quiet hours: no call starts inside them. */
export async function setQuietHours(store: Store, accountId: string, value: unknown) {
  let rule: QuietHoursRule | null = null;
  if (value !== null) {
    if (
      !isPlainObject(value) ||
      Object.keys(value).some((key) => !['start', 'end', 'time_zone'].includes(key))
    )
      throw new AppError('validation_error', quietHoursShape);
    const { start, end, time_zone: timeZone } = value;
    if (callingWindowProblem({ start: end, end: start }))
      throw new AppError(
        'validation_error',
        'quiet_hours: start and end must be local times HH:MM that differ',
      );
    if (!isTimeZone(timeZone))
      throw new AppError('validation_error', 'quiet_hours.time_zone must be an IANA time zone');
    rule = { start: start as string, end: end as string, timeZone };
  }
  await store.dialRates.setQuietHours(accountId, rule);
  return describeQuietHours(rule);
}
