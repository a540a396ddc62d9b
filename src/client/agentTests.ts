import { AbortError } from './errors.js';
import { sleep, type Transport } from './transport.js';
import type { CallStatus, EndReason, RequestOptions, TranscriptEntry, VariableValue } from './types.js';

/**
 * Agent tests (docs/testing.md): scenarios, each a simulated callee and what must be true of the
 * call afterwards, run against an agent as real sandbox calls.
 */

/** A stretch of an earlier call's recording, callee side (what a replay plays instead of text). */
export interface RecordedAudio {
  call_id: string;
  start_ms: number;
  end_ms: number;
}

/** One turn of the simulated callee, given once the agent has spoken and paused (or over it). */
export interface ScenarioTurn {
  /** What the callee says (synthesised by the sandbox's voice). */
  say?: string;
  /** Or: what the callee said in an earlier call (replays). */
  audio?: RecordedAudio;
  /** Keys the callee presses, after its words if it says any. */
  dtmf?: string;
  /** Extra silence after the agent stops before the callee starts. */
  pause_ms?: number;
  /** Talks over the agent once it has spoken this long in its turn. */
  interrupt_after_ms?: number;
  /** Said once while the agent talks ("uh huh"), `backchannel_after_ms` into its turn. */
  backchannel?: string;
  backchannel_after_ms?: number;
  /** Halting speech: the words one by one with this much silence between them. */
  word_gap_ms?: number;
  /** Hangs up halfway through this turn's words, or right after them. */
  hang_up?: 'during' | 'after';
}

/** A rule for one field of the extracted data: a value (equal), or one of the rules. */
export type ScenarioDataExpectation =
  | string
  | number
  | boolean
  | null
  | { equals: unknown }
  | { matches: string }
  | { schema: Record<string, unknown> }
  | { present: boolean };

export interface ScenarioExpectations {
  status?: CallStatus;
  end_reason?: EndReason;
  answered_by?: 'human' | 'machine' | 'unknown';
  data?: Record<string, ScenarioDataExpectation>;
  /** Phrases the agent must say (case and punctuation ignored). */
  says?: string[];
  must_not_say?: string[];
  /** Tools the agent must call; `arguments` must be contained in what it sent. */
  tool_calls?: { name: string; arguments?: Record<string, unknown> }[];
  transfer_to?: string;
  /** The slowest reply: end of the callee's speech to the agent's first audible sound. */
  max_latency_ms?: number;
  max_duration_s?: number;
}

/** A scenario file (docs/testing.md; `$schema` may point at its JSON Schema). */
export interface Scenario {
  $schema?: string;
  name: string;
  description?: string;
  /** The call's own fields, as `calls.createOutbound` takes them. */
  call?: { variables?: Record<string, VariableValue>; first_message?: string; context?: string };
  callee: {
    answers: 'human' | 'voicemail' | 'busy' | 'no_answer' | 'unreachable' | 'ivr';
    answer_after_ms?: number;
    greeting?: string;
    greeting_audio?: RecordedAudio;
    /** voicemail: whether a beep follows the greeting (default true). */
    beep?: boolean;
    turns?: ScenarioTurn[];
    after_last_turn?: 'hang_up' | 'stay';
  };
  expect?: ScenarioExpectations;
}

/** What a run's calls alone run with, merged over the agent (which is not changed). */
export interface AgentOverrides {
  prompt?: string;
  settings?: Record<string, unknown>;
  /** A script agent's dialog script, instead of its own (docs/agents.md). */
  script?: Record<string, unknown>;
}

interface AgentTestRunOptions {
  /** Each scenario this many times, 1–20 (default 1). */
  repeat?: number;
  /** A sandbox number of the account to call from (default: the account's first). */
  from_number?: string;
  agent_overrides?: AgentOverrides;
}

/** `POST /v1/agents/{agent_id}/tests`: scenarios, or a completed call of the agent to replay. */
export type AgentTestRunRequest =
  | (AgentTestRunOptions & { scenarios: Scenario[]; replay_of?: never })
  | (AgentTestRunOptions & { replay_of: string; scenarios?: never });

/** One side of a replayed turn: what the callee said and how the agent answered it. */
export interface ReplayTurnSide {
  callee_text: string;
  /** End of the callee's speech to the agent's first audible sound; null: no reply timed. */
  latency_ms: number | null;
  /** The silence the agent waited for before taking the turn (its end-of-turn wait); null: unknown. */
  wait_ms: number | null;
  agent_text: string;
  agent_interrupted: boolean;
  dead_air_ms: number;
  /** What a script agent understood of the turn (step, option matched or none, why); null: not recorded. */
  understood: string | null;
}

