import { describe, expect, it } from 'vitest';
import { pooledRandomBytes } from './ids.js';

describe('pooledRandomBytes', () => {
  it('hands out fresh bytes across pool refills, never the same run twice', () => {
    const seen = new Set<string>();
    // 2,000 × 8 bytes crosses the 4 KiB pool's refill three times.
    for (let index = 0; index < 2000; index++) {
      const bytes = pooledRandomBytes(8);
      expect(bytes).toHaveLength(8);
      seen.add(bytes.toString('hex'));
    }
    expect(seen.size).toBe(2000);
  });

  it('returns copies that a refill does not change, and refuses more than a pool at once', () => {
    const first = pooledRandomBytes(16);
    const kept = Buffer.from(first);
    for (let index = 0; index < 600; index++) pooledRandomBytes(16);
    expect(first.equals(kept)).toBe(true);
    expect(() => pooledRandomBytes(4097)).toThrow(RangeError);
  });

  it('is not all zeros', () => {
    expect(pooledRandomBytes(32).some((byte) => byte !== 0)).toBe(true);
  });
});
