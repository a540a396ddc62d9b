import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type ClockRegistration, MediaClock } from './mediaClock.js';

const logger = pino({ level: 'silent' });
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;

function busyWait(ms: number): void {
  const end = nowMs() + ms;
  while (nowMs() < end) {
    /* block the event loop */
  }
}

class RecordingSender {
  readonly calls: number[] = [];
  onFrame(): void {
    this.calls.push(nowMs());
  }
}

describe('MediaClock', () => {
  const registrations: ClockRegistration[] = [];
  afterEach(() => {
    for (const r of registrations.splice(0)) r.unregister();
  });

  it('calls every sender once per 20 ms, in 4 slots 5 ms apart, from one timer', async () => {
    const clock = new MediaClock({ logger });
    const senders = Array.from({ length: 8 }, () => new RecordingSender());
    for (const s of senders) registrations.push(clock.register(s));
    await sleep(1000);
    const stats = clock.stats();
    for (const s of senders) {
      // ~50 frames a second; a loaded machine may re-anchor after a long stall, never send extra.
      expect(s.calls.length).toBeGreaterThanOrEqual(40);
      expect(s.calls.length).toBeLessThanOrEqual(51);
    }
    // Senders 0 and 4 share a slot; 0, 1, 2, 3 are 5 ms apart within each frame.
    const offsets = [1, 2, 3].map((k) => {
      const deltas = senders[0]!.calls.slice(5, 30).map((t, i) => (senders[k]!.calls[i + 5] ?? t) - t);
      deltas.sort((a, b) => a - b);
      return deltas[Math.floor(deltas.length / 2)]!;
    });
    expect(offsets[0]).toBeGreaterThan(3);
    expect(offsets[0]).toBeLessThan(7);
    expect(offsets[1]).toBeGreaterThan(8);
    expect(offsets[1]).toBeLessThan(12);
    expect(offsets[2]).toBeGreaterThan(13);
    expect(offsets[2]).toBeLessThan(17);
    expect(stats.lateness.count).toBe(stats.ticks);
    expect(stats.lateness.p50Ms).toBeLessThan(5);
  });

  it('catches up after a blocked loop without bursting: at most one slot per wake-up', async () => {
    const clock = new MediaClock({ logger, maxCatchUpMs: 200 });
    const senders = Array.from({ length: 4 }, () => new RecordingSender());
    for (const s of senders) registrations.push(clock.register(s));
    await sleep(100);
    const blockedAt = nowMs();
    busyWait(60);
    await sleep(300);
    const all = senders.flatMap((s) => s.calls.filter((t) => t > blockedAt)).sort((a, b) => a - b);
    // Each sender still averages one frame per 20 ms over the window (the backlog was replayed) ...
    const windowMs = nowMs() - blockedAt;
    for (const s of senders) {
      const count = s.calls.filter((t) => t > blockedAt).length;
      expect(count).toBeGreaterThanOrEqual(Math.floor(windowMs / 20) - 2);
      expect(count).toBeLessThanOrEqual(Math.ceil(windowMs / 20) + 1);
    }
    // ... but never two slots in the same wake-up, and no sender twice within 5 ms.
    const gaps = all.slice(1).map((t, i) => t - all[i]!);
    expect(Math.min(...gaps)).toBeGreaterThan(0.5);
    for (const s of senders) {
      const mine = s.calls.filter((t) => t > blockedAt);
      const ownGaps = mine.slice(1).map((t, i) => t - mine[i]!);
      expect(Math.min(...ownGaps)).toBeGreaterThan(5);
    }
    expect(clock.stats().lateness.maxMs).toBeGreaterThan(30);
  });

  it('drops a backlog longer than maxCatchUpMs instead of replaying it', async () => {
    const clock = new MediaClock({ logger, maxCatchUpMs: 40 });
    const sender = new RecordingSender();
    registrations.push(clock.register(sender));
    await sleep(60);
    busyWait(200);
    await sleep(60);
    expect(clock.stats().skippedTicks).toBeGreaterThanOrEqual(20);
  });

  it('keeps going when a sender throws, and stops with its last sender', async () => {
    const clock = new MediaClock({ logger });
    const good = new RecordingSender();
    const bad = {
      onFrame(): void {
        throw new Error('boom');
      },
    };
    const a = clock.register(good);
    const b = clock.register(bad);
    await sleep(200);
    expect(good.calls.length).toBeGreaterThan(5);
    expect(clock.stats().senderErrors).toBeGreaterThan(5);
    a.unregister();
    b.unregister();
    const frozen = good.calls.length;
    const ticks = clock.stats().ticks;
    await sleep(100);
    expect(good.calls.length).toBe(frozen);
    expect(clock.stats().ticks).toBe(ticks);
    expect(clock.stats().senders).toBe(0);
  });
});
