/**
 * Secrets at rest are sealed at the boundary of the store: the store keeps ciphertext, and the
 * code that needs a plaintext (the webhook signer, the recording-link signer, the administrator
 * who reads the webhook secret) opens it with the SecretBox. See docs/decisions.md.
 */
import { ConfigError } from '../config.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/types.js';
import { isSealed, type SecretBox } from './secretBox.js';

/** A service secret that holds a known text sealed with the key of whoever sealed it first. */
export const secretKeyCheckName = 'secret-key-check';
const secretKeyCheckText = 'callwright secret key check';

/**
 * A stored secret in plain text. Values an earlier version stored in plain text are read as they
 * are (a process of that version may still be writing during a rolling upgrade); the next
 * start-up seals them.
 */
export function openStoredSecret(box: SecretBox, stored: string): string {
  return isSealed(stored) ? box.open(stored) : stored;
}

/** A secret the service made for itself, stored sealed: created (sealed) on first use, opened after. */
export async function openServiceSecret(
  store: Pick<Store, 'serviceSecret'>,
  box: SecretBox,
  name: string,
  create: () => string,
): Promise<string> {
  return openStoredSecret(box, await store.serviceSecret(name, () => box.seal(create())));
}

/**
 * Fails when this process's key is not the one the database's secrets were sealed with: two
 * machines with their own key files, or a lost key file, would otherwise seal what the others
 * cannot open. The first process to run records its key's check value.
 */
export async function checkSecretKey(store: Pick<Store, 'serviceSecret'>, box: SecretBox): Promise<void> {
  const check = await store.serviceSecret(secretKeyCheckName, () => box.seal(secretKeyCheckText));
  let opened: string | null = null;
  try {
    opened = box.open(check);
  } catch {
    opened = null;
  }
  if (opened !== secretKeyCheckText) {
    throw new ConfigError(
      'CALLWRIGHT_SECRET_KEY',
      'this key (or the data directory’s secret.key) is not the one that sealed the secrets in this ' +
        'database; start every process with the key the others use',
    );
  }
}

/**
 * At start-up: checks the key, then seals, in one transaction, every secret an earlier version
 * stored in plain text (webhook secrets, and the named service secrets). Resolves to how many.
 */
export async function sealSecretsAtRest(
  store: Pick<Store, 'serviceSecret' | 'sealStoredSecrets'>,
  box: SecretBox,
  options: { serviceSecretNames: readonly string[]; logger: Pick<Logger, 'info'> },
): Promise<number> {
  await checkSecretKey(store, box);
  const sealed = await store.sealStoredSecrets(
    (stored) => (isSealed(stored) ? null : box.seal(stored)),
    options.serviceSecretNames,
  );
  if (sealed > 0) options.logger.info({ sealed }, 'sealed secrets an earlier version stored in plain text');
  return sealed;
}
