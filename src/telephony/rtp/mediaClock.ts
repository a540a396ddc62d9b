import type { Logger } from '../../logger.js';
import { LatencyHistogram, type LatencySummary } from './latencyHistogram.js';

/**
 * The one send clock of the process. Every media session registers a `ClockedSender`; each is
 * called once per frame (20 ms). Senders are spread over `slotCount` slots offset by
 * frameMs / slotCount (5 ms), so the process sends a quarter of its packets every 5 ms rather
 * than all of them at once (a burst of 500 packets overflows a receiver's UDP buffer).
 *
 * Drift: tick n is due at start + n × slotMs on the monotonic clock (process.hrtime), whatever
 * the timer's own error, so lateness never accumulates. Catching up never bursts: one wake-up runs
 * one slot at most, and while behind, wake-ups come every `catchUpSpacingMs` (half a slot) instead
 * of every slot, so a backlog drains at twice the normal rate, a quarter of the sessions at a time.
 * A stall longer than `maxCatchUpMs` is not replayed: the schedule is re-anchored (the skipped
 * ticks are counted) and sessions continue where they were (their queued audio is only delayed).
 */
export interface ClockedSender {
  /** Called once per frame from the clock's tick. Must not throw (it is caught and counted). */
  onFrame(): void;
}

export interface MediaClockOptions {
  logger: Logger;
  frameMs?: number;
  slotCount?: number;
  /** Spacing of wake-ups while behind schedule (default slotMs / 2). */
  catchUpSpacingMs?: number;
  /** Lateness beyond which overdue ticks are dropped rather than replayed. */
  maxCatchUpMs?: number;
  /** Whether the timer keeps the process alive (default false: sockets do that). */
  ref?: boolean;
}

export interface MediaClockStats {
  senders: number;
  ticks: number;
  skippedTicks: number;
  senderErrors: number;
  lateness: LatencySummary;
  /** Time spent running one slot's senders (the clock's own work per wake-up). */
  slotRun: LatencySummary;
}

export interface ClockRegistration {
  unregister(): void;
}

export class MediaClock {
  readonly frameMs: number;
  readonly slotCount: number;
  private readonly slotMs: number;
  private readonly slotNs: bigint;
  private readonly catchUpSpacingNs: bigint;
  private readonly maxCatchUpNs: bigint;
  /** A tick this close to due runs now (timers are 1 ms coarse); its lateness records as 0. */
  private readonly earlyToleranceNs = 1_000_000n;
  private readonly ref: boolean;
  private readonly logger: Logger;
  private readonly slots: Set<ClockedSender>[];
  private readonly lateness = new LatencyHistogram({ bucketWidthMs: 0.1, rangeMs: 500 });
  private readonly slotRun = new LatencyHistogram({ bucketWidthMs: 0.05, rangeMs: 100 });
  private senderCount = 0;
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private running = false;
  private startNs = 0n;
  private tickIndex = 0;
  private lastRunNs = 0n;
  private ticks = 0;
  private skippedTicks = 0;
  private senderErrors = 0;
  private readonly wake = (): void => this.onWake();

  constructor(options: MediaClockOptions) {
    this.logger = options.logger;
    this.frameMs = options.frameMs ?? 20;
    this.slotCount = options.slotCount ?? 4;
    if (!Number.isInteger(this.slotCount) || this.slotCount < 1)
      throw new RangeError('slotCount must be ≥ 1');
    this.slotMs = this.frameMs / this.slotCount;
    this.slotNs = BigInt(Math.round(this.slotMs * 1e6));
    this.catchUpSpacingNs = BigInt(Math.round((options.catchUpSpacingMs ?? this.slotMs / 2) * 1e6));
    this.maxCatchUpNs = BigInt(Math.round((options.maxCatchUpMs ?? 100) * 1e6));
    this.ref = options.ref ?? false;
    this.slots = Array.from({ length: this.slotCount }, () => new Set<ClockedSender>());
  }

