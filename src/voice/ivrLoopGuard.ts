import { normalizeSpeech } from './brains/dialogScript.js';

/**
 * Notices a phone menu going round in circles: the same prompt (a recording, so the same words
 * each time; ≥ 70 % of its distinct words shared, at least 4 of them) heard `maxRepeats` times means the
 * agent is not getting through, and the call should end (`ivr_loop`) rather than run up minutes.
 * Short answers ("yes", "hello?") never count: people repeat those.
 */
export class IvrLoopGuard {
  private readonly heard: Array<{ words: ReadonlySet<string>; count: number }> = [];

  /** `maxRepeats` 0: off. */
  constructor(private readonly maxRepeats: number) {}

  /** Notes what the callee said; true once one prompt has been heard `maxRepeats` times. */
  note(text: string): boolean {
    if (this.maxRepeats === 0) return false;
    const words = new Set(normalizeSpeech(text).split(' ').filter(Boolean));
    if (words.size < 4) return false;
    const same = this.heard.find((entry) => overlap(entry.words, words) >= 0.7);
    if (!same) {
      this.heard.push({ words, count: 1 });
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
