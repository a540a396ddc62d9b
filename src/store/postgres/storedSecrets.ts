import { type PgPool, withTransaction } from './database.js';

interface EndpointSecrets {
  account_id: string;
  secret: string;
  previous_secret: string | null;
}

/**
 * Rewrites the stored secrets `reseal` gives a new value for, in one transaction (see
 * Store.sealStoredSecrets). The rows are locked first, so processes starting together seal each
 * value once: the later one waits, then finds it sealed.
 */
export function sealStoredSecrets(
  pool: PgPool,
  reseal: (stored: string) => string | null,
  serviceSecretNames: readonly string[],
): Promise<number> {
  return withTransaction(pool, async (client) => {
    let count = 0;
    const endpoints = await client.query<EndpointSecrets>(
      'SELECT account_id, secret, previous_secret FROM webhook_endpoints ORDER BY account_id FOR UPDATE',
    );
    for (const row of endpoints.rows) {
      const secret = reseal(row.secret);
      const previous = row.previous_secret === null ? null : reseal(row.previous_secret);
      if (secret === null && previous === null) continue;
      await client.query(
        'UPDATE webhook_endpoints SET secret = $1, previous_secret = $2 WHERE account_id = $3',
        [secret ?? row.secret, previous ?? row.previous_secret, row.account_id],
      );
      count += (secret === null ? 0 : 1) + (previous === null ? 0 : 1);
    }
    const named = await client.query<{ name: string; value: string }>(
      'SELECT name, value FROM service_secrets WHERE name = ANY($1) ORDER BY name FOR UPDATE',
      [serviceSecretNames],
    );
    for (const row of named.rows) {
      const sealed = reseal(row.value);
      if (sealed === null) continue;
      await client.query('UPDATE service_secrets SET value = $1 WHERE name = $2', [sealed, row.name]);
      count++;
    }
    return count;
  });
}
