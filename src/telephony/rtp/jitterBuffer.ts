import { sequenceDelta } from './rtpPacket.js';

/**
 * Receive jitter buffer for one RTP stream of fixed-length frames (20 ms G.711 here). Packets are
 * slotted by sequence number in a ring; playout pulls one frame per clock tick once
 * `targetDepthFrames` are buffered (or have had time to arrive). Duplicates and packets whose turn
 * has passed are dropped and counted; a missing frame at its turn is reported `'lost'` so the
 * caller conceals it; depth is bounded by `maxDepthFrames` (older frames are skipped to make room).
 *
 * `pop()` returns the payload, `'lost'` (conceal this frame) or `'waiting'` (no stream yet, or
 * re-buffering after an underrun: nothing to play and no loss to count).
 *
 * Adaptive depth: an underrun makes the buffer deeper by the frames it re-buffers (the stream keeps
 * the delay it lost). To come back down, `push` and `pop` are given the time: when every frame of
 * the last `shrink.windowFrames` waited at least a frame plus `shrink.marginMs` between its arrival
 * and its turn, a frame is surplus, and the next one `pop` is told may be dropped (a quiet one —
 * the caller decides) is skipped, so playout is a frame closer to the stream. On a steady link the
 * buffer settles at one frame of waiting; a late or lost packet starts the measurement again.
 */
export type JitterFrame = Uint8Array | 'lost' | 'waiting';
export type JitterPushResult = 'accepted' | 'duplicate' | 'late' | 'reset';

export interface JitterBufferOptions {
  /** Frames buffered before playout starts or resumes after an underrun (default 3 = 60 ms). */
  targetDepthFrames?: number;
  /** Most frames held ahead of playout (default 10 = 200 ms). */
  maxDepthFrames?: number;
  /** A packet this many sequence numbers away from playout restarts the stream (default 100). */
  resetDistance?: number;
  /** The duration of one frame (default 20 ms): the unit the shrink rule measures waits in. */
  frameMs?: number;
  /** When a frame is surplus (see the class); `false` keeps the depth it has (a fixed buffer). */
  shrink?: { windowFrames?: number; marginMs?: number } | false;
}

export interface JitterBufferStats {
  buffered: number;
  played: number;
  lost: number;
  late: number;
  duplicates: number;
  overflowDropped: number;
  underruns: number;
  resets: number;
  /** Surplus frames skipped to bring playout closer to the stream. */
  shrinks: number;
}

export class JitterBuffer {
  readonly targetDepthFrames: number;
  readonly maxDepthFrames: number;
  private readonly resetDistance: number;
  private readonly mask: number;
  private readonly payloads: (Uint8Array | undefined)[];
  private readonly slotSeq: Int32Array;
  private readonly playedSeq: Int32Array;
  private initialized = false;
  private playing = false;
  private everPlayed = false;
  private nextSeq = 0;
  private buffered = 0;
  private waitingTicks = 0;
  private readonly counters = {
    played: 0,
    lost: 0,
    late: 0,
    duplicates: 0,
    overflowDropped: 0,
    underruns: 0,
    shrinks: 0,
  };
  private resets = 0;
  private readonly arrivedAtMs: Float64Array;
  private readonly frameMs: number;
  private readonly shrinkWindowFrames: number;
  private readonly shrinkMarginMs: number;
  /** Frames played in the current measurement window, and the shortest wait among them. */
  private windowFrames = 0;
  private windowMinWaitMs = Number.POSITIVE_INFINITY;
  private surplus = false;

  constructor(options: JitterBufferOptions = {}) {
    this.targetDepthFrames = Math.max(1, options.targetDepthFrames ?? 3);
    this.maxDepthFrames = Math.max(this.targetDepthFrames + 1, options.maxDepthFrames ?? 10);
    this.resetDistance = Math.max(this.maxDepthFrames * 2, options.resetDistance ?? 100);
    let capacity = 16;
    while (capacity < this.maxDepthFrames * 2) capacity *= 2;
    this.mask = capacity - 1;
    this.payloads = new Array<Uint8Array | undefined>(capacity).fill(undefined);
    this.slotSeq = new Int32Array(capacity).fill(-1);
    this.playedSeq = new Int32Array(capacity).fill(-1);
    this.arrivedAtMs = new Float64Array(capacity).fill(Number.NaN);
    this.frameMs = options.frameMs ?? 20;
    const shrink = options.shrink ?? {};
    // A window of 0 frames never closes: `shrink: false` is a fixed buffer.
    this.shrinkWindowFrames = shrink === false ? 0 : Math.max(1, shrink.windowFrames ?? 100);
    this.shrinkMarginMs = shrink === false ? 0 : Math.max(0, shrink.marginMs ?? 10);
  }

