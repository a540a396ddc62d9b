import { samplesPerMs } from './g711.js';

/** How much of one `play()` call reached the wire. */
export interface PlaybackResult {
  /** Audio of this chunk actually sent, in ms (rounded down to whole samples / 8). */
  playedMs: number;
  durationMs: number;
  /** True when `clear()` or `close()` cut it short. */
  interrupted: boolean;
}

interface QueuedChunk {
  samples: Int16Array;
  offset: number;
  resolve: (result: PlaybackResult) => void;
}

/**
 * The agent's speech waiting to be sent, as 8 kHz Int16 samples, consumed one frame per clock tick.
 * Chunks are joined seamlessly (a frame may span two chunks); the last frame is padded with
 * silence. Each chunk's promise settles when its last sample is sent, or when it is cleared.
 */
export class OutgoingAudioQueue {
  private readonly chunks: QueuedChunk[] = [];
  private head = 0;
  private queuedSamples = 0;

  get queuedMs(): number {
    return this.queuedSamples / samplesPerMs;
  }

  get isEmpty(): boolean {
    return this.queuedSamples === 0;
  }

  enqueue(samples: Int16Array): Promise<PlaybackResult> {
    return new Promise<PlaybackResult>((resolve) => {
      if (samples.length === 0) {
        resolve({ playedMs: 0, durationMs: 0, interrupted: false });
        return;
      }
      this.chunks.push({ samples, offset: 0, resolve });
      this.queuedSamples += samples.length;
    });
  }

  /**
   * Fills `frame` with the next samples (zero-padded). Returns how many came from the queue
   * (0 when idle: `frame` is then untouched).
   */
  takeFrame(frame: Int16Array): number {
    if (this.queuedSamples === 0) return 0;
    let filled = 0;
    while (filled < frame.length && this.head < this.chunks.length) {
      const chunk = this.chunks[this.head]!;
      const count = Math.min(frame.length - filled, chunk.samples.length - chunk.offset);
      frame.set(chunk.samples.subarray(chunk.offset, chunk.offset + count), filled);
      chunk.offset += count;
      filled += count;
      this.queuedSamples -= count;
      if (chunk.offset === chunk.samples.length) {
        this.head++;
        const durationMs = chunk.samples.length / samplesPerMs;
        chunk.resolve({ playedMs: durationMs, durationMs, interrupted: false });
      }
    }
    if (filled < frame.length) frame.fill(0, filled);
    if (this.head > 32 || this.head === this.chunks.length) {
      this.chunks.splice(0, this.head);
      this.head = 0;
    }
    return filled;
  }

  /** Drops everything queued; returns the ms discarded. Pending promises settle as interrupted. */
  clear(): number {
    let discarded = 0;
    for (let i = this.head; i < this.chunks.length; i++) {
      const chunk = this.chunks[i]!;
      discarded += chunk.samples.length - chunk.offset;
      chunk.resolve({
        playedMs: chunk.offset / samplesPerMs,
        durationMs: chunk.samples.length / samplesPerMs,
        interrupted: true,
      });
    }
    this.chunks.length = 0;
    this.head = 0;
    this.queuedSamples = 0;
    return discarded / samplesPerMs;
  }
}
