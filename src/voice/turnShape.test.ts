import { describe, expect, it } from 'vitest';
import { endOfTurnWaitMs, interruptingWords, isBackchannel, turnShapeOf } from './turnShape.js';

describe('turnShapeOf', () => {
  it('a complete answer: an expected phrase, the recogniser ending the speech, a sentence ending', () => {
    expect(turnShapeOf({ text: 'yes that works', expectedPhrases: ['yes', 'yes that works'] })).toBe(
      'complete',
    );
    expect(turnShapeOf({ text: 'tuesday is fine', recognizerEnded: true })).toBe('complete');
    expect(turnShapeOf({ text: 'Tuesday is fine.' })).toBe('complete');
  });

  it('plainly unfinished: a dangling word, a number still being said, a trailing comma', () => {
    expect(turnShapeOf({ text: 'I think' })).toBe('unfinished');
    expect(turnShapeOf({ text: 'my number is five five five', expectedPhrases: ['no'] })).toBe('unfinished');
    expect(turnShapeOf({ text: 'well,', recognizerEnded: true })).toBe('unfinished');
    expect(turnShapeOf({ text: 'it is five five five one two three four' })).toBe('unknown');
  });

  it('says nothing either way about other words, or none', () => {
    expect(turnShapeOf({ text: 'tuesday afternoon' })).toBe('unknown');
    expect(turnShapeOf({ text: '' })).toBe('unknown');
  });

  it('maps shapes to the agent’s waits', () => {
    const settings = { minWaitMs: 250, waitMs: 600, maxWaitMs: 1500 };
    expect(endOfTurnWaitMs('complete', settings)).toBe(250);
    expect(endOfTurnWaitMs('unknown', settings)).toBe(600);
    expect(endOfTurnWaitMs('unfinished', settings)).toBe(1500);
  });
});

describe('backchannels', () => {
  it('"mhm", "yeah okay" are backchannels; words that ask or object interrupt', () => {
    expect(isBackchannel('mhm')).toBe(true);
    expect(isBackchannel('Yeah, okay.')).toBe(true);
    expect(isBackchannel('wait')).toBe(false);
    expect(interruptingWords('yeah okay', 2)).toBe(false);
    expect(interruptingWords('wait', 2)).toBe(false);
    expect(interruptingWords('wait i', 2)).toBe(true);
    expect(interruptingWords('no', 1)).toBe(true);
    expect(interruptingWords('', 0)).toBe(true);
  });
});
