import type { SqliteDatabase } from './database.js';

interface EndpointSecrets {
  account_id: string;
  secret: string;
  previous_secret: string | null;
}

/**
 * Rewrites the stored secrets `reseal` gives a new value for, in one transaction (see
 * Store.sealStoredSecrets). The old values are overwritten on disk too: secure_delete zeroes the
 * space they took in the pages, and a truncating checkpoint empties the write-ahead log.
 */
export function sealStoredSecrets(
  db: SqliteDatabase,
  reseal: (stored: string) => string | null,
  serviceSecretNames: readonly string[],
): number {
  const secureDelete = db.pragma('secure_delete', { simple: true });
  db.pragma('secure_delete = ON');
  let rewritten = 0;
  try {
    rewritten = db
      .transaction(() => {
        let count = 0;
        const updateEndpoint = db.prepare(
          'UPDATE webhook_endpoints SET secret = ?, previous_secret = ? WHERE account_id = ?',
        );
        const endpoints = db
          .prepare('SELECT account_id, secret, previous_secret FROM webhook_endpoints')
          .all() as EndpointSecrets[];
        for (const row of endpoints) {
          const secret = reseal(row.secret);
          const previous = row.previous_secret === null ? null : reseal(row.previous_secret);
          if (secret === null && previous === null) continue;
          updateEndpoint.run(secret ?? row.secret, previous ?? row.previous_secret, row.account_id);
          count += (secret === null ? 0 : 1) + (previous === null ? 0 : 1);
        }
        const read = db.prepare('SELECT value FROM service_secrets WHERE name = ?').pluck();
        const update = db.prepare('UPDATE service_secrets SET value = ? WHERE name = ?');
        for (const name of serviceSecretNames) {
          const value = read.get(name);
          const sealed = typeof value === 'string' ? reseal(value) : null;
          if (sealed === null) continue;
          update.run(sealed, name);
          count++;
        }
        return count;
      })
      .immediate();
  } finally {
    db.pragma(`secure_delete = ${Number(secureDelete) === 1 ? 'ON' : 'OFF'}`);
  }
  if (rewritten > 0 && db.name !== ':memory:') db.pragma('wal_checkpoint(TRUNCATE)');
  return rewritten;
}
