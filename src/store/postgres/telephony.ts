import { AppError } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import type { SandboxInviteRecord, TrunkRecord } from '../../domain/records.js';
import { trunkFromRow } from '../recordsFromRows.js';
import type { SandboxInviteRepository, TrunkRepository } from '../types.js';
import { iso, isUniqueViolation, type PgPool } from './database.js';
import { postgresColumns } from './rows.js';

interface TrunkRow {
  id: string;
  account_id: string;
  name: string;
  uri: string;
  username: string | null;
  password_ciphertext: string | null;
  from_domain: string | null;
  created_at: Date | string;
}

const toTrunk = (row: TrunkRow) => trunkFromRow(row, postgresColumns);

export class PostgresTrunks implements TrunkRepository {
  constructor(private readonly pool: PgPool) {}

  async create(input: Omit<TrunkRecord, 'id' | 'createdAt'>): Promise<TrunkRecord> {
    try {
      const { rows } = await this.pool.query<TrunkRow>(
        `INSERT INTO trunks (id, account_id, name, uri, username, password_ciphertext, from_domain, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
        [
          newId('trunk'),
          input.accountId,
          input.name,
          input.uri,
          input.username,
          input.passwordCiphertext,
          input.fromDomain,
          new Date().toISOString(),
        ],
      );
      return toTrunk(rows[0] as TrunkRow);
    } catch (error) {
      if (isUniqueViolation(error))
        throw new AppError('conflict', `a trunk named ${input.name} already exists`);
      throw error;
    }
  }

  async get(accountId: string, idOrName: string): Promise<TrunkRecord | null> {
    const { rows } = await this.pool.query<TrunkRow>(
      'SELECT * FROM trunks WHERE account_id = $1 AND (id = $2 OR name = $2)',
      [accountId, idOrName],
    );
    return rows[0] ? toTrunk(rows[0]) : null;
  }

  async list(accountId: string): Promise<TrunkRecord[]> {
    const { rows } = await this.pool.query<TrunkRow>(
      'SELECT * FROM trunks WHERE account_id = $1 ORDER BY name COLLATE "C"',
      [accountId],
    );
    return rows.map(toTrunk);
  }

  async remove(accountId: string, id: string): Promise<boolean> {
    const { rows } = await this.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM phone_numbers WHERE account_id = $1 AND route = $2',
      [accountId, id],
    );
    if ((rows[0]?.n ?? 0) > 0) {
      throw new AppError('conflict', 'numbers still use this trunk: rebind or remove them first');
    }
    const result = await this.pool.query('DELETE FROM trunks WHERE account_id = $1 AND id = $2', [
      accountId,
      id,
    ]);
    return (result.rowCount ?? 0) > 0;
  }
}

export class PostgresSandboxInvites implements SandboxInviteRepository {
  constructor(private readonly pool: PgPool) {}

  async record(entry: SandboxInviteRecord): Promise<void> {
    await this.pool.query(
      'INSERT INTO sandbox_invites (sip_call_id, to_number, received_at) VALUES ($1, $2, $3)',
      [entry.sipCallId, entry.toNumber, entry.receivedAt],
    );
  }

  async list(): Promise<SandboxInviteRecord[]> {
    const { rows } = await this.pool.query<{ sip_call_id: string; to_number: string; received_at: Date }>(
      'SELECT sip_call_id, to_number, received_at FROM sandbox_invites ORDER BY id',
    );
    return rows.map((row) => ({
      sipCallId: row.sip_call_id,
      toNumber: row.to_number,
      receivedAt: iso(row.received_at),
    }));
  }
}
