import type { SetupTokenRepository } from '../types.js';
import type { SqliteDatabase } from './database.js';

const namePrefix = 'dashboard-setup-token:';

/** Setup-token hashes in service_secrets: the name carries the hash, the value the expiry. */
export class SqliteSetupTokens implements SetupTokenRepository {
  private readonly insert;
  private readonly deleteExpired;
  private readonly live;
  private readonly deleteLive;
  private readonly deleteEvery;

  constructor(db: SqliteDatabase) {
    const ours = `substr(name, 1, ${namePrefix.length}) = '${namePrefix}'`;
    this.insert = db.prepare('INSERT INTO service_secrets (name, value, created_at) VALUES (?, ?, ?)');
    this.deleteExpired = db.prepare(`DELETE FROM service_secrets WHERE ${ours} AND value <= ?`);
    this.live = db
      .prepare(
        `SELECT substr(name, ${namePrefix.length + 1}) FROM service_secrets WHERE ${ours} AND value > ?`,
      )
      .pluck();
    this.deleteLive = db.prepare('DELETE FROM service_secrets WHERE name = ? AND value > ?');
    this.deleteEvery = db.prepare(`DELETE FROM service_secrets WHERE ${ours}`);
  }

  async create(tokenHash: string, expiresAtIso: string, nowIso: string): Promise<void> {
    this.deleteExpired.run(nowIso);
    this.insert.run(namePrefix + tokenHash, expiresAtIso, nowIso);
  }

  async listLive(nowIso: string): Promise<string[]> {
    return this.live.all(nowIso) as string[];
  }

  async consume(tokenHash: string, nowIso: string): Promise<boolean> {
    return this.deleteLive.run(namePrefix + tokenHash, nowIso).changes === 1;
  }

  async deleteAll(): Promise<void> {
    this.deleteEvery.run();
  }
}
