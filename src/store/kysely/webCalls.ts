import type { CallRecord } from '../../domain/records.js';
import { callFromRow } from '../recordsFromRows.js';
import type {
  NewWebCall,
  WebCallRepository,
  WebCallTokenOwner,
  WebCallTokenRefusal,
} from '../webCallRepository.js';
import type { StoreQueries } from './dialects.js';
import { jsonText } from './schema.js';

/** Web calls and their one-use tokens, written once for both dialects. */
export class KyselyWebCalls implements WebCallRepository {
  constructor(private readonly queries: StoreQueries) {}

  async create(input: NewWebCall): Promise<CallRecord> {
    const { db } = this.queries;
    // The call first (the token row refers to it): a failure between the two leaves a queued web
    // call no token can start, never a token without its call.
    await db
      .insertInto('calls')
      .values({
        id: input.id,
        account_id: input.accountId,
        agent_id: input.agentId,
        api_key_id: input.apiKeyId,
        channel: 'web',
        from_number: '',
        to_number: '',
        variables: jsonText(input.variables),
        transcript: jsonText([]),
        extracted_data: jsonText({}),
        status: 'queued',
        created_at: input.createdAt,
        updated_at: input.createdAt,
      })
      .execute();
    await db
      .insertInto('web_calls')
      .values({
        call_id: input.id,
        account_id: input.accountId,
        token_hash: input.tokenHash,
        metadata: jsonText(input.metadata),
        created_at: input.createdAt,
        expires_at: input.expiresAt,
      })
      .execute();
    const row = await db.selectFrom('calls').selectAll().where('id', '=', input.id).executeTakeFirstOrThrow();
    return callFromRow(row, this.queries.dialect.columns);
  }

  async tokenOwner(tokenHash: string): Promise<WebCallTokenOwner | null> {
    const row = await this.queries.db
      .selectFrom('web_calls')
      .innerJoin('calls', 'calls.id', 'web_calls.call_id')
      .leftJoin('web_call_settings', 'web_call_settings.account_id', 'web_calls.account_id')
      .select(['web_calls.call_id', 'web_calls.account_id', 'calls.agent_id', 'web_call_settings.origins'])
      .where('web_calls.token_hash', '=', tokenHash)
      .executeTakeFirst();
    if (!row) return null;
    return {
      callId: row.call_id,
      accountId: row.account_id,
      agentId: row.agent_id ?? '',
      allowedOrigins: this.originsOf(row.origins),
    };
  }

  async expiredUnused(nowIso: string, limit: number): Promise<string[]> {
    const rows = await this.queries.db
      .selectFrom('web_calls')
      .innerJoin('calls', 'calls.id', 'web_calls.call_id')
      .select('web_calls.call_id')
      .where('web_calls.used_at', 'is', null)
      .where('web_calls.expires_at', '<=', nowIso)
      .where('calls.status', '=', 'queued')
      .orderBy('web_calls.expires_at')
      .limit(limit)
      .execute();
    return rows.map((row) => row.call_id);
  }

  async allowedOrigins(accountId: string): Promise<string[]> {
    const row = await this.queries.db
      .selectFrom('web_call_settings')
      .select('origins')
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return this.originsOf(row?.origins ?? null);
  }

  private originsOf(column: unknown): string[] {
    const origins =
      column === null || column === undefined ? null : this.queries.dialect.columns.json(column);
    return Array.isArray(origins) ? origins.filter((origin) => typeof origin === 'string') : [];
  }

  async setAllowedOrigins(accountId: string, origins: readonly string[], atIso: string): Promise<void> {
    await this.queries.db
      .insertInto('web_call_settings')
      .values({ account_id: accountId, origins: jsonText(origins), updated_at: atIso })
      .onConflict((conflict) =>
        conflict.column('account_id').doUpdateSet({ origins: jsonText(origins), updated_at: atIso }),
      )
      .execute();
  }

  async consume(
    tokenHash: string,
    nowIso: string,
  ): Promise<{ callId: string; accountId: string } | { refused: WebCallTokenRefusal }> {
    const { db } = this.queries;
    // One statement: of two requests with the same token, exactly one sees used_at still null.
    const used = await db
      .updateTable('web_calls')
      .set({ used_at: nowIso })
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', nowIso)
      .returning(['call_id', 'account_id'])
      .executeTakeFirst();
    if (used) return { callId: used.call_id, accountId: used.account_id };
    const row = await db
      .selectFrom('web_calls')
      .select(['used_at'])
      .where('token_hash', '=', tokenHash)
      .executeTakeFirst();
    if (!row) return { refused: 'unknown' };
    return { refused: row.used_at === null ? 'expired' : 'used' };
  }
}
