import type { AgentOverrides, AgentTestCallRecord } from '../../domain/records.js';
import type { AgentTestRepository, AgentTestRunSummary } from '../agentTestRepository.js';
import type { StoreQueries } from './dialects.js';
import { jsonText } from './schema.js';

type Row = {
  call_id: string;
  run_id: string;
  account_id: string;
  agent_id: string;
  position: number;
  repeat_index: number;
  scenario: unknown;
  agent_overrides: unknown;
  replay_of: string | null;
  created_at: unknown;
};

/** Agent test runs' calls, written once for both dialects. */
export class KyselyAgentTests implements AgentTestRepository {
  constructor(private readonly queries: StoreQueries) {}

  private record(row: Row): AgentTestCallRecord {
    const { columns } = this.queries.dialect;
    return {
      callId: row.call_id,
      runId: row.run_id,
      accountId: row.account_id,
      agentId: row.agent_id,
      position: Number(row.position),
      repeatIndex: Number(row.repeat_index),
      scenario: columns.json(row.scenario),
      agentOverrides: (row.agent_overrides === null
        ? null
        : columns.json(row.agent_overrides)) as AgentOverrides | null,
      replayOf: row.replay_of,
      createdAt: columns.time(row.created_at),
    };
  }

  async add(calls: AgentTestCallRecord[]): Promise<void> {
    if (calls.length === 0) return;
    await this.queries.db
      .insertInto('agent_test_calls')
      .values(
        calls.map((call) => ({
          call_id: call.callId,
          run_id: call.runId,
          account_id: call.accountId,
          agent_id: call.agentId,
          position: call.position,
          repeat_index: call.repeatIndex,
          scenario: jsonText(call.scenario),
          agent_overrides: jsonText(call.agentOverrides),
          replay_of: call.replayOf,
          created_at: call.createdAt,
        })),
      )
      .execute();
  }

  async remove(callIds: readonly string[]): Promise<void> {
    if (callIds.length === 0) return;
    await this.queries.db
      .deleteFrom('agent_test_calls')
      .where('call_id', 'in', [...callIds])
      .execute();
  }

  async forCall(callId: string): Promise<AgentTestCallRecord | null> {
    const row = await this.queries.db
      .selectFrom('agent_test_calls')
      .selectAll()
      .where('call_id', '=', callId)
      .executeTakeFirst();
    return row ? this.record(row) : null;
  }

  async run(accountId: string, runId: string): Promise<AgentTestCallRecord[]> {
    const rows = await this.queries.db
      .selectFrom('agent_test_calls')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('run_id', '=', runId)
      .orderBy('position')
      .execute();
    return rows.map((row) => this.record(row));
  }

  async listRuns(accountId: string, agentId: string, limit: number): Promise<AgentTestRunSummary[]> {
    const rows = await this.queries.db
      .selectFrom('agent_test_calls')
      .select((eb) => [
        'run_id',
        eb.fn.min('created_at').as('created_at'),
        eb.fn.count<number>('call_id').as('calls'),
        eb.fn.max('replay_of').as('replay_of'),
      ])
      .where('account_id', '=', accountId)
      .where('agent_id', '=', agentId)
      .groupBy('run_id')
      .orderBy('created_at', 'desc')
      .limit(limit)
      .execute();
    const { columns } = this.queries.dialect;
    return rows.map((row) => ({
      runId: row.run_id,
      agentId,
      createdAt: columns.time(row.created_at),
      calls: Number(row.calls),
      replayOf: (row.replay_of as string | null) ?? null,
    }));
  }
}
