import { checkPrices, type Price } from '../../domain/usage.js';
import type { AccountPriceRepository } from '../types.js';
import type { StoreQueries } from './dialects.js';

/** Accounts' own price tables, written once for both dialects (one JSON row per account). */
export class KyselyPrices implements AccountPriceRepository {
  constructor(private readonly queries: StoreQueries) {}

  async get(accountId: string): Promise<Price[]> {
    const row = await this.queries.db
      .selectFrom('account_prices')
      .select('prices')
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!row) return [];
    try {
      return checkPrices(JSON.parse(row.prices));
    } catch {
      // Saved by an older version under other rules: the defaults, rather than no call at all.
      return [];
    }
  }

  async set(accountId: string, prices: Price[]): Promise<void> {
    const values = { prices: JSON.stringify(prices), updated_at: new Date().toISOString() };
    await this.queries.db
      .insertInto('account_prices')
      .values({ account_id: accountId, ...values })
      .onConflict((conflict) => conflict.column('account_id').doUpdateSet(values))
      .execute();
  }
}
