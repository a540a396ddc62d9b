import { compileLinearPattern, linearPatternProblem } from './linearPattern.js';
import type { CallRecord, TranscriptEntry } from './records.js';
import { type DataExpectation, fitsDataSchema, type Scenario } from './scenarios.js';
import type { TurnTiming } from './turnTiming.js';

/**
 * Whether an ended call met its scenario's expectations, and if not, why — one sentence per
 * expectation missed, saying what was expected and what happened. Pure: the call record holds
 * everything (status, end reason, transcript with its tool and transfer notes, extracted data,
 * the turn waterfall in its metrics).
 */

/** Lower case, letters and digits only, single spaces: how phrases are compared. */
export function normalizedWords(text: string): string {
  return text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

function agentSpeech(transcript: readonly TranscriptEntry[]): string {
  return ` ${transcript
    .filter((entry) => entry.role === 'agent' && entry.event === undefined)
    .map((entry) => normalizedWords(entry.text))
    .join(' ')} `;
}

/** The voice-to-voice time of each answered callee turn (ms), from the call's turn waterfall. */
export function turnLatenciesMs(call: CallRecord): number[] {
  const turns = call.metrics?.turns;
  if (Array.isArray(turns)) {
    return (turns as TurnTiming[])
      .map((turn) => turn.voice_to_voice_ms)
      .filter((value): value is number => typeof value === 'number');
  }
  const latencies = call.metrics?.response_latencies_ms;
  return Array.isArray(latencies)
    ? latencies.filter((value): value is number => typeof value === 'number')
    : [];
}

export function callDurationS(call: CallRecord): number | null {
  if (!call.inProgressAt || !call.endedAt) return null;
  return (Date.parse(call.endedAt) - Date.parse(call.inProgressAt)) / 1000;
}

/** `name {json}` notes of the transcript, as the tool caller writes them. */
export function toolCallsOf(transcript: readonly TranscriptEntry[]): { name: string; arguments: unknown }[] {
  return transcript
    .filter((entry) => entry.event === 'tool_call')
    .map((entry) => {
      const space = entry.text.indexOf(' ');
      const name = space < 0 ? entry.text : entry.text.slice(0, space);
      let args: unknown = {};
      try {
        args = space < 0 ? {} : JSON.parse(entry.text.slice(space + 1));
      } catch {
        args = null;
      }
      return { name, arguments: args };
    });
}

/** Whether `actual` holds everything `expected` does (objects by key, the rest by value). */
export function containsValue(actual: unknown, expected: unknown): boolean {
  if (typeof expected === 'object' && expected !== null && !Array.isArray(expected)) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return false;
    return Object.entries(expected).every(([key, value]) =>
      containsValue((actual as Record<string, unknown>)[key], value),
    );
  }
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((value, index) => containsValue(actual[index], value))
    );
  }
  if (typeof expected === 'string' && typeof actual === 'string')
    return normalizedWords(expected) === normalizedWords(actual);
  return Object.is(actual, expected);
}

function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function dataProblem(
  field: string,
  expectation: DataExpectation,
  data: Record<string, unknown>,
): string | null {
  const actual = data[field];
  const where = `data.${field}`;
  if (typeof expectation !== 'object' || expectation === null || Array.isArray(expectation)) {
    return containsValue(actual, expectation)
      ? null
      : `${where}: expected ${shown(expectation)}, got ${shown(actual)}`;
  }
  if ('equals' in expectation)
    return containsValue(actual, expectation.equals) && containsValue(expectation.equals, actual)
      ? null
      : `${where}: expected ${shown(expectation.equals)}, got ${shown(actual)}`;
  if ('present' in expectation) {
    const present = actual !== undefined && actual !== null;
    return present === expectation.present
      ? null
      : `${where}: expected ${expectation.present ? 'a value' : 'no value'}, got ${shown(actual)}`;
  }
  if ('matches' in expectation) {
    const problem = linearPatternProblem(expectation.matches);
    if (problem !== null) return `${where}: the pattern /${expectation.matches}/ ${problem}`;
    return typeof actual === 'string' &&
      compileLinearPattern(expectation.matches, { ignoreCase: true }).test(actual)
      ? null
      : `${where}: expected text matching /${expectation.matches}/, got ${shown(actual)}`;
  }
  const problem = fitsDataSchema(expectation.schema, actual);
  return problem === null ? null : `${where}: ${shown(actual)} does not fit the schema (${problem})`;
}

/** Every expectation the call missed, in the order the scenario lists them; empty: it passed. */
export function scenarioFailures(scenario: Scenario, call: CallRecord): string[] {
  const expect = scenario.expect ?? {};
  const failures: string[] = [];
  const compare = (label: string, expected: string | undefined, actual: string | null) => {
    if (expected !== undefined && expected !== actual)
      failures.push(`${label}: expected ${expected}, got ${actual ?? 'none'}`);
  };
  compare('status', expect.status, call.status);
  compare('end_reason', expect.end_reason, call.endReason);
  compare('answered_by', expect.answered_by, call.answeredBy);
  for (const [field, expectation] of Object.entries(expect.data ?? {})) {
    const problem = dataProblem(field, expectation, call.extractedData ?? {});
    if (problem) failures.push(problem);
  }
  const spoken = agentSpeech(call.transcript);
  for (const phrase of expect.says ?? []) {
    if (!spoken.includes(` ${normalizedWords(phrase)} `)) failures.push(`the agent never said "${phrase}"`);
  }
  for (const phrase of expect.must_not_say ?? []) {
    if (spoken.includes(` ${normalizedWords(phrase)} `)) failures.push(`the agent said "${phrase}"`);
  }
  const toolCalls = toolCallsOf(call.transcript);
  for (const wanted of expect.tool_calls ?? []) {
    const sameName = toolCalls.filter((made) => made.name === wanted.name);
    if (sameName.length === 0) {
      const made = toolCalls.map((made) => made.name).join(', ') || 'none';
      failures.push(`tool ${wanted.name} was not called (called: ${made})`);
    } else if (
      wanted.arguments &&
      !sameName.some((made) => containsValue(made.arguments, wanted.arguments))
    ) {
      failures.push(
        `tool ${wanted.name} was called with ${shown(sameName[0]?.arguments)}, not ${shown(wanted.arguments)}`,
      );
    }
  }
  if (expect.transfer_to !== undefined) {
    const transfers = call.transcript
      .filter((entry) => entry.event === 'transfer')
      .map((entry) => entry.text);
    if (!transfers.some((text) => text.startsWith(`${expect.transfer_to}:`)))
      failures.push(
        `expected a transfer to ${expect.transfer_to}, got ${transfers.length ? transfers.join('; ') : 'none'}`,
      );
  }
  if (expect.max_latency_ms !== undefined) {
    const slowest = Math.max(...turnLatenciesMs(call), Number.NEGATIVE_INFINITY);
    if (slowest > expect.max_latency_ms)
      failures.push(
        `the slowest reply took ${Math.round(slowest)} ms (at most ${expect.max_latency_ms} ms expected)`,
      );
  }
  if (expect.max_duration_s !== undefined) {
    const duration = callDurationS(call);
    if (duration !== null && duration > expect.max_duration_s)
      failures.push(`the call lasted ${duration.toFixed(1)} s (at most ${expect.max_duration_s} s expected)`);
  }
  return failures;
}
