import { describe, expect, it } from 'vitest';
import { JitterBuffer, type JitterFrame } from './jitterBuffer.js';

const frame = (seq: number): Uint8Array => Uint8Array.of(seq & 0xff, seq >> 8);
const label = (f: JitterFrame): string | number => (typeof f === 'string' ? f : f[0]! | (f[1]! << 8));

function drain(buffer: JitterBuffer, ticks: number): (string | number)[] {
  const out: (string | number)[] = [];
  for (let i = 0; i < ticks; i++) out.push(label(buffer.pop()));
  return out;
}

describe('JitterBuffer', () => {
  it('waits for its target depth, then plays in sequence order', () => {
    const buffer = new JitterBuffer({ targetDepthFrames: 3 });
    expect(buffer.pop()).toBe('waiting');
    for (const seq of [100, 102, 101, 104, 103]) expect(buffer.push(seq, frame(seq))).toBe('accepted');
    expect(drain(buffer, 6)).toEqual([100, 101, 102, 103, 104, 'waiting']);
    expect(buffer.stats()).toMatchObject({ played: 5, lost: 0, late: 0 });
  });

  it('starts earlier when a packet from before the first one arrives during prefill', () => {
    const buffer = new JitterBuffer({ targetDepthFrames: 3 });
    buffer.push(11, frame(11));
    buffer.push(10, frame(10));
    buffer.push(12, frame(12));
    expect(drain(buffer, 3)).toEqual([10, 11, 12]);
  });

  it('drops duplicates, before and after playout', () => {
    const buffer = new JitterBuffer({ targetDepthFrames: 2 });
    buffer.push(1, frame(1));
    expect(buffer.push(1, frame(1))).toBe('duplicate');
    buffer.push(2, frame(2));
    expect(drain(buffer, 1)).toEqual([1]);
    expect(buffer.push(1, frame(1))).toBe('duplicate');
    expect(buffer.stats().duplicates).toBe(2);
  });

  it('reports a missing frame as lost at its turn and counts it', () => {
    const buffer = new JitterBuffer({ targetDepthFrames: 2 });
    for (const seq of [1, 2, 4, 5]) buffer.push(seq, frame(seq));
    expect(drain(buffer, 5)).toEqual([1, 2, 'lost', 4, 5]);
    expect(buffer.stats().lost).toBe(1);
  });

  it('drops a packet that arrives after its turn as late', () => {
    const buffer = new JitterBuffer({ targetDepthFrames: 2 });
    for (const seq of [1, 2, 4, 5]) buffer.push(seq, frame(seq));
    expect(drain(buffer, 3)).toEqual([1, 2, 'lost']);
    expect(buffer.push(3, frame(3))).toBe('late');
    expect(drain(buffer, 2)).toEqual([4, 5]);
    expect(buffer.stats()).toMatchObject({ late: 1, lost: 1, played: 4 });
  });

  it('re-buffers after an underrun without counting loss', () => {
    const buffer = new JitterBuffer({ targetDepthFrames: 2 });
    buffer.push(1, frame(1));
    buffer.push(2, frame(2));
    expect(drain(buffer, 3)).toEqual([1, 2, 'waiting']);
    buffer.push(3, frame(3));
    expect(buffer.pop()).toBe('waiting');
    buffer.push(4, frame(4));
    expect(drain(buffer, 2)).toEqual([3, 4]);
    expect(buffer.stats()).toMatchObject({ lost: 0, underruns: 1 });
  });

  it('bounds its depth by skipping the oldest frames', () => {
    const buffer = new JitterBuffer({ targetDepthFrames: 2, maxDepthFrames: 5 });
    for (let seq = 0; seq < 12; seq++) buffer.push(seq, frame(seq));
    expect(buffer.stats().buffered).toBeLessThanOrEqual(5);
    expect(drain(buffer, 5)).toEqual([7, 8, 9, 10, 11]);
    expect(buffer.stats().overflowDropped).toBe(7);
  });

  it('plays across the sequence number wrap', () => {
    const buffer = new JitterBuffer({ targetDepthFrames: 2 });
    for (const seq of [65534, 0, 65535, 1]) buffer.push(seq, frame(seq));
    expect(drain(buffer, 4)).toEqual([65534, 65535, 0, 1]);
  });

  it('restarts on a jump far from playout (a new stream)', () => {
    const buffer = new JitterBuffer({ targetDepthFrames: 1 });
    buffer.push(10, frame(10));
    expect(drain(buffer, 1)).toEqual([10]);
    expect(buffer.push(30000, frame(30000))).toBe('reset');
    expect(drain(buffer, 1)).toEqual([30000 & 0xffff]);
  });
});
