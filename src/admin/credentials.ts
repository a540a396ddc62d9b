import { credentialProviders } from '../domain/agentVoiceSettings.js';
import { AppError } from '../domain/errors.js';
import type { ProviderCredentialRecord } from '../domain/records.js';
import { checkHost } from '../net/hostGuard.js';
import type { SecretBox } from '../secrets/secretBox.js';
import type { Store } from '../store/types.js';
import { checkVendorKey, type VendorCheckResult } from '../voice/vendorCheck.js';

/** The operator setting that lets credential base URLs name private and loopback addresses. */
export const providerAllowPrivateSettingName = 'CALLWRIGHT_PROVIDER_ALLOW_PRIVATE';

export interface CredentialInput {
  name: string;
  provider: string;
  apiKey: string;
  baseUrl?: string | null;
}

function checkBaseUrl(raw: string, allowPrivate: boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError('validation_error', 'base_url must be an absolute URL');
  }
  if (!['https:', 'wss:', 'http:', 'ws:'].includes(url.protocol))
    throw new AppError('validation_error', 'base_url must use https, wss, http or ws');
  if (url.username || url.password || url.search || url.hash)
    throw new AppError('validation_error', 'base_url must not carry credentials, a query or a fragment');
  checkHost(url.hostname, {
    allowPrivate,
    subject: 'the credential base_url',
    allowPrivateSetting: providerAllowPrivateSettingName,
  });
  return url.toString().replace(/\/+$/, '');
}

/**
 * Stores an account's own key for a voice vendor: sealed with the service's key before it is
 * written, shown afterwards only by its last 4 characters. A base URL naming a private or loopback
 * address is refused unless CALLWRIGHT_PROVIDER_ALLOW_PRIVATE.
 */
export async function addCredential(
  store: Store,
  secretBox: SecretBox,
  accountId: string,
  input: CredentialInput,
  options: { allowPrivate: boolean },
): Promise<ProviderCredentialRecord> {
  const name = input.name.trim();
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name))
    throw new AppError(
      'validation_error',
      'name must be 1 to 64 letters, digits, dots, dashes or underscores',
    );
  if (!(credentialProviders as readonly string[]).includes(input.provider))
    throw new AppError('validation_error', `provider must be one of ${credentialProviders.join(', ')}`);
  if (!/^[\x21-\x7e]{8,500}$/.test(input.apiKey))
    throw new AppError('validation_error', 'api_key must be 8 to 500 printable characters without spaces');
  const baseUrl = input.baseUrl ? checkBaseUrl(input.baseUrl, options.allowPrivate) : null;
  return store.credentials.create({
    accountId,
    name,
    provider: input.provider,
    apiKeyCiphertext: secretBox.seal(input.apiKey),
    apiKeyLast4: input.apiKey.slice(-4),
    baseUrl,
  });
}

export async function removeCredential(
  store: Store,
  accountId: string,
  idOrName: string,
): Promise<ProviderCredentialRecord> {
  const credential = await store.credentials.get(accountId, idOrName);
  if (!credential || !(await store.credentials.remove(accountId, credential.id)))
    throw new AppError('not_found', `no credential ${idOrName.slice(0, 64)} in this account`);
  return credential;
}

/**
 * The "test" verb: one cheap authenticated request to the credential's vendor with its key, for
 * success or the vendor's own error (never the key). The base URL is vetted again at use time.
 */
export async function testCredential(
  store: Store,
  secretBox: SecretBox,
  accountId: string,
  idOrName: string,
  options: { allowPrivate: boolean; timeoutMs?: number },
): Promise<{ credential: ProviderCredentialRecord; result: VendorCheckResult }> {
  const credential = await store.credentials.get(accountId, idOrName);
  if (!credential) throw new AppError('not_found', `no credential ${idOrName.slice(0, 64)} in this account`);
  const result = await checkVendorKey(
    credential.provider,
    { apiKey: secretBox.open(credential.apiKeyCiphertext), baseUrl: credential.baseUrl },
    { ...options, allowPrivateSetting: providerAllowPrivateSettingName },
  );
  return { credential, result };
}

/** What a credential test shows. */
export function describeCredentialTest(credential: ProviderCredentialRecord, result: VendorCheckResult) {
  return {
    credential_id: credential.id,
    name: credential.name,
    provider: credential.provider,
    ok: result.ok,
    status: result.status,
    message: result.message,
    latency_ms: result.latencyMs,
  };
}

/** What is shown of a credential: never the key, only its last 4 characters. */
export function describeCredential(credential: ProviderCredentialRecord) {
  return {
    credential_id: credential.id,
    name: credential.name,
    provider: credential.provider,
    api_key_last4: credential.apiKeyLast4,
    base_url: credential.baseUrl,
    created_at: credential.createdAt,
  };
}

/**
 * The account's keys for a call, opened, by provider (the first by name when an account has two for
 * one provider) and by `provider/name` (for a stage that names its credential). Only the voice stack receives them, and only for the call being placed.
 */
export async function accountVendorKeys(
  store: Store,
  secretBox: SecretBox,
  accountId: string,
): Promise<Map<string, { apiKey: string; baseUrl: string | null; accountOwned: true }>> {
  const keys = new Map<string, { apiKey: string; baseUrl: string | null; accountOwned: true }>();
  for (const credential of await store.credentials.list(accountId)) {
    const opened = {
      apiKey: secretBox.open(credential.apiKeyCiphertext),
      baseUrl: credential.baseUrl,
      // Guarded at each connection against the setting as it is then (src/voice/vendorAdapters.ts).
      accountOwned: true as const,
    };
    // By name, for an agent stage that names its credential; by provider, the first by name.
    keys.set(`${credential.provider}/${credential.name}`, opened);
    if (!keys.has(credential.provider)) keys.set(credential.provider, opened);
  }
  return keys;
}
