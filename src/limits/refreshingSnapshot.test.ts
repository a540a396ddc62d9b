import { describe, expect, it } from 'vitest';
import { RefreshingSnapshot } from './refreshingSnapshot.js';

describe('RefreshingSnapshot', () => {
  it('reads once per ttl, shares a read in flight, and reads again after a failed read', async () => {
    let reads = 0;
    let fail = false;
    const snapshot = new RefreshingSnapshot(5_000, async () => {
      reads++;
      if (fail) throw new Error('store down');
      return reads;
    });
    expect(await Promise.all([snapshot.get(0), snapshot.get(0), snapshot.get(10)])).toEqual([1, 1, 1]);
    expect(await snapshot.get(5_000)).toBe(1);
    expect(await snapshot.get(5_001)).toBe(2);
    fail = true;
    await expect(snapshot.get(20_000)).rejects.toThrow('store down');
    fail = false;
    expect(await snapshot.get(20_001)).toBe(4);
    expect(reads).toBe(4);
  });
});
