import type { CallRecord, NewQueuedCall } from '../../domain/records.js';
import { queueNames } from '../../queue/types.js';
import {
  isConnectionLoss,
  isUniqueViolation,
  type PgClient,
  type PgPool,
  withTransaction,
} from './database.js';
import type { PostgresJobWriter } from './jobQueue.js';
import { type CallRow, toCall } from './rows.js';

interface PendingCreation {
  input: NewQueuedCall;
  resolve: (call: CallRecord | null) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for PostgreSQL: the creations that arrive while the event loop turns are written
 * in one transaction (keys re-checked together, calls inserted with one statement, their dispatch
 * jobs with one pg-boss insert), so a commit's round trips and WAL flush are shared. When a batch
 * fails, each of its creations is retried alone, so one bad row never fails the others.
 */
export class CallCreationBatcher {
  private pending: PendingCreation[] = [];
  private scheduled = false;

  constructor(
    private readonly pool: PgPool,
    private readonly queue: PostgresJobWriter,
    private readonly afterCommit: () => void,
    private readonly maxBatch = 200,
  ) {}

  create(input: NewQueuedCall): Promise<CallRecord | null> {
    return new Promise((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    while (this.pending.length > 0) void this.commit(this.pending.splice(0, this.maxBatch));
  }

  private async commit(batch: PendingCreation[], afterLostCommit = false): Promise<void> {
    try {
      const created = await withTransaction(this.pool, (client) =>
        this.write(
          client,
          batch.map((item) => item.input),
        ),
      );
      for (const [index, item] of batch.entries()) item.resolve(created[index] ?? null);
      if (created.some((call) => call !== null)) this.afterCommit();
    } catch (error) {
      // A connection lost during COMMIT leaves the outcome unknown: retry alone once to find out.
      const lostCommit = isConnectionLoss(error);
      if (batch.length > 1 || (lostCommit && !afterLostCommit)) {
        // One after another, in the order they came: of two creations with one id, the first wins
        // (concurrent retries raced, and the later one could take the id).
        void (async () => {
          for (const item of batch) await this.commit([item], lostCommit);
        })();
        return;
      }
      const item = batch[0] as PendingCreation;
      // After a lost COMMIT, its id already taken means that COMMIT did store it.
      const stored =
        afterLostCommit && isUniqueViolation(error)
          ? await this.storedCall(item.input).catch(() => null)
          : null;
      if (stored) item.resolve(stored);
      else item.reject(error);
    }
  }

  private async storedCall(input: NewQueuedCall): Promise<CallRecord | null> {
    const { rows } = await this.pool.query<CallRow>(
      'SELECT * FROM calls WHERE id = $1 AND account_id = $2 AND api_key_id = $3',
      [input.id, input.accountId, input.apiKeyId],
    );
    return rows[0] ? toCall(rows[0]) : null;
  }

  /** Writes the creations whose key is still valid; null marks one refused for a revoked key. */
  private async write(client: PgClient, inputs: NewQueuedCall[]): Promise<(CallRecord | null)[]> {
    // FOR SHARE: a revoke committing now waits for this insert, or this insert sees it.
    const keyIds = [...new Set(inputs.map((input) => input.apiKeyId))];
    const { rows: validKeys } = await client.query<{ id: string }>(
      'SELECT id FROM api_keys WHERE id = ANY($1::text[]) AND revoked_at IS NULL FOR SHARE',
      [keyIds],
    );
    const valid = new Set(validKeys.map((row) => row.id));
    const accepted = inputs.filter((input) => valid.has(input.apiKeyId));
    if (accepted.length === 0) return inputs.map(() => null);
    const column = <T>(pick: (input: NewQueuedCall) => T) => accepted.map(pick);
    const { rows } = await client.query<CallRow>(
      `INSERT INTO calls (id, account_id, agent_id, api_key_id, from_number, to_number, first_message, context,
         variables, status, created_at, updated_at)
       SELECT id, account_id, agent_id, api_key_id, from_number, to_number, first_message, context,
         variables::jsonb, 'queued', created_at::timestamptz, created_at::timestamptz
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
         $9::text[], $10::text[])
         AS v(id, account_id, agent_id, api_key_id, from_number, to_number, first_message, context, variables, created_at)
       RETURNING *`,
      [
        column((input) => input.id),
        column((input) => input.accountId),
        column((input) => input.agentId),
        column((input) => input.apiKeyId),
        column((input) => input.fromNumber),
        column((input) => input.toNumber),
        column((input) => input.firstMessage),
        column((input) => input.context),
        column((input) => (input.variables === null ? null : JSON.stringify(input.variables))),
        column((input) => input.createdAt),
      ],
    );
    await this.queue.insertManyWithinTransaction(
      client,
      accepted.map((input) => ({
        queue: queueNames.dispatch,
        payload: { call_id: input.id },
        runAtMs: Date.parse(input.createdAt),
      })),
    );
    const byId = new Map(rows.map((row) => [row.id, toCall(row)]));
    return inputs.map((input) => byId.get(input.id) ?? null);
  }
}
