import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  type AgentOverrides,
  type AgentTestResult,
  type AgentTestRun,
  type AgentTestRunRequest,
  AuthenticationError,
  CallwrightClient,
  CallwrightError,
  NetworkError,
  type ReplayDiff,
  type Scenario,
  TimeoutError,
  type TranscriptEntry,
  ValidationError,
} from '../client/index.js';
import { loadTestRunnerConfig } from '../config.js';
import { isAppError } from '../domain/errors.js';
import { parseScenario, scenarioLimits } from '../domain/scenarios.js';
import { type CliOutput, UsageError } from './context.js';
import { type JunitTestCase, junitXml } from './junit.js';
import { renderTable, shorten } from './table.js';

/**
 * `callwright test`: runs scenario files against an agent of a running service, over HTTP with the
 * typed client (it never opens the database), and reports like a test runner — a table, each
 * failure with its reasons and transcript, a summary, JUnit XML for CI — with the exit status
 * 0 (all passed), 1 (any failed, the run timed out, the service unreachable) or 2 (bad input).
 */

/** Bad input found before anything is sent (a scenario file, an option's value): exit 2. */
class TestInputError extends Error {}

interface TestCommandOptions {
  files: string[];
  agentId: string;
  url: string;
  apiKey: string;
  repeat: number;
  junitPath: string | null;
  timeoutMs: number;
  replayOf: string | null;
  overrides: AgentOverrides | null;
  fromNumber: string | null;
}

const defaultTimeoutS = 300;

function parseTestOptions(args: string[]): TestCommandOptions {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        agent: { type: 'string' },
        url: { type: 'string' },
        'api-key': { type: 'string' },
        repeat: { type: 'string' },
        junit: { type: 'string' },
        timeout: { type: 'string' },
        replay: { type: 'string' },
        'agent-overrides': { type: 'string' },
        from: { type: 'string' },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0] ?? 'bad arguments');
  }
  const values = parsed.values as Record<string, string | undefined>;
  const agentId = values.agent;
  if (!agentId) throw new UsageError('--agent AGENT_ID is required');
  const replayOf = values.replay ?? null;
  if (replayOf === null && parsed.positionals.length === 0)
    throw new UsageError('give scenario files or folders to run, or --replay CALL_ID');
  if (replayOf !== null && parsed.positionals.length > 0)
    throw new UsageError('give scenario files or --replay CALL_ID, not both');
  const repeatText = values.repeat ?? '1';
  if (
    !/^[0-9]{1,3}$/.test(repeatText) ||
    Number(repeatText) < 1 ||
    Number(repeatText) > scenarioLimits.repeatMax
  )
    throw new UsageError(`--repeat must be a whole number from 1 to ${scenarioLimits.repeatMax}`);
  const timeoutText = values.timeout ?? String(defaultTimeoutS);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(timeoutText) || Number(timeoutText) <= 0 || Number(timeoutText) > 86_400)
    throw new UsageError('--timeout must be a positive number of seconds (at most 86400)');
  const environment = loadTestRunnerConfig();
  const url = values.url ?? environment.url;
  if (values.url !== undefined && !/^https?:\/\/[^/]/.test(values.url))
    throw new UsageError('--url must be the http(s) address of a running callwright');
  const apiKey = values['api-key'] ?? environment.apiKey;
  if (!apiKey) throw new UsageError('no API key: set CALLWRIGHT_API_KEY (or pass --api-key)');
  const junitPath = values.junit ?? null;
  if (junitPath !== null && !existsSync(dirname(resolve(junitPath))))
    throw new TestInputError(`--junit ${junitPath}: the folder ${dirname(junitPath)} does not exist`);
  return {
    files: parsed.positionals,
    agentId,
    url,
    apiKey,
    repeat: Number(repeatText),
    junitPath,
    timeoutMs: Math.round(Number(timeoutText) * 1000),
    replayOf,
    overrides: values['agent-overrides'] === undefined ? null : readOverrides(values['agent-overrides']),
    fromNumber: values.from ?? null,
  };
}

