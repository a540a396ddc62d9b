import { describe, expect, it } from 'vitest';
import { beepTone, frameRms, replyTone, speechLikeTone } from './sandboxAudio.js';
import { SpeechPauseDetector } from './speechPauseDetector.js';

const frame = (level: number) => new Int16Array(160).map((_, i) => (i % 2 === 0 ? level : -level));

function feed(detector: SpeechPauseDetector, frames: Int16Array[]): number[] {
  const ends: number[] = [];
  frames.forEach((samples, index) => {
    if (detector.push(samples)) ends.push(index);
  });
  return ends;
}

describe('SpeechPauseDetector', () => {
  it('reports a turn once, when speech is followed by the full pause', () => {
    const detector = new SpeechPauseDetector({ pauseMs: 700 });
    const speech = Array.from({ length: 10 }, () => frame(3_000));
    const pause = Array.from({ length: 40 }, () => frame(0));
    // 200 ms of speech, then 800 ms of silence: the turn ends at the 35th silent frame (700 ms).
    expect(feed(detector, [...speech, ...pause])).toEqual([10 + 34]);
  });

  it('does not report a pause shorter than pauseMs, and a resumed turn is one turn', () => {
    const detector = new SpeechPauseDetector({ pauseMs: 700 });
    const speech = Array.from({ length: 10 }, () => frame(3_000));
    const shortPause = Array.from({ length: 30 }, () => frame(0));
    expect(feed(detector, [...speech, ...shortPause, ...speech])).toEqual([]);
    expect(detector.inTurn).toBe(true);
    expect(
      feed(
        detector,
        Array.from({ length: 35 }, () => frame(0)),
      ),
    ).toEqual([34]);
  });

  it('ignores silence, quiet noise and a click shorter than minSpeechMs', () => {
    const detector = new SpeechPauseDetector({ pauseMs: 100 });
    const quiet = Array.from({ length: 20 }, () => frame(100));
    const click = [frame(10_000), frame(10_000)];
    expect(feed(detector, [...quiet, ...click, ...quiet])).toEqual([]);
    expect(detector.inTurn).toBe(false);
  });
});

describe('sandbox tones', () => {
  it('have the requested lengths and levels loud enough to count as speech', () => {
    expect(replyTone(400)).toHaveLength(3_200);
    expect(speechLikeTone(2_500)).toHaveLength(20_000);
    expect(beepTone(500)).toHaveLength(4_000);
    expect(frameRms(replyTone(400).subarray(800, 960))).toBeGreaterThan(1_000);
    expect(frameRms(beepTone(500).subarray(800, 960))).toBeGreaterThan(1_000);
    expect(frameRms(new Int16Array(160))).toBe(0);
  });
});
