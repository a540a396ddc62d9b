import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Encrypts small secrets at rest (trunk passwords) with AES-256-GCM. The key lives outside the
 * database: `CALLWRIGHT_SECRET_KEY` (base64 of 32 bytes, required when several machines share one
 * database) or a `secret.key` file made once in the data directory with mode 0600.
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
    return `v1.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')}`;
  }

  open(sealed: string): string {
    if (!sealed.startsWith('v1.')) throw new Error('unknown secret format');
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}

/** The configured key, or the data directory's key file (created on first use). */
export function loadSecretBox(options: { configuredKeyBase64: string | null; dataDir: string }): SecretBox {
  if (options.configuredKeyBase64) return new SecretBox(Buffer.from(options.configuredKeyBase64, 'base64'));
  const path = join(options.dataDir, 'secret.key');
  if (!existsSync(path)) {
    writeFileSync(path, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
    chmodSync(path, 0o600);
  }
  return new SecretBox(Buffer.from(readFileSync(path, 'utf8').trim(), 'base64'));
}