/** `--agent-overrides`: JSON (`{…}`), or a file holding it (`FILE` or `@FILE`). */
function readOverrides(value: string): AgentOverrides {
  let text = value;
  if (!value.trim().startsWith('{')) {
    const path = value.startsWith('@') ? value.slice(1) : value;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new TestInputError(`--agent-overrides: cannot read ${path} (${(error as Error).message})`);
    }
  }
  let overrides: unknown;
  try {
    overrides = JSON.parse(text);
  } catch (error) {
    throw new TestInputError(`--agent-overrides is not JSON: ${(error as Error).message}`);
  }
  if (typeof overrides !== 'object' || overrides === null || Array.isArray(overrides))
    throw new TestInputError(
      '--agent-overrides must be a JSON object: {"prompt": …, "settings": {…}, "script": {…} or "FILE"}',
    );
  const fields = overrides as Record<string, unknown>;
  const unknown = Object.keys(fields).find((key) => !['prompt', 'settings', 'script'].includes(key));
  if (unknown !== undefined)
    throw new TestInputError(
      `--agent-overrides: ${unknown.slice(0, 40)} is not a field (prompt, settings, script)`,
    );
  // A script as `agents create --script` takes it: a file of JSON (the API receives the object).
  if (typeof fields.script === 'string') fields.script = readScriptFile(fields.script);
  return fields as AgentOverrides;
}

function readScriptFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new TestInputError(
      `--agent-overrides: cannot read the script file ${path} (${(error as Error).message})`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new TestInputError(
      `--agent-overrides: the script file ${path} is not JSON: ${(error as Error).message}`,
    );
  }
}

/** The scenario files named: files as given, folders as every `*.json` in them, by name. */
function scenarioFiles(paths: readonly string[]): string[] {
  const files: string[] = [];
  for (const path of paths) {
    let isFolder: boolean;
    try {
      isFolder = statSync(path).isDirectory();
    } catch {
      throw new TestInputError(`${path}: no such file or folder`);
    }
    if (!isFolder) {
      files.push(path);
      continue;
    }
    const inside = readdirSync(path)
      .filter((name) => name.endsWith('.json'))
      .sort()
      .map((name) => join(path, name));
    if (inside.length === 0) throw new TestInputError(`${path}: no *.json scenario files in this folder`);
    files.push(...inside);
  }
  const seen = new Set<string>();
  return files.filter((file) => !seen.has(resolve(file)) && seen.add(resolve(file)));
}

/** Every file read and checked as the service would, before anything is sent. */
function loadScenarios(files: readonly string[], repeat: number): Scenario[] {
  const fileOfName = new Map<string, string>();
  const scenarios = files.map((file) => {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      throw new TestInputError(`${file}: not a JSON file (${(error as Error).message})`);
    }
    try {
      parseScenario(raw, file);
    } catch (error) {
      if (isAppError(error)) throw new TestInputError(error.message);
      throw error;
    }
    const scenario = raw as Scenario;
    const earlier = fileOfName.get(scenario.name);
    if (earlier !== undefined)
      throw new TestInputError(`${file}: the name "${scenario.name}" is also the name in ${earlier}`);
    fileOfName.set(scenario.name, file);
    return scenario;
  });
  if (scenarios.length > scenarioLimits.scenariosPerRunMax)
    throw new TestInputError(
      `${scenarios.length} scenarios: a run takes at most ${scenarioLimits.scenariosPerRunMax}; run them in parts`,
    );
  if (scenarios.length * repeat > scenarioLimits.callsPerRunMax)
    throw new TestInputError(
      `${scenarios.length} scenarios × ${repeat} repeats: a run places at most ${scenarioLimits.callsPerRunMax} calls`,
    );
  return scenarios;
}

/** The address without user or password, to name in messages. */
function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.href.replace(/\/$/, '');
  } catch {
    return '(the configured URL)';
  }
}

/** The innermost cause of a network failure, as Node words it (`connect ECONNREFUSED …`). */
function rootCause(error: unknown): string {
  let cause = error;
  for (let depth = 0; depth < 6 && (cause as { cause?: unknown })?.cause !== undefined; depth++)
    cause = (cause as { cause: unknown }).cause;
  return String((cause as Error)?.message ?? cause);
}

/** A failure of the HTTP exchange as one line, and its exit status. */
function describeClientError(error: CallwrightError, url: string): { message: string; status: number } {
  if (error instanceof TimeoutError)
    return { message: `the callwright service at ${url} did not answer in time`, status: 1 };
  if (error instanceof NetworkError)
    return {
      message: `cannot reach the callwright service at ${url} (${rootCause(error)}): is \`callwright serve\` running? Set --url or CALLWRIGHT_URL`,
      status: 1,
    };
  if (error instanceof AuthenticationError)
    return { message: `the service refused the API key: ${error.message}`, status: 1 };
  if (error instanceof ValidationError)
    return { message: `the service refused the run: ${error.message}`, status: 2 };
  return { message: `${error.message} (HTTP ${error.status})`, status: 1 };
}

