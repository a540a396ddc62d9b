import { describe, expect, it } from 'vitest';
import { MemoryRateLimiter } from './rateLimiter.js';

describe('MemoryRateLimiter with its map full', () => {
  const signInPolicy = { requests: 5, windowS: 300 };
  const floodPolicy = { requests: 20, windowS: 60 };

  it('a flood of fresh keys does not push out a bucket that is holding someone off', async () => {
    let nowMs = 1_000_000;
    const limiter = new MemoryRateLimiter({ maxBuckets: 10, now: () => nowMs });
    for (let attempt = 0; attempt < 5; attempt++) await limiter.take('email:victim', signInPolicy);
    expect((await limiter.take('email:victim', signInPolicy)).allowed).toBe(false);
    for (let key = 0; key < 100; key++) {
      nowMs += 10;
      await limiter.take(`address:${key}`, floodPolicy);
    }
    expect((await limiter.take('email:victim', signInPolicy)).allowed).toBe(false);
  });

  it('buckets that have refilled are forgotten first: they hold nothing', async () => {
    let nowMs = 1_000_000;
    const limiter = new MemoryRateLimiter({ maxBuckets: 4, now: () => nowMs });
    await limiter.take('idle', floodPolicy);
    for (let attempt = 0; attempt < 5; attempt++) await limiter.take('held', signInPolicy);
    nowMs += 61_000; // 'idle' has refilled; 'held' has one token back of five
    for (let key = 0; key < 3; key++) await limiter.take(`new:${key}`, floodPolicy);
    expect((await limiter.take('held', signInPolicy)).allowed).toBe(true);
    expect((await limiter.take('held', signInPolicy)).allowed).toBe(false);
  });
});
