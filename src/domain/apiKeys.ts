import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

const base62Alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const apiKeyPrefix = 'cw_live_';
const randomLength = 32;
const checksumLength = 6;
const apiKeyPattern = /^cw_live_[0-9A-Za-z]{38}$/;

function base62(value: number, width: number): string {
  let out = '';
  let remaining = value;
  for (let i = 0; i < width; i++) {
    out = base62Alphabet[remaining % 62] + out;
    remaining = Math.floor(remaining / 62);
  }
  return out;
}

function checksumOf(randomPart: string): string {
  return base62(crc32(randomPart), checksumLength);
}

/**
 * A new secret key: `cw_live_`, 32 random base62 characters (about 190 bits) and a 6-character
 * base62 CRC32 of them, so secret scanners and our own edge can tell a key from a typo offline.
 */
export function generateApiKey(): string {
  let randomPart = '';
  for (let i = 0; i < randomLength; i++) randomPart += base62Alphabet[randomInt(62)];
  return apiKeyPrefix + randomPart + checksumOf(randomPart);
}

/** True when the value has a key's shape and a correct checksum. Costs no I/O. */
export function hasValidKeyShape(value: string): boolean {
  if (!apiKeyPattern.test(value)) return false;
  const randomPart = value.slice(apiKeyPrefix.length, apiKeyPrefix.length + randomLength);
  const checksum = value.slice(apiKeyPrefix.length + randomLength);
  return safeEqual(checksum, checksumOf(randomPart));
}

/** The only form in which a key is stored: SHA-256, hex. */
export function hashApiKey(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** What lists show of a key: its first 12 characters and its last 4. */
export function keyDisplayParts(value: string): { prefix: string; last4: string } {
  return { prefix: value.slice(0, apiKeyPrefix.length + 4), last4: value.slice(-4) };
}

/** Constant-time string comparison (the lengths themselves are not secret here). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  if (left.length !== right.length) return false;
  return timingSafeEqual(left, right);
}
