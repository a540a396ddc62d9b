import type { AgentTestCallRecord } from '../domain/records.js';

/** The store's port for agent test runs (src/store/types.ts re-exports it). */

/** One run as a list shows it: when, for which agent, how many calls. */
export interface AgentTestRunSummary {
  runId: string;
  agentId: string;
  createdAt: string;
  calls: number;
  replayOf: string | null;
}

export interface AgentTestRepository {
  /** Writes a run's calls (before the calls themselves, so no dial can miss its scenario). */
  add(calls: AgentTestCallRecord[]): Promise<void>;
  /** Forgets test calls whose call was never created (a run refused half-way). */
  remove(callIds: readonly string[]): Promise<void>;
  /** The test call behind a call id, or null for an ordinary call. */
  forCall(callId: string): Promise<AgentTestCallRecord | null>;
  /** A run's calls in order; empty when the account has no such run. */
  run(accountId: string, runId: string): Promise<AgentTestCallRecord[]>;
  /** The agent's latest runs, newest first. */
  listRuns(accountId: string, agentId: string, limit: number): Promise<AgentTestRunSummary[]>;
}
