import { AppError } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import type { SandboxInviteRecord, TrunkRecord } from '../../domain/records.js';
import { trunkFromRow } from '../recordsFromRows.js';
import type { SandboxInviteRepository, TrunkRepository } from '../types.js';
import type { SqliteDatabase } from './database.js';
import { isUniqueViolation } from './database.js';
import { sqliteColumns } from './rows.js';

interface TrunkRow {
  id: string;
  account_id: string;
  name: string;
  uri: string;
  username: string | null;
  password_ciphertext: string | null;
  from_domain: string | null;
  created_at: string;
}

const toTrunk = (row: TrunkRow) => trunkFromRow(row, sqliteColumns);

export class SqliteTrunks implements TrunkRepository {
  private readonly insert;
  private readonly byIdOrName;
  private readonly byAccount;
  private readonly remove_;
  private readonly numbersUsing;

  constructor(db: SqliteDatabase) {
    this.insert = db.prepare(
      `INSERT INTO trunks (id, account_id, name, uri, username, password_ciphertext, from_domain, created_at)
       VALUES (@id, @account_id, @name, @uri, @username, @password_ciphertext, @from_domain, @created_at)`,
    );
    this.byIdOrName = db.prepare('SELECT * FROM trunks WHERE account_id = ? AND (id = ? OR name = ?)');
    this.byAccount = db.prepare('SELECT * FROM trunks WHERE account_id = ? ORDER BY name');
    this.remove_ = db.prepare('DELETE FROM trunks WHERE account_id = ? AND id = ?');
    this.numbersUsing = db
      .prepare('SELECT COUNT(*) FROM phone_numbers WHERE account_id = ? AND route = ?')
      .pluck();
  }

  async create(input: Omit<TrunkRecord, 'id' | 'createdAt'>): Promise<TrunkRecord> {
    const row: TrunkRow = {
      id: newId('trunk'),
      account_id: input.accountId,
      name: input.name,
      uri: input.uri,
      username: input.username,
      password_ciphertext: input.passwordCiphertext,
      from_domain: input.fromDomain,
      created_at: new Date().toISOString(),
    };
    try {
      this.insert.run(row);
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new AppError('conflict', `a trunk named ${input.name} already exists`);
      }
      throw error;
    }
    return toTrunk(row);
  }

  async get(accountId: string, idOrName: string): Promise<TrunkRecord | null> {
    const row = this.byIdOrName.get(accountId, idOrName, idOrName) as TrunkRow | undefined;
    return row ? toTrunk(row) : null;
  }

  async list(accountId: string): Promise<TrunkRecord[]> {
    return (this.byAccount.all(accountId) as TrunkRow[]).map(toTrunk);
  }

  async remove(accountId: string, id: string): Promise<boolean> {
    if ((this.numbersUsing.get(accountId, id) as number) > 0) {
      throw new AppError('conflict', 'numbers still use this trunk: rebind or remove them first');
    }
    return this.remove_.run(accountId, id).changes > 0;
  }
}

export class SqliteSandboxInvites implements SandboxInviteRepository {
  private readonly insert;
  private readonly all;

  constructor(db: SqliteDatabase) {
    this.insert = db.prepare(
      'INSERT INTO sandbox_invites (sip_call_id, to_number, received_at) VALUES (?, ?, ?)',
    );
    this.all = db.prepare('SELECT sip_call_id, to_number, received_at FROM sandbox_invites ORDER BY id');
  }

  async record(entry: SandboxInviteRecord): Promise<void> {
    this.insert.run(entry.sipCallId, entry.toNumber, entry.receivedAt);
  }

  async list(): Promise<SandboxInviteRecord[]> {
    return (this.all.all() as { sip_call_id: string; to_number: string; received_at: string }[]).map(
      (row) => ({
        sipCallId: row.sip_call_id,
        toNumber: row.to_number,
        receivedAt: row.received_at,
      }),
    );
  }
}