export interface ReplayTurnDiff {
  turn: number;
  /** The call replayed; null when it did not have this turn. */
  before: ReplayTurnSide | null;
  /** The replay; null when it did not reach this turn. */
  after: ReplayTurnSide | null;
  /** What changed, in words ("waits 620 ms longer (300 → 920 ms)"); empty when nothing did. */
  changes: string[];
}

/** A replay's turn-by-turn comparison with the call it replays. */
export interface ReplayDiff {
  before_call_id: string;
  after_call_id: string;
  turns: ReplayTurnDiff[];
  data: { field: string; before: unknown; after: unknown }[];
  summary: string[];
}

/** One call of a run: a scenario's repeat, judged once the call has ended. */
export interface AgentTestResult {
  scenario: string;
  /** 1 for the first run of the scenario. */
  repeat: number;
  call_id: string;
  status: 'running' | 'passed' | 'failed';
  /** Why it failed, one line each (e.g. `data.confirmed: expected false, got true`). */
  failures: string[];
  call_status: string | null;
  end_reason: string | null;
  duration_s: number | null;
  /** The slowest reply of the call. */
  max_latency_ms: number | null;
  /** The conversation, for a failed scenario. */
  transcript?: TranscriptEntry[];
  /** A replay's comparison with the call it replays, once it has ended. */
  diff?: ReplayDiff;
}

/** A test run as it stands (`GET /v1/agents/{agent_id}/tests/{run_id}`). */
export interface AgentTestRun {
  id: string;
  agent_id: string;
  status: 'running' | 'completed';
  created_at: string;
  replay_of: string | null;
  /** `pass_rate`: passed ÷ (passed + failed), null while none ended. */
  summary: { total: number; passed: number; failed: number; running: number; pass_rate: number | null };
  /** Per scenario, over its repeats. */
  scenarios: { name: string; runs: number; passed: number; failed: number; pass_rate: number | null }[];
  results: AgentTestResult[];
}

/** A run in `agentTests.list`. */
export interface AgentTestRunEntry {
  id: string;
  created_at: string;
  calls: number;
  replay_of: string | null;
}

export interface WaitForTestRunOptions {
  /** Give up waiting after this long and resolve with the run as it stands (default 300,000 ms). */
  timeoutMs?: number;
  /** Time between two reads of the run (default 1,000 ms). */
  pollMs?: number;
  /** Stops waiting (an `AbortError`), also between reads. */
  signal?: AbortSignal;
  /** Called with every report read, the last one included. */
  onProgress?: (run: AgentTestRun) => void;
}

const id = (value: string) => encodeURIComponent(value);

/** `client.agentTests`: run scenarios against an agent and read the results. */
export class AgentTestsResource {
  constructor(private readonly transport: Transport) {}

  /**
   * Starts a run (each scenario × repeat is one sandbox call) and resolves at once with it
   * `running`. Nothing is dialled unless every scenario is valid (`ValidationError` naming it).
   * Retried only on 429 and a refused connection: a repeat could start a second run.
   */
  run(agentId: string, request: AgentTestRunRequest, options?: RequestOptions): Promise<AgentTestRun> {
    const path = `/v1/agents/${id(agentId)}/tests`;
    return this.transport.request({ method: 'POST', path, body: request, retry: 'unsafe' }, options);
  }

  /** The run as it stands: each call passed, failed (and why) or still running. */
  get(agentId: string, runId: string, options?: RequestOptions): Promise<AgentTestRun> {
    const path = `/v1/agents/${id(agentId)}/tests/${id(runId)}`;
    return this.transport.request({ method: 'GET', path, retry: 'idempotent' }, options);
  }

  /** The agent's latest runs (at most 50), newest first. */
  list(agentId: string, options?: RequestOptions): Promise<{ data: AgentTestRunEntry[] }> {
    const path = `/v1/agents/${id(agentId)}/tests`;
    return this.transport.request({ method: 'GET', path, retry: 'idempotent' }, options);
  }

  /**
   * Reads the run every `pollMs` until it is `completed`. When `timeoutMs` passes first it resolves
   * with the run as last read (`status: 'running'`): check `status`. A read under way when the
   * time is up is finished first.
   */
  async waitFor(agentId: string, runId: string, options: WaitForTestRunOptions = {}): Promise<AgentTestRun> {
    const deadlineMs = Date.now() + (options.timeoutMs ?? 300_000);
    const pollMs = options.pollMs ?? 1_000;
    const requestOptions = options.signal ? { signal: options.signal } : {};
    for (;;) {
      const run = await this.get(agentId, runId, requestOptions);
      options.onProgress?.(run);
      const leftMs = deadlineMs - Date.now();
      if (run.status === 'completed' || leftMs <= 0) return run;
      try {
        await sleep(Math.min(pollMs, leftMs), options.signal);
      } catch (reason) {
        throw new AbortError({
          status: 0,
          code: 'aborted',
          message: 'request aborted',
          requestId: null,
          cause: reason,
        });
      }
    }
  }
}
