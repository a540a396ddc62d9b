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

  describe('adaptive depth', () => {
    /**
     * A sender that emits one packet every 20 ms, each arriving `delayMs(seq)` after it was sent;
     * the receiver pops every 20 ms, 1 ms after the sender's tick. Returns what each pop gave and
     * how long each played frame waited in the buffer, per tick.
     */
    function simulate(
      buffer: JitterBuffer,
      ticks: number,
      delayMs: (seq: number) => number,
      droppable: (payload: Uint8Array) => boolean = () => true,
    ): { played: (string | number)[]; waitedMs: number[] } {
      const arrivals = Array.from({ length: ticks + 5 }, (_, seq) => ({
        seq,
        atMs: seq * 20 + delayMs(seq),
      }));
      arrivals.sort((a, b) => a.atMs - b.atMs);
      const played: (string | number)[] = [];
      const waitedMs: number[] = [];
      let next = 0;
      for (let tick = 0; tick < ticks; tick++) {
        const nowMs = tick * 20 + 1;
        while (next < arrivals.length && arrivals[next]!.atMs <= nowMs) {
          const { seq, atMs } = arrivals[next++]!;
          buffer.push(seq, frame(seq), atMs);
        }
        const out = label(buffer.pop(nowMs, droppable));
        played.push(out);
        if (typeof out === 'number') waitedMs.push(nowMs - (out * 20 + delayMs(out)));
      }
      return { played, waitedMs };
    }

    it('settles a steady stream a frame above its arrivals, skipping a surplus frame', () => {
      const buffer = new JitterBuffer({ targetDepthFrames: 3, shrink: { windowFrames: 50, marginMs: 10 } });
      const { played, waitedMs } = simulate(buffer, 300, () => 0.5);
      // Each packet arrives 0.5 ms before a pop. Three frames deep, a frame waits 40.5 ms; one frame
      // less leaves 20.5 ms; less than that would leave 0.5 ms, under the 10 ms margin.
      expect(waitedMs[0]).toBeCloseTo(40.5, 5);
      expect(waitedMs.at(-1)).toBeCloseTo(20.5, 5);
      expect(buffer.stats()).toMatchObject({ shrinks: 1, lost: 0, underruns: 0 });
      // Every frame played in order, but the skipped one.
      const numbers = played.filter((value): value is number => typeof value === 'number');
      expect(numbers.length).toBe(new Set(numbers).size);
      expect(numbers.at(-1)! - numbers[0]! + 1 - numbers.length).toBe(1);
    });

    it('keeps its depth when the arrivals jitter by more than the margin', () => {
      const buffer = new JitterBuffer({ targetDepthFrames: 3, shrink: { windowFrames: 50, marginMs: 10 } });
      // Every 7th packet is 35 ms late: a frame less would make it miss its turn.
      simulate(buffer, 400, (seq) => (seq % 7 === 3 ? 35 : 0.5));
      expect(buffer.stats()).toMatchObject({ shrinks: 0, lost: 0, late: 0, underruns: 0 });
    });

    it('skips only frames the caller lets go (quiet ones)', () => {
      const buffer = new JitterBuffer({ targetDepthFrames: 3, shrink: { windowFrames: 50, marginMs: 10 } });
      simulate(
        buffer,
        300,
        () => 0.5,
        () => false,
      );
      expect(buffer.stats().shrinks).toBe(0);
      const fixed = new JitterBuffer({ targetDepthFrames: 3, shrink: false });
      simulate(fixed, 300, () => 0.5);
      expect(fixed.stats().shrinks).toBe(0);
    });

    it('grows after an underrun and measures again from there', () => {
      const buffer = new JitterBuffer({ targetDepthFrames: 1, shrink: { windowFrames: 50, marginMs: 10 } });
      // One packet 30 ms late: the buffer runs dry, re-buffers, and plays a frame later from then on.
      const { played, waitedMs } = simulate(buffer, 200, (seq) => (seq >= 20 ? 30.5 : 0.5));
      expect(played).toContain('waiting');
      expect(buffer.stats()).toMatchObject({ underruns: 1, lost: 0, shrinks: 0 });
      // Seq 20 arrives 30 ms late, 10 ms before the pop two ticks on: from then on frames wait 10.5 ms.
      expect(waitedMs.at(-1)).toBeCloseTo(10.5, 5);
    });
  });
});
