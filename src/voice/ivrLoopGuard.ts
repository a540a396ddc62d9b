import { normalizeSpeech } from './brains/dialogScript.js';

/** The level of one frame of audio in dB relative to full scale (silence: −100). */
export function frameLevelDb(samples: Int16Array): number {
  let energy = 0;
  for (const sample of samples) energy += sample * sample;
  const meanSquare = samples.length > 0 ? energy / samples.length : 0;
  return meanSquare > 0 ? Math.max(-100, 10 * Math.log10(meanSquare / 32768 ** 2)) : -100;
}

/** A prompt's audio shorter than this (frames of 20 ms) is never compared: an answer, not a menu. */
const minPromptFrames = 75;
/** How far apart two hearings of one recording may start (the speech detector's onset varies). */
const maxLagFrames = 20;
/** The loudness contours of two hearings of one recording correlate at least this much. */
const sameRecordingCorrelation = 0.85;
/** Frames quieter than the loudest one by more than this are the line's silence around the words. */
const speechSpanDb = 35;

/**
 * Notices a phone menu going round in circles: the same prompt heard `maxRepeats` times means the
 * agent is not getting through, and the call should end (`ivr_loop`) rather than run up minutes.
 * "The same prompt" is judged on the audio as the turn ends — a menu is a recording, so its
 * loudness contour (20 ms frame levels) repeats almost exactly, whatever the recogniser makes of it
 * (the offline one writes each hearing a little differently, and takes its time) — and, for a turn
 * too short to compare that way, on the words once recognised (≥ 70 % of the distinct words
 * shared, at least 4 of them). Short answers ("yes", "hello?") never count: people repeat those.
 */
export class IvrLoopGuard {
  private readonly contours: Array<{ contour: readonly number[]; count: number }> = [];
  private readonly phrases: Array<{ words: ReadonlySet<string>; count: number }> = [];

  /** `maxRepeats` 0: off. */
  constructor(private readonly maxRepeats: number) {}

  /**
   * A turn ended, with the level of each of its frames (dB): `tripped` once one prompt has been
   * heard `maxRepeats` times, `noted` when the audio counted, `words` when the turn is too short to
   * compare by ear (its words decide, `noteWords`).
   */
  noteAudio(levelsDb: readonly number[]): 'tripped' | 'noted' | 'words' {
    if (this.maxRepeats === 0) return 'noted';
    const contour = speechSpan(levelsDb);
    if (contour.length < minPromptFrames) return 'words';
    const same = this.contours.find((entry) => sameRecording(entry.contour, contour));
    if (!same) {
      this.contours.push({ contour, count: 1 });
      return 'noted';
    }
    same.count++;
    return same.count >= this.maxRepeats ? 'tripped' : 'noted';
  }

  /** What the callee said, for a turn `noteAudio` left to its words; true once tripped. */
  noteWords(text: string): boolean {
    if (this.maxRepeats === 0) return false;
    const words = new Set(normalizeSpeech(text).split(' ').filter(Boolean));
    if (words.size < 4) return false;
    const same = this.phrases.find((entry) => overlap(entry.words, words) >= 0.7);
    if (!same) {
      this.phrases.push({ words, count: 1 });
      return false;
    }
    same.count++;
    return same.count >= this.maxRepeats;
  }
}

/** Shared words over all words (Jaccard). */
function overlap(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let shared = 0;
  for (const word of a) if (b.has(word)) shared++;
  return shared / (a.size + b.size - shared);
}

/** The levels from the first to the last frame of speech (the silence around it cut off). */
function speechSpan(levelsDb: readonly number[]): number[] {
  if (levelsDb.length === 0) return [];
  const loudest = Math.max(...levelsDb);
  const floor = Math.max(loudest - speechSpanDb, -70);
  const first = levelsDb.findIndex((level) => level >= floor);
  if (first < 0) return [];
  let last = levelsDb.length - 1;
  while (last > first && (levelsDb[last] as number) < floor) last--;
  return levelsDb.slice(first, last + 1).map((level) => Math.max(level, floor));
}

/**
 * Two contours are one recording heard twice: about as long (within 20 %), and their levels
 * correlate (Pearson) at some small offset over the length of the shorter one.
 */
function sameRecording(a: readonly number[], b: readonly number[]): boolean {
  if (a.length < minPromptFrames || b.length < minPromptFrames) return false;
  const [shorter, longer] = a.length <= b.length ? [a, b] : [b, a];
  if (shorter.length < longer.length * 0.8) return false;
  const span = longer.length - shorter.length;
  for (let lag = -maxLagFrames; lag <= span + maxLagFrames; lag++) {
    if (correlationAt(shorter, longer, lag) >= sameRecordingCorrelation) return true;
  }
  return false;
}

/** Pearson correlation of `shorter[i]` with `longer[i + lag]` where both exist (≥ 90 % of it). */
function correlationAt(shorter: readonly number[], longer: readonly number[], lag: number): number {
  const start = Math.max(0, -lag);
  const end = Math.min(shorter.length, longer.length - lag);
  const count = end - start;
  if (count < shorter.length * 0.9) return -1;
  let sumA = 0;
  let sumB = 0;
  for (let i = start; i < end; i++) {
    sumA += shorter[i] as number;
    sumB += longer[i + lag] as number;
  }
  const meanA = sumA / count;
  const meanB = sumB / count;
  let covariance = 0;
  let varianceA = 0;
  let varianceB = 0;
  for (let i = start; i < end; i++) {
    const da = (shorter[i] as number) - meanA;
    const db = (longer[i + lag] as number) - meanB;
    covariance += da * db;
    varianceA += da * da;
    varianceB += db * db;
  }
  return varianceA > 0 && varianceB > 0 ? covariance / Math.sqrt(varianceA * varianceB) : -1;
}
