import { sequenceDelta } from './rtpPacket.js';

/**
 * RFC 3550 §6.4.1 / appendix A.3 and A.8 receive statistics for one source: cumulative loss from
 * the extended highest sequence number, and interarrival jitter in timestamp units.
 */
export class ReceiveStats {
  private initialized = false;
  private baseSeq = 0;
  private maxSeq = 0;
  private cycles = 0;
  private received = 0;
  private jitter = 0;
  private lastTransit = Number.NaN;
  private expectedPrior = 0;
  private receivedPrior = 0;

  constructor(private readonly clockRateHz: number) {}

  /** Counts a packet that was not a duplicate. */
  onPacket(sequenceNumber: number): void {
    if (!this.initialized) {
      this.initialized = true;
      this.baseSeq = sequenceNumber;
      this.maxSeq = sequenceNumber;
    } else if (sequenceDelta(sequenceNumber, this.maxSeq) > 0) {
      if (sequenceNumber < this.maxSeq) this.cycles += 0x10000;
      this.maxSeq = sequenceNumber;
    }
    this.received++;
  }

  /** Updates jitter from an audio packet's RTP timestamp and its arrival time. */
  onTiming(rtpTimestamp: number, arrivalMs: number): void {
    const transit = (arrivalMs * this.clockRateHz) / 1000 - rtpTimestamp;
    if (!Number.isNaN(this.lastTransit)) {
      let d = transit - this.lastTransit;
      // Timestamps wrap at 2^32: bring the difference back into range.
      if (d > 2 ** 31) d -= 2 ** 32;
      else if (d < -(2 ** 31)) d += 2 ** 32;
      this.jitter += (Math.abs(d) - this.jitter) / 16;
    }
    this.lastTransit = transit;
  }

  get packetsReceived(): number {
    return this.received;
  }

  get expected(): number {
    return this.initialized ? this.cycles + this.maxSeq - this.baseSeq + 1 : 0;
  }

  /** Cumulative packets lost (never negative; late packets count as received). */
  get lost(): number {
    return Math.max(0, this.expected - this.received);
  }

  get jitterMs(): number {
    return (this.jitter * 1000) / this.clockRateHz;
  }

  /** The extended highest sequence number received (cycles ‖ sequence number). */
  get extendedHighestSeq(): number {
    return (this.cycles + this.maxSeq) >>> 0;
  }

  /** Interarrival jitter in timestamp units, as a report block carries it. */
  get jitterUnits(): number {
    return Math.round(this.jitter);
  }

  /**
   * The fraction lost since the last call (RFC 3550 appendix A.3), in 1/256ths as a report block
   * carries it (0 when more arrived than expected: duplicates or a restart).
   */
  takeFractionLost(): number {
    const expectedInterval = this.expected - this.expectedPrior;
    const receivedInterval = this.received - this.receivedPrior;
    this.expectedPrior = this.expected;
    this.receivedPrior = this.received;
    const lostInterval = expectedInterval - receivedInterval;
    return expectedInterval <= 0 || lostInterval <= 0
      ? 0
      : Math.min(255, Math.floor((lostInterval * 256) / expectedInterval));
  }

  reset(): void {
    this.expectedPrior = 0;
    this.receivedPrior = 0;
    this.initialized = false;
    this.cycles = 0;
    this.received = 0;
    this.jitter = 0;
    this.lastTransit = Number.NaN;
  }
}
