import { firstAudibleIndex } from '../telephony/rtp/audibleSamples.js';

/** A barge-in's stop is measured over the agent frames sent this long after the decision. */
const watchMs = 200;

/**
 * How long after each decision to yield the agent's audio really stopped, measured on the frames
 * sent: the end of the last audible frame within 200 ms of the decision (0 when none followed it).
 * Times are `performance.now()` milliseconds.
 */
export class BargeInStopWatch {
  /** One figure per barge-in, in order. */
  readonly stopsMs: number[] = [];
  private watch: { decidedAtMs: number; stoppedAtMs: number } | null = null;

  /** The agent was told to yield now. */
  decided(nowMs: number): void {
    this.close();
    this.watch = { decidedAtMs: nowMs, stoppedAtMs: nowMs };
  }

  /** A frame the agent sent. */
  agentFrame(samples: Int16Array, nowMs: number): void {
    const watch = this.watch;
    if (!watch) return;
    if (firstAudibleIndex(samples) >= 0) watch.stoppedAtMs = nowMs + 20;
    this.closeAfterWindow(nowMs);
  }

  /** Time passed (a received frame): closes the measurement once its window is over. */
  closeAfterWindow(nowMs: number): void {
    if (this.watch && nowMs - this.watch.decidedAtMs >= watchMs) this.close();
  }

  /** Notes the open measurement (the call ended, or its window is over). */
  close(): void {
    const watch = this.watch;
    if (!watch) return;
    this.watch = null;
    this.stopsMs.push(Math.max(0, Math.round(watch.stoppedAtMs - watch.decidedAtMs)));
  }
}
