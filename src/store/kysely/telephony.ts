import { AppError } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import type { PhoneNumberRecord, SandboxInviteRecord, TrunkRecord } from '../../domain/records.js';
import { phoneNumberFromRow, trunkFromRow } from '../recordsFromRows.js';
import type { PhoneNumberRepository, SandboxInviteRepository, TrunkRepository } from '../types.js';
import type { StoreQueries } from './dialects.js';

/** Phone numbers, written once for both dialects. */
export class KyselyPhoneNumbers implements PhoneNumberRepository {
  constructor(private readonly queries: StoreQueries) {}

  private toPhoneNumber(row: Parameters<typeof phoneNumberFromRow>[0]): PhoneNumberRecord {
    return phoneNumberFromRow(row, this.queries.dialect.columns);
  }

  async add(input: { accountId: string; number: string; route: string }): Promise<PhoneNumberRecord> {
    try {
      const row = await this.queries.db
        .insertInto('phone_numbers')
        .values({
          account_id: input.accountId,
          number: input.number,
          route: input.route,
          created_at: new Date().toISOString(),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return this.toPhoneNumber(row);
    } catch (error) {
      if (this.queries.dialect.isUniqueViolation(error)) {
        throw new AppError('conflict', `${input.number} is already configured`);
      }
      throw error;
    }
  }

  async get(accountId: string, number: string): Promise<PhoneNumberRecord | null> {
    const row = await this.queries.db
      .selectFrom('phone_numbers')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('number', '=', number)
      .executeTakeFirst();
    return row ? this.toPhoneNumber(row) : null;
  }

  async list(accountId: string): Promise<PhoneNumberRecord[]> {
    const rows = await this.queries.db
      .selectFrom('phone_numbers')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy(this.queries.dialect.byteOrder('number'))
      .execute();
    return rows.map((row) => this.toPhoneNumber(row));
  }

  async remove(accountId: string, number: string): Promise<boolean> {
    const result = await this.queries.db
      .deleteFrom('phone_numbers')
      .where('account_id', '=', accountId)
      .where('number', '=', number)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}

/** SIP trunks, written once for both dialects. */
export class KyselyTrunks implements TrunkRepository {
  constructor(private readonly queries: StoreQueries) {}

  private toTrunk(row: Parameters<typeof trunkFromRow>[0]): TrunkRecord {
    return trunkFromRow(row, this.queries.dialect.columns);
  }

  async create(input: Omit<TrunkRecord, 'id' | 'createdAt' | 'registration'>): Promise<TrunkRecord> {
    try {
      const row = await this.queries.db
        .insertInto('trunks')
        .values({
          id: newId('trunk'),
          account_id: input.accountId,
          name: input.name,
          uri: input.uri,
          username: input.username,
          password_ciphertext: input.passwordCiphertext,
          from_domain: input.fromDomain,
          settings: JSON.stringify(input.settings),
          created_at: new Date().toISOString(),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return this.toTrunk(row);
    } catch (error) {
      if (this.queries.dialect.isUniqueViolation(error)) {
        throw new AppError('conflict', `a trunk named ${input.name} already exists`);
      }
      throw error;
    }
  }

  async get(accountId: string, idOrName: string): Promise<TrunkRecord | null> {
    const row = await this.queries.db
      .selectFrom('trunks')
      .selectAll()
      .where('account_id', '=', accountId)
      .where((eb) => eb.or([eb('id', '=', idOrName), eb('name', '=', idOrName)]))
      .executeTakeFirst();
    return row ? this.toTrunk(row) : null;
  }

  async list(accountId: string): Promise<TrunkRecord[]> {
    const rows = await this.queries.db
      .selectFrom('trunks')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy(this.queries.dialect.byteOrder('name'))
      .execute();
    return rows.map((row) => this.toTrunk(row));
  }

  async listRegistering(): Promise<TrunkRecord[]> {
    // settings is written by JSON.stringify: the flag appears exactly so when it is set.
    const rows = await this.queries.db
      .selectFrom('trunks')
      .selectAll()
      .where('settings', 'like', '%"register":true%')
      .orderBy('id')
      .execute();
    return rows.map((row) => this.toTrunk(row)).filter((trunk) => trunk.settings.register === true);
  }

  async setRegistration(id: string, stateJson: string): Promise<void> {
    await this.queries.db
      .updateTable('trunks')
      .set({ registration: stateJson })
      .where('id', '=', id)
      .execute();
  }

  /** A trunk still routing numbers is refused, decided in the same statement as the delete. */
  async remove(accountId: string, id: string): Promise<boolean> {
    const { db } = this.queries;
    const result = await db
      .deleteFrom('trunks')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('phone_numbers')
              .select('number')
              .where('phone_numbers.account_id', '=', accountId)
              .where('phone_numbers.route', '=', id),
          ),
        ),
      )
      .executeTakeFirst();
    if (result.numDeletedRows > 0n) return true;
    const inUse = await db
      .selectFrom('phone_numbers')
      .select('number')
      .where('account_id', '=', accountId)
      .where('route', '=', id)
      .executeTakeFirst();
    if (inUse) throw new AppError('conflict', 'numbers still use this trunk: rebind or remove them first');
    return false;
  }
}

/** The sandbox carrier's record of every INVITE it received, written once for both dialects. */
export class KyselySandboxInvites implements SandboxInviteRepository {
  constructor(private readonly queries: StoreQueries) {}

  async record(entry: SandboxInviteRecord): Promise<void> {
    await this.queries.db
      .insertInto('sandbox_invites')
      .values({ sip_call_id: entry.sipCallId, to_number: entry.toNumber, received_at: entry.receivedAt })
      .execute();
  }

  async list(): Promise<SandboxInviteRecord[]> {
    const rows = await this.queries.db
      .selectFrom('sandbox_invites')
      .select(['sip_call_id', 'to_number', 'received_at'])
      .orderBy('id')
      .execute();
    return rows.map((row) => ({
      sipCallId: row.sip_call_id,
      toNumber: row.to_number,
      receivedAt: this.queries.dialect.columns.time(row.received_at),
    }));
  }
}
