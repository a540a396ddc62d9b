import { sql } from 'kysely';
import { newId } from '../../domain/ids.js';
import type { AccountRecord, ApiKeyRecord, ApiKeyWithAccount, NewApiKey } from '../../domain/records.js';
import { accountFromRow, apiKeyFromRow } from '../recordsFromRows.js';
import type { AccountRepository, ApiKeyRepository } from '../types.js';
import type { StoreQueries } from './dialects.js';

/** Accounts, written once for both dialects. */
export class KyselyAccounts implements AccountRepository {
  constructor(private readonly queries: StoreQueries) {}

  private toAccount(row: Parameters<typeof accountFromRow>[0]): AccountRecord {
    return accountFromRow(row, this.queries.dialect.columns);
  }

  async create(input: Parameters<AccountRepository['create']>[0]): Promise<AccountRecord> {
    const { db, dialect } = this.queries;
    const row = await db
      .insertInto('accounts')
      .values({
        id: newId('account'),
        name: input.name,
        is_default: dialect.bool(false),
        rate_limit_requests: input.ratePolicy?.requests ?? null,
        rate_limit_window_s: input.ratePolicy?.windowS ?? null,
        max_live_calls: input.maxLiveCalls ?? 10,
        created_at: new Date().toISOString(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.toAccount(row);
  }

  async get(id: string): Promise<AccountRecord | null> {
    const row = await this.queries.db
      .selectFrom('accounts')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? this.toAccount(row) : null;
  }

  async list(): Promise<AccountRecord[]> {
    const rows = await this.queries.db
      .selectFrom('accounts')
      .selectAll()
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((row) => this.toAccount(row));
  }

  async getOrCreateDefault(): Promise<AccountRecord> {
    const { db, dialect } = this.queries;
    // The partial unique index on is_default makes a concurrent second insert do nothing; then
    // everyone reads the one that won.
    await db
      .insertInto('accounts')
      .values({
        id: newId('account'),
        name: 'Default account',
        is_default: dialect.bool(true),
        rate_limit_requests: null,
        rate_limit_window_s: null,
        max_live_calls: 10,
        created_at: new Date().toISOString(),
      })
      .onConflict((conflict) => conflict.doNothing())
      .execute();
    const row = await db
      .selectFrom('accounts')
      .selectAll()
      .where('is_default', '=', dialect.bool(true))
      .executeTakeFirstOrThrow();
    return this.toAccount(row);
  }
}

/**
 * API keys, written once for both dialects, except the lookup on every authenticated request
 * (`findByHash`), which each adapter keeps as hand-written SQL on its hot path.
 */
export abstract class KyselyApiKeys implements ApiKeyRepository {
  constructor(protected readonly queries: StoreQueries) {}

  abstract findByHash(keyHash: string): Promise<ApiKeyWithAccount | null>;

  private toApiKey(row: Parameters<typeof apiKeyFromRow>[0]): ApiKeyRecord {
    return apiKeyFromRow(row, this.queries.dialect.columns);
  }

  async create(input: NewApiKey): Promise<ApiKeyRecord> {
    const row = await this.queries.db
      .insertInto('api_keys')
      .values({
        id: newId('apiKey'),
        account_id: input.accountId,
        name: input.name,
        key_hash: input.keyHash,
        prefix: input.prefix,
        last4: input.last4,
        created_at: new Date().toISOString(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.toApiKey(row);
  }

  async list(accountId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.queries.db
      .selectFrom('api_keys')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((row) => this.toApiKey(row));
  }

  async revoke(accountId: string, keyId: string, atIso: string): Promise<ApiKeyRecord | null> {
    const row = await this.queries.db
      .updateTable('api_keys')
      // Revoking twice keeps the first time.
      .set({ revoked_at: sql<string>`COALESCE(revoked_at, ${atIso})` })
      .where('account_id', '=', accountId)
      .where('id', '=', keyId)
      .returningAll()
      .executeTakeFirst();
    return row ? this.toApiKey(row) : null;
  }

  async touchLastUsed(keyId: string, atIso: string): Promise<void> {
    await this.queries.db
      .updateTable('api_keys')
      .set({ last_used_at: atIso })
      .where('id', '=', keyId)
      .execute();
  }
}