/** Runs `callwright test ARGS`; resolves to the exit status. Usage mistakes throw `UsageError`. */
export async function runTestCommand(
  args: string[],
  context: { json: boolean; accountId: string | undefined; out: CliOutput },
): Promise<number> {
  if (context.accountId !== undefined)
    throw new UsageError('test acts on the account of its API key; --account does not apply');
  let options: TestCommandOptions | undefined;
  // Nothing should ever print the key; should a message quote it, it is cut out (a real key is
  // long: a short string would cut ordinary words).
  const hideKey = (text: string) =>
    options && options.apiKey.length >= 8 ? text.split(options.apiKey).join('cw_…') : text;
  const out = { stdout: (text: string) => context.out.stdout(hideKey(text)) };
  const fail = (message: string, status: number) => {
    context.out.stderr(`callwright: ${hideKey(message).replace(/\s+/g, ' ').trim()}\n`);
    return status;
  };
  try {
    options = parseTestOptions(args);
    const request: AgentTestRunRequest = {
      ...(options.replayOf !== null
        ? { replay_of: options.replayOf }
        : { scenarios: loadScenarios(scenarioFiles(options.files), options.repeat) }),
      ...(options.repeat > 1 ? { repeat: options.repeat } : {}),
      ...(options.fromNumber !== null ? { from_number: options.fromNumber } : {}),
      ...(options.overrides !== null ? { agent_overrides: options.overrides } : {}),
    };
    const client = new CallwrightClient({
      apiKey: options.apiKey,
      baseUrl: options.url,
      timeoutMs: 15_000,
      maxRetries: 2,
    });
    const startedMs = Date.now();
    const started = await client.agentTests.run(options.agentId, request);
    if (!context.json)
      out.stdout(
        `run ${started.id}: ${started.summary.total} call${started.summary.total === 1 ? '' : 's'} against ${started.agent_id}\n\n`,
      );
    const run = await client.agentTests.waitFor(options.agentId, started.id, {
      timeoutMs: Math.max(0, options.timeoutMs - (Date.now() - startedMs)),
      pollMs: 500,
    });
    if (context.json) out.stdout(`${JSON.stringify(run)}\n`);
    else out.stdout(formatRun(run, Date.now() - startedMs));
    if (options.junitPath !== null) {
      try {
        writeFileSync(options.junitPath, junitOfRun(run));
      } catch (error) {
        return fail(`cannot write ${options.junitPath}: ${(error as Error).message}`, 1);
      }
    }
    if (run.status !== 'completed')
      return fail(
        `timed out after ${options.timeoutMs / 1000} s with ${run.summary.running} of ${run.summary.total} calls still running (run ${run.id})`,
        1,
      );
    return run.summary.failed === 0 ? 0 : 1;
  } catch (error) {
    if (error instanceof TestInputError) return fail(error.message, 2);
    if (error instanceof CallwrightError) {
      const described = describeClientError(error, shownUrl(options?.url ?? ''));
      return fail(described.message, described.status);
    }
    throw error;
  }
}

/** The shared renderer's table (src/cli/table.ts) as text: every line fits 120 columns. */
function table(header: string[], rows: string[][]): string {
  return renderTable(header, rows)
    .map((line) => `${line}\n`)
    .join('');
}

const resultWords = { passed: 'PASS', failed: 'FAIL', running: 'RUNNING' } as const;

function resultName(result: AgentTestResult, run: AgentTestRun): string {
  const runs = run.scenarios.find((scenario) => scenario.name === result.scenario)?.runs ?? 1;
  return runs > 1 ? `${result.scenario} #${result.repeat}` : result.scenario;
}

/** The conversation, one line per turn: `   3.2 s  callee: yes that works`. */
export function transcriptLines(transcript: readonly TranscriptEntry[]): string[] {
  return transcript.map((entry) => {
    const atS = `${(entry.start_ms / 1000).toFixed(1).padStart(6)} s`;
    const who = entry.event ? `${entry.role} [${entry.event}]` : entry.role;
    return `${atS}  ${who}: ${entry.text}`;
  });
}

function percent(rate: number | null): string {
  return rate === null ? '-' : `${Math.round(rate * 100)}%`;
}

function latencyText(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? '-' : String(ms);
}

