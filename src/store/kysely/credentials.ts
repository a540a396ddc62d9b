import { AppError } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import type { ProviderCredentialRecord } from '../../domain/records.js';
import { credentialFromRow } from '../recordsFromRows.js';
import type { ProviderCredentialRepository } from '../types.js';
import type { StoreQueries } from './dialects.js';

/** Accounts' voice-vendor credentials, written once for both dialects. */
export class KyselyCredentials implements ProviderCredentialRepository {
  constructor(private readonly queries: StoreQueries) {}

  private toCredential(row: Parameters<typeof credentialFromRow>[0]): ProviderCredentialRecord {
    return credentialFromRow(row, this.queries.dialect.columns);
  }

  async create(input: Omit<ProviderCredentialRecord, 'id' | 'createdAt'>): Promise<ProviderCredentialRecord> {
    try {
      const row = await this.queries.db
        .insertInto('provider_credentials')
        .values({
          id: newId('credential'),
          account_id: input.accountId,
          name: input.name,
          provider: input.provider,
          api_key_ciphertext: input.apiKeyCiphertext,
          api_key_last4: input.apiKeyLast4,
          base_url: input.baseUrl,
          created_at: new Date().toISOString(),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return this.toCredential(row);
    } catch (error) {
      if (this.queries.dialect.isUniqueViolation(error))
        throw new AppError('conflict', `a credential named ${input.name} already exists`);
      throw error;
    }
  }

  async list(accountId: string): Promise<ProviderCredentialRecord[]> {
    const rows = await this.queries.db
      .selectFrom('provider_credentials')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy(this.queries.dialect.byteOrder('name'))
      .execute();
    return rows.map((row) => this.toCredential(row));
  }

  async get(accountId: string, idOrName: string): Promise<ProviderCredentialRecord | null> {
    const row = await this.queries.db
      .selectFrom('provider_credentials')
      .selectAll()
      .where('account_id', '=', accountId)
      .where((eb) => eb.or([eb('id', '=', idOrName), eb('name', '=', idOrName)]))
      .executeTakeFirst();
    return row ? this.toCredential(row) : null;
  }

  async remove(accountId: string, id: string): Promise<boolean> {
    const result = await this.queries.db
      .deleteFrom('provider_credentials')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}