  /**
   * Offers a received packet. `payload` is kept by reference: do not reuse its memory. `arrivedAtMs`
   * (any monotonic clock, the one `pop` is given) lets the buffer measure how long frames wait.
   */
  push(sequenceNumber: number, payload: Uint8Array, arrivedAtMs = Number.NaN): JitterPushResult {
    const seq = sequenceNumber & 0xffff;
    let result: JitterPushResult = 'accepted';
    if (!this.initialized) {
      this.initialized = true;
      this.nextSeq = seq;
    }
    let delta = sequenceDelta(seq, this.nextSeq);
    if (delta >= this.resetDistance || delta <= -this.resetDistance) {
      this.restart(seq);
      delta = 0;
      result = 'reset';
    }
    if (delta < 0) {
      const slot = seq & this.mask;
      if (this.playedSeq[slot] === seq) {
        this.counters.duplicates++;
        return 'duplicate';
      }
      if (this.everPlayed || -delta + this.span() > this.maxDepthFrames) {
        this.counters.late++;
        this.restartWindow();
        return 'late';
      }
      // Reordered before playout ever began: start earlier.
      this.nextSeq = seq;
      delta = 0;
    }
    if (delta >= this.maxDepthFrames) this.skipTo((seq - this.maxDepthFrames + 1) & 0xffff);
    const slot = seq & this.mask;
    if (this.slotSeq[slot] === seq) {
      this.counters.duplicates++;
      return 'duplicate';
    }
    if (this.payloads[slot] !== undefined) this.buffered--; // stale occupant from a skipped range
    this.payloads[slot] = payload;
    this.slotSeq[slot] = seq;
    this.arrivedAtMs[slot] = arrivedAtMs;
    this.buffered++;
    return result;
  }

  /**
   * Pulls the frame whose turn it is (call once per frame period, with the time when the buffer is
   * to adapt). When a frame is surplus and `droppable` says this one may go, it is skipped and the
   * next one is played in its place.
   */
  pop(nowMs = Number.NaN, droppable?: (payload: Uint8Array) => boolean): JitterFrame {
    const frame = this.take(nowMs);
    if (!this.surplus || typeof frame === 'string' || !droppable || !this.holdsNext()) return frame;
    if (!droppable(frame)) return frame;
    this.restartWindow();
    this.counters.shrinks++;
    this.counters.played--;
    return this.take(nowMs);
  }

  private take(nowMs: number): JitterFrame {
    if (!this.initialized) return 'waiting';
    if (!this.playing) {
      this.waitingTicks++;
      const ready =
        this.buffered >= this.targetDepthFrames ||
        (this.buffered > 0 && this.waitingTicks >= this.targetDepthFrames);
      if (!ready) return 'waiting';
      this.playing = true;
    }
    if (this.buffered === 0) {
      this.playing = false;
      this.waitingTicks = 0;
      this.counters.underruns++;
      this.restartWindow();
      return 'waiting';
    }
    const seq = this.nextSeq;
    const slot = seq & this.mask;
    this.nextSeq = (seq + 1) & 0xffff;
    this.everPlayed = true;
    const payload = this.payloads[slot];
    if (payload !== undefined && this.slotSeq[slot] === seq) {
      this.payloads[slot] = undefined;
      this.slotSeq[slot] = -1;
      this.playedSeq[slot] = seq;
      this.buffered--;
      this.counters.played++;
      this.measureWait(nowMs - this.arrivedAtMs[slot]!);
      return payload;
    }
    this.counters.lost++;
    this.restartWindow();
    return 'lost';
  }

  /** Counts one played frame's wait; a window whose every frame waited long enough has a surplus. */
  private measureWait(waitedMs: number): void {
    if (this.shrinkWindowFrames === 0) return;
    if (Number.isNaN(waitedMs)) {
      this.restartWindow();
      return;
    }
    if (waitedMs < this.windowMinWaitMs) this.windowMinWaitMs = waitedMs;
    if (++this.windowFrames < this.shrinkWindowFrames) return;
    this.surplus = this.windowMinWaitMs >= this.frameMs + this.shrinkMarginMs;
    this.windowFrames = 0;
    this.windowMinWaitMs = Number.POSITIVE_INFINITY;
  }

  private restartWindow(): void {
    this.surplus = false;
    this.windowFrames = 0;
    this.windowMinWaitMs = Number.POSITIVE_INFINITY;
  }

  /** The frame after the one just played is here (skipping to it loses nothing). */
  private holdsNext(): boolean {
    return this.slotSeq[this.nextSeq & this.mask] === this.nextSeq;
  }

  stats(): JitterBufferStats {
    return { buffered: this.buffered, ...this.counters, resets: this.resets };
  }

  /** Forgets the stream (e.g. the sender's SSRC changed). Counters are kept. */
  restart(nextSequenceNumber?: number): void {
    this.payloads.fill(undefined);
    this.slotSeq.fill(-1);
    this.playedSeq.fill(-1);
    this.buffered = 0;
    this.playing = false;
    this.everPlayed = false;
    this.waitingTicks = 0;
    this.restartWindow();
    this.initialized = nextSequenceNumber !== undefined;
    this.nextSeq = (nextSequenceNumber ?? 0) & 0xffff;
    this.resets++;
  }

  /** Highest buffered sequence distance ahead of playout, + 1 (0 when empty). */
  private span(): number {
    if (this.buffered === 0) return 0;
    for (let d = this.mask; d >= 0; d--) {
      const seq = (this.nextSeq + d) & 0xffff;
      if (this.slotSeq[seq & this.mask] === seq) return d + 1;
    }
    return 0;
  }

  /** Moves playout forward to `seq`, dropping what was buffered before it. */
  private skipTo(seq: number): void {
    while (this.nextSeq !== seq) {
      const slot = this.nextSeq & this.mask;
      if (this.slotSeq[slot] === this.nextSeq) {
        this.payloads[slot] = undefined;
        this.slotSeq[slot] = -1;
        this.buffered--;
        this.counters.overflowDropped++;
      } else {
        this.counters.lost++;
      }
      this.nextSeq = (this.nextSeq + 1) & 0xffff;
    }
  }
}
