import { checkSettingsAndScript } from '../admin/agents.js';
import { agentNotFound, newCallFields } from '../calls/createOutboundCall.js';
import { agentWithOverrides, parseAgentOverrides } from '../domain/agentOverrides.js';
import { variablesProblem } from '../domain/agentVariables.js';
import { diffRuns, type RunDiff, scenarioFromCall } from '../domain/callReplay.js';
import { isTerminal } from '../domain/callStatus.js';
import { AppError, invalidApiKeyMessage } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import type { AccountRecord, AgentTestCallRecord, CallRecord, TranscriptEntry } from '../domain/records.js';
import { callDurationS, scenarioFailures, turnLatenciesMs } from '../domain/scenarioChecks.js';
import {
  parseScenario,
  recordedAudioOf,
  type Scenario,
  scenarioCalleeNumber,
  scenarioLimits,
} from '../domain/scenarios.js';
import { isObject, onlyKnownFields, refuse, wholeNumber } from '../domain/settingsParsing.js';
import type { Store } from '../store/types.js';

/**
 * Agent test runs (docs/testing.md): each scenario, repeated, is one real sandbox call placed like
 * `POST /v1/calls/outbound` places one — so it runs the agent's whole pipeline over SIP and RTP —
 * with the scenario stored beside it for the sandbox's callee to play. A run's report is computed
 * when read: the calls that have ended are judged against their scenario.
 */

interface TestRunRequest {
  scenarios: Scenario[];
  repeat: number;
  fromNumber: string | null;
  replayOf: string | null;
  overrides: ReturnType<typeof parseAgentOverrides>;
}

function parseRequest(body: unknown): TestRunRequest {
  if (!isObject(body)) refuse('request body must be a JSON object');
  onlyKnownFields('the request', body, [
    'scenarios',
    'repeat',
    'from_number',
    'agent_overrides',
    'replay_of',
  ]);
  const repeat = wholeNumber('repeat', body.repeat, 1, scenarioLimits.repeatMax, 1);
  if (body.from_number !== undefined && typeof body.from_number !== 'string')
    refuse('from_number must be a string');
  if (body.replay_of !== undefined && (typeof body.replay_of !== 'string' || body.replay_of.length > 100))
    refuse('replay_of must be a call id');
  const replayOf = (body.replay_of as string | undefined) ?? null;
  if ((replayOf === null) === (body.scenarios === undefined))
    refuse('give either scenarios (a list) or replay_of (a call id)');
  let rawScenarios: unknown[] | null = null;
  if (body.scenarios !== undefined) {
    if (
      !Array.isArray(body.scenarios) ||
      body.scenarios.length === 0 ||
      body.scenarios.length > scenarioLimits.scenariosPerRunMax
    )
      refuse(`scenarios must be a list of 1 to ${scenarioLimits.scenariosPerRunMax} scenarios`);
    rawScenarios = body.scenarios;
  }
  const scenarios = (rawScenarios ?? []).map((raw, index) => parseScenario(raw, `scenarios[${index}]`));
  const names = new Set<string>();
  for (const scenario of scenarios) {
    if (names.has(scenario.name))
      refuse(`two scenarios are named "${scenario.name}"; names tell results apart`);
    names.add(scenario.name);
  }
  if (Math.max(1, scenarios.length) * repeat > scenarioLimits.callsPerRunMax)
    refuse(`a run places at most ${scenarioLimits.callsPerRunMax} calls (scenarios × repeat)`);
  return {
    scenarios,
    repeat,
    fromNumber: (body.from_number as string | undefined) ?? null,
    replayOf,
    overrides: parseAgentOverrides(body.agent_overrides),
  };
}

async function sandboxNumber(store: Store, accountId: string, wanted: string | null): Promise<string> {
  if (wanted !== null) {
    const number = await store.numbers.get(accountId, wanted);
    if (!number) refuse('from_number is not a phone number configured in this account');
    if (number.route !== 'sandbox')
      refuse('from_number must be a sandbox number: tests never call out through a trunk');
    return number.number;
  }
  const numbers = await store.numbers.list(accountId);
  const sandbox = numbers.find((number) => number.route === 'sandbox');
  if (!sandbox) refuse('the account has no sandbox number to test from (add one: numbers add NUMBER)');
  return sandbox.number;
}

