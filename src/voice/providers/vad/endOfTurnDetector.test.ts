import { describe, expect, it } from 'vitest';
import { EndOfTurnDetector, type TurnEvent } from './endOfTurnDetector.js';

/** Feeds a pattern like '..SSSS..' (S speech, . silence), one character per frame. */
function run(detector: EndOfTurnDetector, pattern: string): TurnEvent[] {
  const events: TurnEvent[] = [];
  for (const character of pattern) {
    const event = detector.pushDecision(character === 'S');
    if (event) events.push(event);
  }
  return events;
}

describe('EndOfTurnDetector', () => {
  const options = { frameDurationMs: 20, silenceWindowMs: 100, minSpeechDurationMs: 60 };

  it('reports speech start once speech has lasted the minimum, dated at its first frame', () => {
    const detector = new EndOfTurnDetector(options);
    expect(run(detector, '..SS')).toEqual([]);
    expect(run(detector, 'S')).toEqual([{ type: 'speech_start', speechStartMs: 40, detectedAtMs: 100 }]);
    expect(detector.isSpeaking).toBe(true);
  });

  it('ignores speech shorter than the minimum (a click)', () => {
    const detector = new EndOfTurnDetector(options);
    expect(run(detector, '.SS..S.SS.........')).toEqual([]);
    expect(detector.isSpeaking).toBe(false);
  });

  it('ends the turn after the silence window, not before, and not on shorter pauses', () => {
    const detector = new EndOfTurnDetector(options);
    const events = run(detector, 'SSSS....SSS.....');
    expect(events).toEqual([
      { type: 'speech_start', speechStartMs: 0, detectedAtMs: 60 },
      { type: 'speech_end', speechStartMs: 0, speechEndMs: 220, detectedAtMs: 320 },
    ]);
    expect(detector.isSpeaking).toBe(false);
  });

  it("waits this turn's own window once the words say how long, shorter or longer than the default", () => {
    const detector = new EndOfTurnDetector(options);
    run(detector, 'SSSS.');
    detector.setTurnWindow(40);
    detector.setTurnWindow(null); // the recogniser heard more words: the default again
    expect(run(detector, 'SSS...')).toEqual([]);
    detector.setTurnWindow(40);
    // The frame detector's tail of the last word does not matter; 40 ms of silence after it end the
    // turn, not the 100 ms window.
    expect(run(detector, 'SS..')).toEqual([
      { type: 'speech_end', speechStartMs: 0, speechEndMs: 260, detectedAtMs: 300 },
    ]);
    detector.setTurnWindow(40); // between turns it means nothing
    expect(run(detector, 'SSS....')).toEqual([
      { type: 'speech_start', speechStartMs: 300, detectedAtMs: 360 },
    ]);
    detector.setTurnWindow(200); // "my number is five five…": a longer wait
    expect(run(detector, '.'.repeat(5))).toEqual([]);
    expect(run(detector, '..')).toEqual([
      { type: 'speech_end', speechStartMs: 300, speechEndMs: 360, detectedAtMs: 560 },
    ]);
  });

  it('counts the speech of a turn without its pauses, and can end a turn at once', () => {
    const detector = new EndOfTurnDetector(options);
    run(detector, 'SSS..SS');
    expect(detector.voicedMs).toBe(100);
    expect(detector.turnElapsedMs).toBe(140);
    expect(detector.forceEnd()).toEqual({
      type: 'speech_end',
      speechStartMs: 0,
      speechEndMs: 140,
      detectedAtMs: 140,
    });
    expect(detector.isSpeaking).toBe(false);
    expect(detector.voicedMs).toBe(0);
    expect(detector.forceEnd()).toBeUndefined();
  });

  it('finds a second turn after the first ended', () => {
    const detector = new EndOfTurnDetector({ frameDurationMs: 10, silenceWindowMs: 600 });
    const pattern = `${'S'.repeat(50)}${'.'.repeat(60)}${'.'.repeat(40)}${'S'.repeat(30)}${'.'.repeat(60)}`;
    const events = run(detector, pattern);
    expect(events.map((event) => event.type)).toEqual([
      'speech_start',
      'speech_end',
      'speech_start',
      'speech_end',
    ]);
    expect(events[1]).toMatchObject({ speechEndMs: 500, detectedAtMs: 1100 });
    expect(events[2]).toMatchObject({ speechStartMs: 1500 });
    expect(events[3]).toMatchObject({ speechStartMs: 1500, speechEndMs: 1800, detectedAtMs: 2400 });
  });

  it('starts over at time zero after reset', () => {
    const detector = new EndOfTurnDetector(options);
    run(detector, '......SSSS');
    detector.reset();
    expect(detector.isSpeaking).toBe(false);
    expect(run(detector, 'SSS')).toEqual([{ type: 'speech_start', speechStartMs: 0, detectedAtMs: 60 }]);
  });
});
