import type { SetupTokenRepository } from '../types.js';
import type { PgPool } from './database.js';

const namePrefix = 'dashboard-setup-token:';
const ours = `left(name, ${namePrefix.length}) = '${namePrefix}'`;

/** Setup-token hashes in service_secrets: the name carries the hash, the value the expiry. */
export class PostgresSetupTokens implements SetupTokenRepository {
  constructor(private readonly pool: PgPool) {}

  async create(tokenHash: string, expiresAtIso: string, nowIso: string): Promise<void> {
    await this.pool.query(
      `DELETE FROM service_secrets WHERE ${ours} AND value::timestamptz <= $1::timestamptz`,
      [nowIso],
    );
    await this.pool.query('INSERT INTO service_secrets (name, value, created_at) VALUES ($1, $2, $3)', [
      namePrefix + tokenHash,
      expiresAtIso,
      nowIso,
    ]);
  }

  async listLive(nowIso: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ hash: string }>(
      `SELECT substr(name, ${namePrefix.length + 1}) AS hash FROM service_secrets WHERE ${ours} AND value::timestamptz > $1::timestamptz`,
      [nowIso],
    );
    return rows.map((row) => row.hash);
  }

  async consume(tokenHash: string, nowIso: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      'DELETE FROM service_secrets WHERE name = $1 AND value::timestamptz > $2::timestamptz',
      [namePrefix + tokenHash, nowIso],
    );
    return rowCount === 1;
  }

  async deleteAll(): Promise<void> {
    await this.pool.query(`DELETE FROM service_secrets WHERE ${ours}`);
  }
}
