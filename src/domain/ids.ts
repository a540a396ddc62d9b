import { randomFillSync } from 'node:crypto';

/** Crockford base32, the ULID alphabet. */
const ulidAlphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

let lastTimeMs = -1;
let lastRandom: number[] = [];

function encodeTime(timeMs: number): string {
  let out = '';
  let remaining = timeMs;
  for (let i = 0; i < 10; i++) {
    out = ulidAlphabet[remaining % 32] + out;
    remaining = Math.floor(remaining / 32);
  }
  return out;
}

/**
 * Cryptographically random bytes drawn from a pool refilled 4 KiB at a time: a `randomBytes` call
 * per id or request id cost ~10 µs each, 5% of an API process's CPU under load (bench:api profile).
 */
const randomPool = Buffer.alloc(4096);
let randomPoolOffset = randomPool.length;

export function pooledRandomBytes(count: number): Buffer {
  if (count > randomPool.length) throw new RangeError(`at most ${randomPool.length} random bytes at a time`);
  if (randomPoolOffset + count > randomPool.length) {
    randomFillSync(randomPool);
    randomPoolOffset = 0;
  }
  // A copy: the pool's bytes are overwritten on the next refill. Each byte is handed out once.
  const bytes = Buffer.from(randomPool.subarray(randomPoolOffset, randomPoolOffset + count));
  randomPoolOffset += count;
  return bytes;
}

function freshRandom(): number[] {
  const bytes = pooledRandomBytes(16);
  const digits: number[] = [];
  for (let i = 0; i < 16; i++) digits.push((bytes[i] ?? 0) % 32);
  return digits;
}

/** Increments the 80-bit random part so ids made in the same millisecond still sort in order. */
function incremented(digits: number[]): number[] | null {
  const next = [...digits];
  for (let i = next.length - 1; i >= 0; i--) {
    const digit = next[i] ?? 0;
    if (digit < 31) {
      next[i] = digit + 1;
      return next;
    }
    next[i] = 0;
  }
  return null;
}

/**
 * A monotonic ULID: 48-bit millisecond time and 80 random bits, 26 Crockford base32 characters.
 * Within one process, ids sort in creation order even inside one millisecond.
 */
export function ulid(nowMs: number = Date.now()): string {
  let timeMs = Math.max(nowMs, lastTimeMs);
  let random: number[] | null;
  if (timeMs === lastTimeMs) {
    random = incremented(lastRandom);
    if (random === null) {
      timeMs += 1;
      random = freshRandom();
    }
  } else {
    random = freshRandom();
  }
  lastTimeMs = timeMs;
  lastRandom = random;
  return encodeTime(timeMs) + random.map((d) => ulidAlphabet[d]).join('');
}

const idPrefixes = {
  account: 'acct_',
  apiKey: 'key_',
  agent: 'agt_',
  call: 'call_',
  event: 'evt_',
  trunk: 'trk_',
  credential: 'cred_',
  user: 'usr_',
  campaign: 'cmp_',
  campaignContact: 'cct_',
  audit: 'aud_',
  testRun: 'trn_',
} as const;

export type IdKind = keyof typeof idPrefixes;

export function newId(kind: IdKind, nowMs?: number): string {
  return idPrefixes[kind] + ulid(nowMs);
}

const idPattern = /^[a-z]{3,4}_[0-9A-HJKMNP-TV-Z]{26}$/;

/** True when `value` has the shape of an id of `kind` (no database lookup). */
export function isIdOf(kind: IdKind, value: string): boolean {
  return value.startsWith(idPrefixes[kind]) && idPattern.test(value);
}
