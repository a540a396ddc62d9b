import type { DoNotCallEntry, DoNotCallSource } from '../../domain/records.js';
import type { DoNotCallRepository } from '../types.js';
import type { StoreQueries } from './dialects.js';

/** Accounts' suppression lists, written once for both dialects. */
export class KyselyDoNotCall implements DoNotCallRepository {
  constructor(private readonly queries: StoreQueries) {}

  async add(
    accountId: string,
    entries: { number: string; reason: string | null; source: DoNotCallSource }[],
  ): Promise<number> {
    if (entries.length === 0) return 0;
    const createdAt = new Date().toISOString();
    let added = 0;
    // In slices, so that a long list stays within the drivers' bound-parameter limits.
    for (let start = 0; start < entries.length; start += 500) {
      const slice = entries.slice(start, start + 500);
      const result = await this.queries.db
        .insertInto('do_not_call')
        .values(
          slice.map((entry) => ({
            account_id: accountId,
            number: entry.number,
            reason: entry.reason,
            source: entry.source,
            created_at: createdAt,
          })),
        )
        .onConflict((conflict) => conflict.columns(['account_id', 'number']).doNothing())
        .executeTakeFirst();
      added += Number(result.numInsertedOrUpdatedRows ?? 0);
    }
    return added;
  }

  async get(accountId: string, number: string): Promise<DoNotCallEntry | null> {
    const row = await this.queries.db
      .selectFrom('do_not_call')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('number', '=', number)
      .executeTakeFirst();
    return row ? this.entryOf(row) : null;
  }

  async list(accountId: string, options: { limit: number; afterNumber?: string }): Promise<DoNotCallEntry[]> {
    let query = this.queries.db
      .selectFrom('do_not_call')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy(this.queries.dialect.byteOrder('number'))
      .limit(options.limit);
    if (options.afterNumber !== undefined) query = query.where('number', '>', options.afterNumber);
    const rows = await query.execute();
    return rows.map((row) => this.entryOf(row));
  }

  private entryOf(row: {
    account_id: string;
    number: string;
    reason: string | null;
    source: string;
    created_at: unknown;
  }): DoNotCallEntry {
    return {
      accountId: row.account_id,
      number: row.number,
      reason: row.reason,
      source: row.source as DoNotCallSource,
      createdAt: this.queries.dialect.columns.time(row.created_at),
    };
  }

  async remove(accountId: string, number: string): Promise<boolean> {
    const result = await this.queries.db
      .deleteFrom('do_not_call')
      .where('account_id', '=', accountId)
      .where('number', '=', number)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
