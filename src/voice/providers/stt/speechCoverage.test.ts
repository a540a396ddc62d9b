import { describe, expect, it } from 'vitest';
import { FrameEnergyMeter, isFillerWord, recognizerFrameSamples, speechCoverage } from './speechCoverage.js';

/** Frame RMS values: `loud` frames at 3000 between quiet ones at 50. */
function frames(count: number, loudFrames: readonly number[]): number[] {
  const loud = new Set(loudFrames);
  return Array.from({ length: count }, (_, frame) => (loud.has(frame) ? 3000 : 50));
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => from + index);

describe('speechCoverage', () => {
  it('is 1 when the words hold all the speech and drops with speech left under silence', () => {
    const rms = frames(100, range(20, 59));
    expect(speechCoverage(rms, [{ word: 'no', startFrame: 20, endFrame: 59 }])).toBe(1);
    // "who is this" heard as "no" over its first quarter, the rest filed under silence.
    const short = [
      { word: '<sil>', startFrame: 0, endFrame: 19 },
      { word: 'no', startFrame: 20, endFrame: 29 },
      { word: '<sil>', startFrame: 30, endFrame: 99 },
    ];
    expect(speechCoverage(rms, short)).toBeCloseTo(13 / 40, 5);
  });

  it('forgives word edges within the margin, not beyond', () => {
    const rms = frames(100, range(20, 59));
    const cutShort = [{ word: 'sure', startFrame: 23, endFrame: 56 }];
    expect(speechCoverage(rms, cutShort, { peakToSpeechRatio: 10, marginFrames: 3 })).toBe(1);
    expect(speechCoverage(rms, cutShort, { peakToSpeechRatio: 10, marginFrames: 0 })).toBeCloseTo(34 / 40, 5);
  });

  it('counts fillers and silence as no words, and a frame as speech only above the peak ratio', () => {
    const rms = frames(60, range(10, 29));
    expect(speechCoverage(rms, [{ word: '[NOISE]', startFrame: 10, endFrame: 29 }])).toBe(0);
    expect(speechCoverage(rms, [{ word: '+BREATH+', startFrame: 10, endFrame: 29 }])).toBe(0);
    // Frames at a fifth of the peak are speech at ratio 10, not at ratio 4.
    const soft = rms.map((value, frame) => (frame >= 40 && frame < 50 ? 600 : value));
    const words = [{ word: 'yes', startFrame: 10, endFrame: 29 }];
    expect(speechCoverage(soft, words, { peakToSpeechRatio: 10, marginFrames: 0 })).toBeCloseTo(20 / 30, 5);
    expect(speechCoverage(soft, words, { peakToSpeechRatio: 4, marginFrames: 0 })).toBe(1);
  });

  it('is 1 for silence: there is no speech for words to miss', () => {
    expect(speechCoverage(new Array(50).fill(0), [])).toBe(1);
    expect(speechCoverage([], [])).toBe(1);
  });
});

describe('FrameEnergyMeter', () => {
  it('keeps the RMS of each whole 10 ms frame across pushes of any size', () => {
    const meter = new FrameEnergyMeter();
    const loud = new Int16Array(recognizerFrameSamples).fill(1000);
    const quiet = new Int16Array(recognizerFrameSamples + 40).fill(-10);
    meter.push(loud.subarray(0, 70));
    meter.push(loud.subarray(70));
    meter.push(quiet);
    expect(meter.frames()).toEqual([1000, 10]);
  });
});

describe('isFillerWord', () => {
  it('tells silence, sentence marks and noise fillers from words', () => {
    for (const filler of ['<sil>', '<s>', '</s>', '[NOISE]', '+BREATH+'])
      expect(isFillerWord(filler)).toBe(true);
    for (const word of ['no', 'monday(2)', "don't"]) expect(isFillerWord(word)).toBe(false);
  });
});