  /** Adds a sender to the least-loaded slot; the clock starts with its first sender. */
  register(sender: ClockedSender): ClockRegistration {
    let chosen = this.slots[0]!;
    for (const slot of this.slots) if (slot.size < chosen.size) chosen = slot;
    if (chosen.has(sender)) throw new Error('sender already registered');
    chosen.add(sender);
    this.senderCount++;
    if (!this.running) this.start();
    let registered = true;
    return {
      unregister: () => {
        if (!registered) return;
        registered = false;
        chosen.delete(sender);
        this.senderCount--;
        if (this.senderCount === 0) this.stop();
      },
    };
  }

  stats(): MediaClockStats {
    return {
      senders: this.senderCount,
      ticks: this.ticks,
      skippedTicks: this.skippedTicks,
      senderErrors: this.senderErrors,
      lateness: this.lateness.summary(),
      slotRun: this.slotRun.summary(),
    };
  }

  resetStats(): void {
    this.lateness.reset();
    this.slotRun.reset();
    this.ticks = 0;
    this.skippedTicks = 0;
    this.senderErrors = 0;
  }

  /** Stops the timer (sessions stay registered; the next registration restarts it). */
  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = null;
    this.immediate = null;
  }

  private start(): void {
    this.running = true;
    const now = process.hrtime.bigint();
    this.startNs = now + this.slotNs;
    this.tickIndex = 0;
    this.schedule(now);
  }

  private dueNs(index: number): bigint {
    return this.startNs + BigInt(index) * this.slotNs;
  }

  private onWake(): void {
    this.timer = null;
    this.immediate = null;
    if (!this.running) return;
    const now = process.hrtime.bigint();
    // A timer armed inside a long-running callback counts from the loop's stale cached time and
    // can fire at once: never run two slots closer than the catch-up spacing, whatever woke us.
    if (now - this.lastRunNs < this.catchUpSpacingNs - this.earlyToleranceNs) {
      this.scheduleAt(this.lastRunNs + this.catchUpSpacingNs, now);
      return;
    }
    let due = this.dueNs(this.tickIndex);
    if (now - due > this.maxCatchUpNs) {
      // Too far behind to replay: re-anchor on the latest slot boundary, keeping slot rotation.
      const behind = Number((now - due) / this.slotNs);
      this.skippedTicks += behind;
      this.tickIndex += behind;
      due = this.dueNs(this.tickIndex);
    }
    if (due <= now + this.earlyToleranceNs) {
      this.lateness.record(now > due ? Number(now - due) / 1e6 : 0);
      this.lastRunNs = now;
      this.runSlot(this.tickIndex % this.slotCount);
      this.tickIndex++;
      this.ticks++;
      const end = process.hrtime.bigint();
      this.slotRun.record(Number(end - now) / 1e6);
      if (this.running) this.schedule(end);
      return;
    }
    if (this.running) this.schedule(process.hrtime.bigint());
  }

  private schedule(now: bigint): void {
    const due = this.dueNs(this.tickIndex);
    // Behind schedule: the next slot follows after the catch-up spacing, not at once.
    this.scheduleAt(due > now ? due : this.lastRunNs + this.catchUpSpacingNs, now);
  }

  private scheduleAt(targetNs: bigint, now: bigint): void {
    const waitNs = targetNs - now;
    if (waitNs <= this.earlyToleranceNs) {
      this.immediate = setImmediate(this.wake);
      return;
    }
    // Timers have millisecond granularity and never fire early: wake at the floor; the early
    // tolerance lets the tick run then instead of costing a second wake-up.
    const waitMs = Math.max(1, Math.floor(Number(waitNs) / 1e6));
    const timer = setTimeout(this.wake, waitMs);
    if (!this.ref) timer.unref();
    this.timer = timer;
  }

  private runSlot(slotIndex: number): void {
    const slot = this.slots[slotIndex]!;
    for (const sender of slot) {
      try {
        sender.onFrame();
      } catch (error) {
        this.senderErrors++;
        if (this.senderErrors === 1 || this.senderErrors % 1000 === 0) {
          this.logger.error({ err: error, senderErrors: this.senderErrors }, 'media clock sender threw');
        }
      }
    }
  }
}
