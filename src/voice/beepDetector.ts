import { goertzelCoefficient, goertzelPower } from '../telephony/rtp/goertzel.js';

/**
 * Answering-machine beep detection: a steady tone (around 1 kHz by default, anywhere from 850 to
 * 1,500 Hz in practice) that holds most of the frame's energy for a while. Goertzel filters on a
 * few candidate frequencies, 20 ms frames at 8 kHz.
 */
export class BeepDetector {
  private toneFrames = 0;
  private readonly coefficients: number[];
  private readonly minFrames: number;

  constructor(options: { frequenciesHz?: number[]; minDurationMs?: number } = {}) {
    const frequencies = options.frequenciesHz ?? [850, 950, 1000, 1100, 1400];
    this.coefficients = frequencies.map(goertzelCoefficient);
    this.minFrames = Math.ceil((options.minDurationMs ?? 240) / 20);
  }

  /** The last frame was part of a steady tone (a beep that is still sounding). */
  get toneOn(): boolean {
    return this.toneFrames > 0;
  }

  /** Feeds one frame; true once a beep has lasted the minimum duration. */
  push(frame: Int16Array): boolean {
    let energy = 0;
    for (let i = 0; i < frame.length; i++) energy += (frame[i] as number) ** 2;
    if (energy / frame.length < 250_000) {
      this.toneFrames = 0;
      return false;
    }
    let best = 0;
    for (const coefficient of this.coefficients) best = Math.max(best, goertzelPower(frame, coefficient));
    // A pure tone's Goertzel power is about energy * N / 2; speech spreads its energy far wider.
    const toneShare = best / ((energy * frame.length) / 2);
    this.toneFrames = toneShare > 0.6 ? this.toneFrames + 1 : 0;
    return this.toneFrames >= this.minFrames;
  }
}
