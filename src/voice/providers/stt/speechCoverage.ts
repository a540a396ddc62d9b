/**
 * How much of an utterance's speech the recognizer's words account for: the offline grammar's
 * "I didn't catch that". Forced to choose among the expected phrases, pocketsphinx answers speech
 * outside them ("who is calling", "how did you get my number") with a short phrase ("no") and
 * files the rest of the speech under silence. An answer that really is a phrase has its loud frames
 * inside the phrase's words. Measured in docs/benchmarks.md ("Grammar rejection").
 */

/** The recognizer's frame: 10 ms, 160 samples at its 16 kHz. */
export const recognizerFrameSamples = 160;

/** A recognized word's span in recognizer frames (inclusive), as pocketsphinx's segmentation gives it. */
export interface WordSpan {
  word: string;
  startFrame: number;
  endFrame: number;
}

export interface SpeechCoverageOptions {
  /** A frame is speech when its RMS is above the utterance's loudest frame divided by this. */
  peakToSpeechRatio: number;
  /** Speech frames this close to a word count as the word's (recognizers cut word edges short). */
  marginFrames: number;
}

/** 20 dB below the loudest frame, words widened by 30 ms: chosen on the tuning set (benchmarks). */
export const defaultSpeechCoverageOptions: SpeechCoverageOptions = { peakToSpeechRatio: 10, marginFrames: 3 };

/** Silence, sentence marks and the model's fillers (`[NOISE]`, `+BREATH+`) are no words. */
export function isFillerWord(word: string): boolean {
  return word === '<sil>' || word === '<s>' || word === '</s>' || /^[[+]/.test(word);
}

/** Per-frame RMS of the audio a recognizer heard, kept as it arrives (a float per 10 ms). */
export class FrameEnergyMeter {
  readonly #rms: number[] = [];
  #sumOfSquares = 0;
  #samplesInFrame = 0;

  push(samples: Int16Array): void {
    for (const sample of samples) {
      this.#sumOfSquares += sample * sample;
      this.#samplesInFrame += 1;
      if (this.#samplesInFrame === recognizerFrameSamples) {
        this.#rms.push(Math.sqrt(this.#sumOfSquares / recognizerFrameSamples));
        this.#sumOfSquares = 0;
        this.#samplesInFrame = 0;
      }
    }
  }

  /** The RMS of each whole frame so far. */
  frames(): readonly number[] {
    return this.#rms;
  }
}

/**
 * The share (0..1) of the utterance's speech frames that lie within `marginFrames` of a recognized
 * word. 1 when nothing in the audio stands out as speech (nothing for words to miss).
 */
export function speechCoverage(
  frameRms: readonly number[],
  words: readonly WordSpan[],
  options: SpeechCoverageOptions = defaultSpeechCoverageOptions,
): number {
  let peak = 0;
  for (const rms of frameRms) peak = Math.max(peak, rms);
  if (peak === 0) return 1;
  const threshold = peak / options.peakToSpeechRatio;
  const spoken = words.filter((span) => !isFillerWord(span.word));
  let speechFrames = 0;
  let covered = 0;
  frameRms.forEach((rms, frame) => {
    if (rms <= threshold) return;
    speechFrames += 1;
    const nearWord = spoken.some(
      (span) =>
        frame >= span.startFrame - options.marginFrames && frame <= span.endFrame + options.marginFrames,
    );
    if (nearWord) covered += 1;
  });
  return speechFrames === 0 ? 1 : covered / speechFrames;
}
