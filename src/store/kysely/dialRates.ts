import type { DialRate, DialRateRepository, DialRateScope } from '../types.js';
import type { StoreQueries } from './dialects.js';

/** Per-account caps on calls per second (by caller ID and trunk) and quiet hours, written once for both dialects. */
export class KyselyDialRates implements DialRateRepository {
  constructor(private readonly queries: StoreQueries) {}

  async list(accountId: string): Promise<DialRate[]> {
    const rows = await this.queries.db
      .selectFrom('dial_rates')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('scope')
      .orderBy('subject')
      .execute();
    return rows.map((row) => ({
      scope: row.scope as DialRateScope,
      subject: row.subject,
      callsPerSecond: Number(row.calls_per_second),
    }));
  }

  async listAll(): Promise<(DialRate & { accountId: string })[]> {
    const rows = await this.queries.db.selectFrom('dial_rates').selectAll().execute();
    return rows.map((row) => ({
      accountId: row.account_id,
      scope: row.scope as DialRateScope,
      subject: row.subject,
      callsPerSecond: Number(row.calls_per_second),
    }));
  }

  async set(
    accountId: string,
    rate: DialRate | { scope: DialRateScope; subject: string; callsPerSecond: null },
  ): Promise<void> {
    const { db } = this.queries;
    if (rate.callsPerSecond === null) {
      await db
        .deleteFrom('dial_rates')
        .where('account_id', '=', accountId)
        .where('scope', '=', rate.scope)
        .where('subject', '=', rate.subject)
        .execute();
      return;
    }
    const updatedAt = new Date().toISOString();
    await db
      .insertInto('dial_rates')
      .values({
        account_id: accountId,
        scope: rate.scope,
        subject: rate.subject,
        calls_per_second: rate.callsPerSecond,
        updated_at: updatedAt,
      })
      .onConflict((conflict) =>
        conflict
          .columns(['account_id', 'scope', 'subject'])
          .doUpdateSet({ calls_per_second: rate.callsPerSecond, updated_at: updatedAt }),
      )
      .execute();
  }

  async quietHours(accountId: string): Promise<{ start: string; end: string; timeZone: string } | null> {
    const row = await this.queries.db
      .selectFrom('quiet_hours')
      .selectAll()
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row ? { start: row.start_time, end: row.end_time, timeZone: row.time_zone } : null;
  }

  async allQuietHours(): Promise<{ accountId: string; start: string; end: string; timeZone: string }[]> {
    const rows = await this.queries.db.selectFrom('quiet_hours').selectAll().execute();
    return rows.map((row) => ({
      accountId: row.account_id,
      start: row.start_time,
      end: row.end_time,
      timeZone: row.time_zone,
    }));
  }

  async setQuietHours(
    accountId: string,
    hours: { start: string; end: string; timeZone: string } | null,
  ): Promise<void> {
    const { db } = this.queries;
    if (hours === null) {
      await db.deleteFrom('quiet_hours').where('account_id', '=', accountId).execute();
      return;
    }
    const values = {
      start_time: hours.start,
      end_time: hours.end,
      time_zone: hours.timeZone,
      updated_at: new Date().toISOString(),
    };
    await db
      .insertInto('quiet_hours')
      .values({ account_id: accountId, ...values })
      .onConflict((conflict) => conflict.column('account_id').doUpdateSet(values))
      .execute();
  }
}
