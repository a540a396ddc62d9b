import { newId } from '../../domain/ids.js';
import type { AgentRecord, NewAgent } from '../../domain/records.js';
import { agentFromRow } from '../recordsFromRows.js';
import type { AgentRepository } from '../types.js';
import type { StoreQueries } from './dialects.js';
import { jsonText } from './schema.js';

type EditableAgentFields = Omit<NewAgent, 'accountId' | 'active'>;

/** The agent columns an edit replaces, encoded once for both dialects. */
function editableColumns(fields: EditableAgentFields, atIso: string) {
  return {
    name: fields.name,
    prompt: fields.prompt,
    first_message: fields.firstMessage,
    variables: jsonText(fields.variables),
    extraction: jsonText(fields.extraction),
    brain: fields.brain,
    script: jsonText(fields.script ?? null),
    settings: jsonText(fields.settings),
    max_duration_s: fields.maxDurationS,
    silence_timeout_s: fields.silenceTimeoutS,
    updated_at: atIso,
  };
}

/** Agents, written once for both dialects. */
export class KyselyAgents implements AgentRepository {
  constructor(private readonly queries: StoreQueries) {}

  private toAgent(row: Parameters<typeof agentFromRow>[0]): AgentRecord {
    return agentFromRow(row, this.queries.dialect.columns);
  }

  async create(input: NewAgent): Promise<AgentRecord> {
    const { db, dialect } = this.queries;
    const at = new Date().toISOString();
    const row = await db
      .insertInto('agents')
      .values({
        id: newId('agent'),
        account_id: input.accountId,
        active: dialect.bool(input.active),
        created_at: at,
        ...editableColumns(input, at),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.toAgent(row);
  }

  async get(accountId: string, agentId: string): Promise<AgentRecord | null> {
    const row = await this.queries.db
      .selectFrom('agents')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', agentId)
      .executeTakeFirst();
    return row ? this.toAgent(row) : null;
  }

  async list(accountId: string): Promise<AgentRecord[]> {
    const rows = await this.queries.db
      .selectFrom('agents')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((row) => this.toAgent(row));
  }

  async update(accountId: string, agentId: string, fields: EditableAgentFields): Promise<AgentRecord | null> {
    const row = await this.queries.db
      .updateTable('agents')
      .set(editableColumns(fields, new Date().toISOString()))
      .where('account_id', '=', accountId)
      .where('id', '=', agentId)
      .returningAll()
      .executeTakeFirst();
    return row ? this.toAgent(row) : null;
  }

  async setActive(accountId: string, agentId: string, active: boolean): Promise<AgentRecord | null> {
    const row = await this.queries.db
      .updateTable('agents')
      .set({ active: this.queries.dialect.bool(active), updated_at: new Date().toISOString() })
      .where('account_id', '=', accountId)
      .where('id', '=', agentId)
      .returningAll()
      .executeTakeFirst();
    return row ? this.toAgent(row) : null;
  }
}