/** Every recording a scenario plays must be of an ended call of this account that has one. */
async function checkRecordedAudio(
  store: Store,
  accountId: string,
  scenarios: readonly Scenario[],
): Promise<void> {
  const seen = new Set<string>();
  for (const scenario of scenarios) {
    for (const audio of recordedAudioOf(scenario)) {
      if (seen.has(audio.call_id)) continue;
      seen.add(audio.call_id);
      const call = await store.calls.get(accountId, audio.call_id);
      if (!call?.recordingPath)
        refuse(`${scenario.name}: call ${audio.call_id} has no recording in this account to play`);
    }
  }
}

/**
 * Starts a run: checks everything first (nothing is dialled unless every scenario and call fits),
 * writes the run's scenarios, then queues one call per scenario and repeat.
 */
export async function startTestRun(
  store: Store,
  caller: { account: AccountRecord; apiKeyId: string },
  agentId: string,
  body: unknown,
  options: { vendorConfigured: (provider: string) => boolean; now?: () => Date },
): Promise<TestRunReport> {
  const now = options.now ?? (() => new Date());
  const accountId = caller.account.id;
  const request = parseRequest(body);
  for (const scenario of request.scenarios) {
    if (scenario.callee.persona !== undefined && !options.vendorConfigured('openai'))
      refuse(
        `${scenario.name}: a persona callee is played by a language model, and none is configured (CALLWRIGHT_OPENAI_BASE_URL)`,
      );
    const voice = scenario.callee.voice?.provider;
    if (voice !== undefined && !options.vendorConfigured(voice))
      refuse(`${scenario.name}: callee.voice ${voice} has no service-wide key in this deployment`);
  }
  const agent = await store.agents.get(accountId, agentId);
  if (!agent?.active) throw agentNotFound(agentId);
  if (request.overrides) {
    if (request.overrides.script !== undefined && agent.brain !== 'script')
      refuse(`agent_overrides.script: agent ${agent.id} is an llm agent; only a script agent runs a script`);
    const tested = agentWithOverrides(agent, request.overrides);
    checkSettingsAndScript(tested.settings, tested.brain, tested.script);
  }
  let scenarios = request.scenarios;
  if (request.replayOf !== null) {
    const original = await store.calls.get(accountId, request.replayOf);
    if (!original) throw new AppError('not_found', `call ${request.replayOf} does not exist`);
    if (original.agentId !== agent.id) refuse(`call ${request.replayOf} was not placed by agent ${agent.id}`);
    scenarios = [scenarioFromCall(original)];
  }
  await checkRecordedAudio(store, accountId, scenarios);
  const fromNumber = await sandboxNumber(store, accountId, request.fromNumber);
  const runId = newId('testRun');
  const createdAt = now().toISOString();
  const planned: { test: AgentTestCallRecord; fields: ReturnType<typeof newCallFields> }[] = [];
  for (const [index, scenario] of scenarios.entries()) {
    const callRequest = {
      agent_id: agent.id,
      from_number: fromNumber,
      to_number: scenarioCalleeNumber(scenario),
      ...scenario.call,
    };
    const problem = variablesProblem(agent.variables, callRequest.variables);
    if (problem) refuse(`${scenario.name}: ${problem.message}`);
    for (let repeat = 1; repeat <= request.repeat; repeat++) {
      const fields = newCallFields(callRequest, now);
      planned.push({
        fields,
        test: {
          callId: fields.id,
          runId,
          accountId,
          agentId: agent.id,
          position: index * request.repeat + repeat - 1,
          repeatIndex: repeat,
          scenario,
          agentOverrides: request.overrides,
          replayOf: request.replayOf,
          createdAt,
        },
      });
    }
  }
  await store.agentTests.add(planned.map((entry) => entry.test));
  for (const [index, entry] of planned.entries()) {
    // A call not written (a revoked key, a failed write) leaves no scenario behind waiting for it.
    const forgetTheRest = () => store.agentTests.remove(planned.slice(index).map((rest) => rest.test.callId));
    const created = await store.calls
      .createQueued({ ...entry.fields, accountId, apiKeyId: caller.apiKeyId })
      .catch(async (error: unknown) => {
        await forgetTheRest();
        throw error;
      });
    if (!created) {
      await forgetTheRest();
      throw new AppError('unauthorized', invalidApiKeyMessage);
    }
  }
  return testRunReport(store, accountId, agent.id, runId);
}

