import { sql } from 'kysely';
import type { CallRecord, InboundFallback, PhoneNumberRecord, TrunkRecord } from '../../domain/records.js';
import type {
  InboundCallListQuery,
  InboundCallRepository,
  NewInboundCall,
} from '../inboundCallRepository.js';
import { callFromRow, phoneNumberFromRow, trunkFromRow } from '../recordsFromRows.js';
import type { StoreQueries } from './dialects.js';
import { jsonText } from './schema.js';

/** Inbound calls (issue 40), written once for both dialects. */
export class KyselyInboundCalls implements InboundCallRepository {
  constructor(private readonly queries: StoreQueries) {}

  async setNumberInbound(
    accountId: string,
    number: string,
    settings: {
      inboundAgentId: string | null;
      inboundFallback: InboundFallback;
      maxLiveCalls: number | null;
    },
  ): Promise<PhoneNumberRecord | null> {
    const row = await this.queries.db
      .updateTable('phone_numbers')
      .set({
        inbound_agent_id: settings.inboundAgentId,
        inbound_fallback: settings.inboundFallback,
        max_live_calls: settings.maxLiveCalls,
      })
      .where('account_id', '=', accountId)
      .where('number', '=', number)
      .returningAll()
      .executeTakeFirst();
    return row ? phoneNumberFromRow(row, this.queries.dialect.columns) : null;
  }

  async numbersCalled(number: string): Promise<PhoneNumberRecord[]> {
    const rows = await this.queries.db
      .selectFrom('phone_numbers')
      .selectAll()
      .where('number', '=', number)
      .execute();
    return rows.map((row) => phoneNumberFromRow(row, this.queries.dialect.columns));
  }

  async latestOutboundTo(
    accountId: string,
    ourNumber: string,
    caller: string,
    sinceIso: string,
  ): Promise<CallRecord | null> {
    const { db, dialect } = this.queries;
    const row = await db
      .selectFrom('calls')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('from_number', '=', ourNumber)
      .where('to_number', '=', caller)
      .where('direction', '=', 'outbound')
      .where('created_at', '>=', dialect.timestamp(sinceIso))
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? callFromRow(row, dialect.columns) : null;
  }

  async createAnswering(
    input: NewInboundCall,
  ): Promise<{ created: CallRecord } | { refused: 'account_capped' | 'number_capped' }> {
    const { db, dialect } = this.queries;
    // PostgreSQL: the account row lock is the one outbound claims take (postgres/calls.ts), so the
    // counts below cannot interleave with an outbound claim; SQLite: one INSERT … SELECT statement
    // runs under the single write lock.
    return dialect.serialized(db, `inbound:${input.accountId}`, async (locked) => {
      if (dialect.name === 'postgres') {
        await sql`SELECT id FROM accounts WHERE id = ${input.accountId} FOR UPDATE`.execute(locked);
      }
      const live = sql`status IN ('dialing', 'ringing', 'in_progress') AND account_id = ${input.accountId}`;
      const accountLive = sql<number>`(SELECT count(*) FROM calls WHERE ${live})`;
      const numberLive = sql<number>`(SELECT count(*) FROM calls WHERE ${live} AND (
        (direction = 'inbound' AND to_number = ${input.toNumber})
        OR (direction = 'outbound' AND from_number = ${input.toNumber})))`;
      const inserted = await locked
        .insertInto('calls')
        .columns([
          'id',
          'account_id',
          'agent_id',
          'api_key_id',
          'direction',
          'callback_of',
          'from_number',
          'to_number',
          'context',
          'variables',
          'transcript',
          'extracted_data',
          'status',
          'created_at',
          'dialing_at',
          'worker_id',
          'lease_expires_at',
          'sip_call_id',
          'updated_at',
        ])
        .expression((eb) =>
          eb
            .selectFrom('accounts')
            .leftJoin('phone_numbers', (join) =>
              join
                .onRef('phone_numbers.account_id', '=', 'accounts.id')
                .on('phone_numbers.number', '=', input.toNumber),
            )
            .select([
              eb.val(input.id).as('id'),
              eb.val(input.accountId).as('account_id'),
              eb.val(input.agentId).as('agent_id'),
              eb.val(null).as('api_key_id'),
              eb.val('inbound').as('direction'),
              eb.val(input.callbackOf).as('callback_of'),
              eb.val(input.fromNumber).as('from_number'),
              eb.val(input.toNumber).as('to_number'),
              eb.val(input.context).as('context'),
              eb.val(jsonText(input.variables)).as('variables'),
              eb.val(jsonText([])).as('transcript'),
              eb.val(jsonText({})).as('extracted_data'),
              eb.val('dialing').as('status'),
              dialect.timestamp(input.atIso).as('created_at'),
              dialect.timestamp(input.atIso).as('dialing_at'),
              eb.val(input.workerId).as('worker_id'),
              dialect.timestamp(input.leaseUntilIso).as('lease_expires_at'),
              eb.val(input.sipCallId).as('sip_call_id'),
              dialect.timestamp(input.atIso).as('updated_at'),
            ])
            .where('accounts.id', '=', input.accountId)
            .where(sql<boolean>`${accountLive} < accounts.max_live_calls`)
            .where(
              sql<boolean>`(phone_numbers.max_live_calls IS NULL OR ${numberLive} < phone_numbers.max_live_calls)`,
            ),
        )
        .returningAll()
        .executeTakeFirst();
      if (inserted) return { created: callFromRow(inserted, dialect.columns) };
      const account = await locked
        .selectFrom('accounts')
        .select('max_live_calls')
        .where('id', '=', input.accountId)
        .executeTakeFirst();
      const counted = await sql<{ n: number }>`SELECT ${accountLive} AS n`.execute(locked);
      return Number(counted.rows[0]?.n ?? 0) >= Number(account?.max_live_calls ?? 0)
        ? { refused: 'account_capped' }
        : { refused: 'number_capped' };
    });
  }

  async allTrunks(): Promise<TrunkRecord[]> {
    const rows = await this.queries.db.selectFrom('trunks').selectAll().execute();
    return rows.map((row) => trunkFromRow(row, this.queries.dialect.columns));
  }

  async markContactAnswered(callId: string, atIso: string): Promise<boolean> {
    const { db } = this.queries;
    const result = await db
      .updateTable('campaign_contacts')
      .set({ state: 'done', last_outcome: 'answered', due_at: null, waiting_reason: null, updated_at: atIso })
      .where(
        'id',
        'in',
        db.selectFrom('campaign_attempts').select('contact_id').where('call_id', '=', callId),
      )
      .where('state', 'in', ['retry_wait', 'pending'])
      .where('removed_at', 'is', null)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async list(accountId: string, query: InboundCallListQuery): Promise<CallRecord[]> {
    const { db, dialect } = this.queries;
    let select = db
      .selectFrom('calls')
      .selectAll()
      .where('account_id', '=', accountId)
      .where(dialect.byteOrder('id'), '<', query.before ?? '~');
    if (query.direction) select = select.where('direction', '=', query.direction);
    if (query.status) select = select.where('status', '=', query.status);
    const rows = await select.orderBy(dialect.byteOrder('id'), 'desc').limit(query.limit).execute();
    return rows.map((row) => callFromRow(row, dialect.columns));
  }
}
