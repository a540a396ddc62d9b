import { generateApiKey, hashApiKey, keyDisplayParts } from '../domain/apiKeys.js';
import { AppError } from '../domain/errors.js';
import type { ApiKeyRecord } from '../domain/records.js';
import type { Store } from '../store/types.js';

export const apiKeyNameMaxChars = 100;

/**
 * Creates a key for the account holder. The returned `key` is the only copy of the secret that
 * will ever exist outside the caller's hands: only its SHA-256 is stored.
 */
export async function createApiKey(
  store: Store,
  accountId: string,
  name: string,
): Promise<{ record: ApiKeyRecord; key: string }> {
  const trimmed = name.trim();
  if (trimmed.length === 0) throw new AppError('validation_error', 'a key needs a descriptive name');
  if (trimmed.length > apiKeyNameMaxChars) {
    throw new AppError('validation_error', `key names are at most ${apiKeyNameMaxChars} characters`);
  }
  const key = generateApiKey();
  const display = keyDisplayParts(key);
  const record = await store.apiKeys.create({
    accountId,
    name: trimmed,
    keyHash: hashApiKey(key),
    prefix: display.prefix,
    last4: display.last4,
  });
  return { record, key };
}

export async function revokeApiKey(store: Store, accountId: string, keyId: string): Promise<ApiKeyRecord> {
  const revoked = await store.apiKeys.revoke(accountId, keyId, new Date().toISOString());
  if (!revoked) throw new AppError('not_found', `no key ${keyId} in this account`);
  return revoked;
}

/** A key as lists show it: never the secret, only its first and last characters. */
export function describeApiKey(record: ApiKeyRecord) {
  return {
    id: record.id,
    name: record.name,
    display: `${record.prefix}…${record.last4}`,
    created_at: record.createdAt,
    last_used_at: record.lastUsedAt,
    revoked_at: record.revokedAt,
  };
}

/**
 * The key that calls placed outside the HTTP API are recorded under (every call names the key that
 * placed it): one per account and purpose, made on first use, its secret discarded at once so it
 * can never be used over HTTP.
 */
export async function keyForCallsPlacedBy(
  store: Store,
  accountId: string,
  name: string,
): Promise<ApiKeyRecord> {
  const keys = await store.apiKeys.list(accountId);
  const existing = keys.find((entry) => entry.name === name && entry.revokedAt === null);
  return existing ?? (await createApiKey(store, accountId, name)).record;
}