export type TestResultStatus = 'running' | 'passed' | 'failed';

export interface TestResult {
  scenario: string;
  repeat: number;
  call_id: string;
  status: TestResultStatus;
  failures: string[];
  call_status: string | null;
  end_reason: string | null;
  duration_s: number | null;
  max_latency_ms: number | null;
  /** The conversation, for a failed scenario (to see why). */
  transcript?: TranscriptEntry[];
  /** A replay's turn-by-turn comparison with the call it replays, once this one has ended. */
  diff?: RunDiff;
}

export interface TestRunReport {
  id: string;
  agent_id: string;
  status: 'running' | 'completed';
  created_at: string;
  replay_of: string | null;
  summary: { total: number; passed: number; failed: number; running: number; pass_rate: number | null };
  /** Per scenario, over its repeats (an llm agent is not deterministic). */
  scenarios: { name: string; runs: number; passed: number; failed: number; pass_rate: number | null }[];
  results: TestResult[];
}

function passRate(passed: number, failed: number): number | null {
  return passed + failed === 0 ? null : Math.round((passed / (passed + failed)) * 1000) / 1000;
}

function resultOf(
  test: AgentTestCallRecord,
  call: CallRecord | null,
  original: CallRecord | null,
): TestResult {
  const scenario = test.scenario as Scenario;
  const base = { scenario: scenario.name, repeat: test.repeatIndex, call_id: test.callId };
  if (call === null || !isTerminal(call.status)) {
    return {
      ...base,
      status: 'running',
      failures: [],
      call_status: call?.status ?? null,
      end_reason: null,
      duration_s: null,
      max_latency_ms: null,
    };
  }
  const failures = scenarioFailures(scenario, call);
  const latencies = turnLatenciesMs(call);
  const duration = callDurationS(call);
  return {
    ...base,
    status: failures.length === 0 ? 'passed' : 'failed',
    failures,
    call_status: call.status,
    end_reason: call.endReason,
    duration_s: duration === null ? null : Math.round(duration * 10) / 10,
    max_latency_ms: latencies.length === 0 ? null : Math.round(Math.max(...latencies)),
    ...(failures.length > 0 ? { transcript: call.transcript } : {}),
    ...(original ? { diff: diffRuns(original, call) } : {}),
  };
}

/** A run as it stands: each call judged once it has ended. 404 for another agent's or account's run. */
export async function testRunReport(
  store: Store,
  accountId: string,
  agentId: string,
  runId: string,
): Promise<TestRunReport> {
  const tests = await store.agentTests.run(accountId, runId);
  const first = tests[0];
  if (!first || first.agentId !== agentId)
    throw new AppError('not_found', `test run ${runId} does not exist`);
  const original = first.replayOf ? await store.calls.get(accountId, first.replayOf) : null;
  const calls = await Promise.all(tests.map((test) => store.calls.get(accountId, test.callId)));
  const results = tests.map((test, index) => resultOf(test, calls[index] ?? null, original));
  const count = (status: TestResultStatus, among = results) =>
    among.filter((result) => result.status === status).length;
  const names = [...new Set(results.map((result) => result.scenario))];
  return {
    id: runId,
    agent_id: agentId,
    status: count('running') > 0 ? 'running' : 'completed',
    created_at: first.createdAt,
    replay_of: first.replayOf,
    summary: {
      total: results.length,
      passed: count('passed'),
      failed: count('failed'),
      running: count('running'),
      pass_rate: passRate(count('passed'), count('failed')),
    },
    scenarios: names.map((name) => {
      const mine = results.filter((result) => result.scenario === name);
      return {
        name,
        runs: mine.length,
        passed: count('passed', mine),
        failed: count('failed', mine),
        pass_rate: passRate(count('passed', mine), count('failed', mine)),
      };
    }),
    results,
  };
}
