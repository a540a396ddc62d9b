import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../config.js';
import type { Logger } from '../logger.js';
import { makePrivateDirectory, privateFileMode, tightenToPrivate } from './privateFiles.js';

/** How every sealed value starts; plain secrets (`whsec_…`, base64) never do. */
export const sealedPrefix = 'v1.';

/** True for a value SecretBox.seal made (an earlier version may have stored secrets in plain text). */
export function isSealed(value: string): boolean {
  return value.startsWith(sealedPrefix);
}

/**
 * Encrypts small secrets at rest (trunk passwords, webhook secrets, the recording-link key) with
 * AES-256-GCM. The key lives outside the database: `CALLWRIGHT_SECRET_KEY` (base64 of 32 bytes,
 * required when several processes share one PostgreSQL database) or a `secret.key` file made
 * once in the data directory with mode 0600.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('the secret key must be 32 bytes');
    this.key = key;
  }

  /** `v1.` + base64url(iv | tag | ciphertext). */
  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${sealedPrefix}${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')}`;
  }

  /** Throws when the value was not sealed with this key (or was altered). */
  open(sealed: string): string {
    if (!isSealed(sealed)) throw new Error('unknown secret format');
    const raw = Buffer.from(sealed.slice(sealedPrefix.length), 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}

const keyVariable = 'CALLWRIGHT_SECRET_KEY';

function keyFromFile(path: string): SecretBox {
  const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
  if (key.length !== 32) {
    throw new ConfigError(keyVariable, `${path} does not hold the base64 of 32 bytes; restore the key file`);
  }
  return new SecretBox(key);
}

/** Writes a new key file as 0600 in one step: a racing process either wins or reads the winner's. */
function createKeyFile(path: string): void {
  const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(draft, randomBytes(32).toString('base64'), { mode: privateFileMode, flag: 'wx' });
  try {
    linkSync(draft, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(draft, { force: true });
  }
}

/**
 * The configured key, or the data directory's key file. The embedded mode makes the file on first
 * use. With a shared (PostgreSQL) database every process must hold the same key, so no file is
 * made there: CALLWRIGHT_SECRET_KEY is required, or a key file an earlier version already made.
 */
export function loadSecretBox(options: {
  configuredKeyBase64: string | null;
  dataDir: string;
  /** DATABASE_URL is set: processes on other machines open what this one seals. */
  sharedDatabase?: boolean;
  logger?: Pick<Logger, 'warn'>;
}): SecretBox {
  if (options.configuredKeyBase64) return new SecretBox(Buffer.from(options.configuredKeyBase64, 'base64'));
  const logger = options.logger ?? { warn: () => undefined };
  const path = join(options.dataDir, 'secret.key');
  if (options.sharedDatabase) {
    if (!existsSync(path)) {
      throw new ConfigError(
        keyVariable,
        'is required with DATABASE_URL: every process that shares the database seals and opens secrets ' +
          'with one key. Set it to the same base64 of 32 random bytes everywhere (e.g. `openssl rand -base64 32`)',
      );
    }
    logger.warn(
      { path },
      `using the key file of an earlier install with DATABASE_URL; set ${keyVariable} (its content) on every process`,
    );
  } else if (!existsSync(path)) {
    makePrivateDirectory(options.dataDir);
    createKeyFile(path);
  }
  tightenToPrivate(path, logger);
  return keyFromFile(path);
}
