import { AppError } from './errors.js';
import { isPlainObject } from './outboundCallRequest.js';

/**
 * Caller-ID health (issue 37): each caller ID's answer rate over its last `windowAttempts`
 * finished attempts in the campaign, compared with the pool's rate over the same windows. A
 * number answered less than `minShareOfPool` × the pool's rate, once it has `minAttempts` in its
 * window, is rested for `restMinutes`: left out of the campaign's rotation. The last un-rested
 * number of a pool is never rested — resting it would stop the campaign outright, which is a
 * pause, not a rotation choice; a pool-wide drop (every number unanswered) is the callees', not
 * one number's.
 */
export interface CallerIdHealthSettings {
  windowAttempts: number;
  minAttempts: number;
  minShareOfPool: number;
  restMinutes: number;
}

export const defaultCallerIdHealth: CallerIdHealthSettings = {
  windowAttempts: 20,
  minAttempts: 10,
  minShareOfPool: 0.5,
  restMinutes: 240,
};

export const callerIdHealthLimits = {
  windowAttemptsMax: 200,
  restMinutesMax: 10_080,
} as const;

/** One caller ID's window, as the store keeps it (`recent`: '1' answered, '0' not, oldest first). */
export interface CallerIdWindow {
  callerId: string;
  recent: string;
  restedUntil: string | null;
}

export interface CallerIdHealth {
  number: string;
  status: 'active' | 'rested';
  answerRate: number | null;
  attempts: number;
  answered: number;
  restedUntil: string | null;
}

function invalid(message: string): AppError {
  return new AppError('validation_error', message);
}

function wholeIn(value: unknown, field: string, min: number, max: number): number {
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > max)
    throw invalid(`caller_id_health.${field} must be a whole number from ${min} to ${max}`);
  return value as number;
}

const fields = ['window_attempts', 'min_attempts', 'min_share_of_pool', 'rest_minutes'] as const;

/** `caller_id_health` of a create or PATCH body (missing fields: the current or default ones). 400 naming the field. */
export function parseCallerIdHealth(
  value: unknown,
  base: CallerIdHealthSettings = defaultCallerIdHealth,
): CallerIdHealthSettings {
  if (value === null) return defaultCallerIdHealth;
  if (!isPlainObject(value))
    throw invalid(
      'caller_id_health must be an object {window_attempts, min_attempts, min_share_of_pool, rest_minutes}',
    );
  for (const key of Object.keys(value)) {
    if (!(fields as readonly string[]).includes(key))
      throw invalid(`caller_id_health has an unknown field ${key.slice(0, 40)} (${fields.join(', ')})`);
  }
  const windowAttempts =
    value.window_attempts === undefined
      ? base.windowAttempts
      : wholeIn(value.window_attempts, 'window_attempts', 1, callerIdHealthLimits.windowAttemptsMax);
  const minAttempts =
    value.min_attempts === undefined
      ? Math.min(base.minAttempts, windowAttempts)
      : wholeIn(value.min_attempts, 'min_attempts', 1, windowAttempts);
  const share = value.min_share_of_pool ?? base.minShareOfPool;
  if (typeof share !== 'number' || !Number.isFinite(share) || share < 0 || share > 1)
    throw invalid('caller_id_health.min_share_of_pool must be a number from 0 to 1 (0: never rest)');
  const restMinutes =
    value.rest_minutes === undefined
      ? base.restMinutes
      : wholeIn(value.rest_minutes, 'rest_minutes', 1, callerIdHealthLimits.restMinutesMax);
  return { windowAttempts, minAttempts, minShareOfPool: share, restMinutes };
}

export function describeCallerIdHealthSettings(settings: CallerIdHealthSettings) {
  return {
    window_attempts: settings.windowAttempts,
    min_attempts: settings.minAttempts,
    min_share_of_pool: settings.minShareOfPool,
    rest_minutes: settings.restMinutes,
  };
}

function answeredIn(recent: string): number {
  let answered = 0;
  for (const bit of recent) if (bit === '1') answered += 1;
  return answered;
}

function isRested(window: CallerIdWindow | undefined, nowMs: number): boolean {
  return window?.restedUntil != null && Date.parse(window.restedUntil) > nowMs;
}

/** Each pool number's health (a number with no finished attempt yet has no rate). */
export function callerIdHealthOf(
  pool: readonly string[],
  windows: readonly CallerIdWindow[],
  nowMs: number,
): CallerIdHealth[] {
  return pool.map((number) => {
    const window = windows.find((row) => row.callerId === number);
    const recent = window?.recent ?? '';
    const answered = answeredIn(recent);
    const rested = isRested(window, nowMs);
    return {
      number,
      status: rested ? 'rested' : 'active',
      answerRate: recent.length === 0 ? null : answered / recent.length,
      attempts: recent.length,
      answered,
      restedUntil: rested ? (window?.restedUntil ?? null) : null,
    };
  });
}

/** The pool's answer rate over the windows of its numbers (null before any finished attempt). */
export function poolAnswerRate(health: readonly CallerIdHealth[]): number | null {
  const attempts = health.reduce((sum, number) => sum + number.attempts, 0);
  return attempts === 0 ? null : health.reduce((sum, number) => sum + number.answered, 0) / attempts;
}

/** The numbers the campaign dials from now: the pool less the rested ones (never empty). */
export function rotationOf(pool: readonly string[], health: readonly CallerIdHealth[]): string[] {
  const active = pool.filter((number) => health.find((row) => row.number === number)?.status !== 'rested');
  return active.length > 0 ? active : [...pool];
}

/**
 * The active numbers that fall below the pool, worst first: at least `minAttempts` in the window
 * and a rate under `minShareOfPool` × the pool's rate. The store rests them one at a time, each
 * under the rule that the last active number stays.
 */
export function numbersToRest(
  settings: CallerIdHealthSettings,
  health: readonly CallerIdHealth[],
): { number: CallerIdHealth; poolRate: number }[] {
  const poolRate = poolAnswerRate(health);
  if (poolRate === null || poolRate === 0 || settings.minShareOfPool === 0) return [];
  return health
    .filter(
      (row) =>
        row.status === 'active' &&
        row.attempts >= settings.minAttempts &&
        (row.answerRate as number) < settings.minShareOfPool * poolRate,
    )
    .sort((a, b) => (a.answerRate as number) - (b.answerRate as number))
    .map((number) => ({ number, poolRate }));
}