function formatDiff(diff: ReplayDiff): string {
  const rows = diff.turns.map((turn) => [
    String(turn.turn),
    shorten(turn.before?.callee_text ?? turn.after?.callee_text ?? '', 40),
    `${latencyText(turn.before?.latency_ms)} → ${latencyText(turn.after?.latency_ms)} ms`,
    turn.changes.length === 0 ? '-' : turn.changes.join('; '),
  ]);
  const lines = [
    `Replay of ${diff.before_call_id} (before) as ${diff.after_call_id} (after), turn by turn:\n`,
    table(['TURN', 'CALLEE SAID', 'LATENCY BEFORE → AFTER', 'CHANGES'], rows),
  ];
  for (const turn of diff.turns) {
    if (!turn.before || !turn.after || !turn.changes.includes('the agent says something else')) continue;
    lines.push(`turn ${turn.turn}, the agent before: ${turn.before.agent_text}\n`);
    lines.push(`turn ${turn.turn}, the agent after:  ${turn.after.agent_text}\n`);
  }
  for (const field of diff.data)
    lines.push(`data.${field.field}: ${JSON.stringify(field.before)} → ${JSON.stringify(field.after)}\n`);
  for (const line of diff.summary) lines.push(`  ${line}\n`);
  return `${lines.join('')}\n`;
}

/** The report for people: the table, each failure in full, replays' diffs, the summary. */
export function formatRun(run: AgentTestRun, elapsedMs: number): string {
  const rows = run.results.map((result) => [
    result.scenario,
    String(result.repeat),
    resultWords[result.status],
    result.duration_s === null ? '-' : `${result.duration_s.toFixed(1)} s`,
    result.max_latency_ms === null ? '-' : `${result.max_latency_ms} ms`,
    result.failures[0] ?? (result.status === 'running' ? `still ${result.call_status ?? 'queued'}` : '-'),
  ]);
  const parts = [table(['SCENARIO', 'REPEAT', 'RESULT', 'DURATION', 'SLOWEST REPLY', 'REASON'], rows), '\n'];
  for (const result of run.results.filter((each) => each.status === 'failed')) {
    parts.push(`FAIL ${resultName(result, run)} (${result.call_id}):\n`);
    for (const failure of result.failures) parts.push(`  - ${failure}\n`);
    if (result.transcript && result.transcript.length > 0) {
      parts.push('  transcript:\n');
      for (const line of transcriptLines(result.transcript)) parts.push(`  ${line}\n`);
    }
    parts.push('\n');
  }
  for (const result of run.results) {
    if (!result.diff) continue;
    if (run.results.length > 1) parts.push(`${resultName(result, run)}: `);
    parts.push(formatDiff(result.diff));
  }
  if (run.scenarios.some((scenario) => scenario.runs > 1)) {
    for (const scenario of run.scenarios)
      parts.push(
        `${scenario.name}: ${scenario.passed}/${scenario.runs} passed (pass rate ${percent(scenario.pass_rate)})\n`,
      );
  }
  const { passed, failed, running } = run.summary;
  const still = running > 0 ? `, ${running} still running (timed out)` : '';
  parts.push(
    `${passed} passed, ${failed} failed${still} in ${(elapsedMs / 1000).toFixed(1)} s (run ${run.id})\n`,
  );
  return parts.join('');
}

/** JUnit XML of a run: one suite (the agent), one test case per call. */
export function junitOfRun(run: AgentTestRun): string {
  const cases = run.results.map((result): JunitTestCase => {
    const testCase: JunitTestCase = {
      classname: run.agent_id,
      name: resultName(result, run),
      timeS: result.duration_s,
    };
    if (result.status === 'failed') {
      const text = [
        ...result.failures,
        ...(result.transcript && result.transcript.length > 0
          ? ['', 'transcript:', ...transcriptLines(result.transcript)]
          : []),
        '',
        `call ${result.call_id}: ${result.call_status ?? '-'} / ${result.end_reason ?? '-'}`,
      ].join('\n');
      testCase.failure = { message: result.failures[0] ?? 'failed', text };
    }
    if (result.status === 'running')
      testCase.error = {
        message: 'still running when the run timed out',
        text: `call ${result.call_id} was ${result.call_status ?? 'queued'}`,
      };
    return testCase;
  });
  return junitXml(
    [{ name: run.agent_id, timestamp: run.created_at, cases }],
    `callwright agent tests ${run.id}`,
  );
}
