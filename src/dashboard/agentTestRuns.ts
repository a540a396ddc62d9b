import { keyForCallsPlacedBy } from '../admin/apiKeys.js';
import { startTestRun, type TestRunReport } from '../agentTests/testRuns.js';
import { mergedSettings } from '../domain/agentOverrides.js';
import { AppError } from '../domain/errors.js';
import type { AccountRecord } from '../domain/records.js';
import { isObject } from '../domain/settingsParsing.js';
import { checkTurnTaking, defaultTurnTaking, turnTakingLimits } from '../domain/turnTakingSettings.js';
import type { DashboardOptions } from './context.js';
import { testCallKeyName } from './testCall.js';

/**
 * Agent test runs started from the dashboard go through the API's own `startTestRun`: the same
 * checks, nothing dialled unless every scenario is valid. Their calls are recorded under the
 * account's "Dashboard test calls" key, like the dashboard's test calls.
 */
export async function startDashboardTestRun(
  options: DashboardOptions,
  account: AccountRecord,
  agentId: string,
  body: Record<string, unknown>,
): Promise<TestRunReport> {
  const key = await keyForCallsPlacedBy(options.store, account.id, testCallKeyName);
  const report = await startTestRun(options.store, { account, apiKeyId: key.id }, agentId, body, {
    vendorConfigured: options.vendorConfigured ?? (() => false),
  });
  options.callControl?.wake();
  return report;
}

function parseJsonField(label: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new AppError('validation_error', `${label} are not valid JSON: ${(error as Error).message}`);
  }
}

/** The scenarios text area: one scenario object or a list of them. */
export function scenariosFromText(text: string): unknown[] {
  if (text.trim() === '')
    throw new AppError('validation_error', 'Paste a scenario (a JSON object) or a list of scenarios.');
  const parsed = parseJsonField('The scenarios', text);
  return Array.isArray(parsed) ? parsed : [parsed];
}

/** The repeat field as the request's `repeat` (the run checks its range); empty: once. */
export function repeatFromText(text: string): number | undefined {
  return text.trim() === '' ? undefined : Number(text.trim());
}

/** The overrides text area as the request's `agent_overrides`; empty: none. */
export function overridesFromText(text: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return undefined;
  const parsed = parseJsonField('The agent overrides', text);
  if (!isObject(parsed))
    throw new AppError(
      'validation_error',
      'The agent overrides must be a JSON object, e.g. {"settings":{"turn_taking":{"end_of_turn":{"wait_ms":1200}}}}',
    );
  return parsed;
}

/** The turn taking `settings` give (the defaults when they are not valid: the run reports that). */
export function currentTurnTaking(settings: Record<string, unknown>) {
  try {
    return checkTurnTaking(settings.turn_taking);
  } catch {
    // The run itself reports bad settings; the wait is fitted to the defaults meanwhile.
    return defaultTurnTaking;
  }
}

/**
 * A replay's overrides: the JSON given, with the end-of-turn wait field merged in as all three
 * waits of `settings.turn_taking.end_of_turn` (after a complete answer, an ambiguous one and an
 * unfinished one) — so every turn of the replay waits that long and the diff shows the change.
 */
export function replayOverrides(
  waitText: string,
  overridesText: string,
): Record<string, unknown> | undefined {
  const overrides = overridesFromText(overridesText);
  if (waitText.trim() === '') return overrides;
  const waitMs = Number(waitText.trim());
  const { waitMinMs, waitMaxMs } = turnTakingLimits;
  if (!Number.isInteger(waitMs) || waitMs < waitMinMs || waitMs > waitMaxMs)
    throw new AppError(
      'validation_error',
      `The end-of-turn wait must be a whole number of milliseconds from ${waitMinMs} to ${waitMaxMs}.`,
    );
  const given = isObject(overrides?.settings) ? overrides.settings : {};
  const endOfTurn = { min_wait_ms: waitMs, wait_ms: waitMs, max_wait_ms: waitMs };
  return {
    ...overrides,
    settings: mergedSettings(given, { turn_taking: { end_of_turn: endOfTurn } }),
  };
}
