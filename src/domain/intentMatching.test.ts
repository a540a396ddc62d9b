import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canonicalWords, phraseCarried, surfaceVariants, understandAnswer } from './intentMatching.js';

/** The example appointment agent's first question. */
const greet = [
  { phrases: ['yes', 'yes that works', 'that works', 'yes i can', 'sure'] },
  { phrases: ['no', 'no i need to reschedule', 'i need to reschedule', 'reschedule', 'no i can not'] },
  { phrases: ['take a message', 'leave a message', 'can you take a message'] },
];

const optionOf = (heard: string) => understandAnswer(greet, heard).option;

describe('an answer carries an option when a listed phrase or a variant of one is in it', () => {
  it('a listed phrase inside a longer answer: fillers, politeness, restatements', () => {
    for (const heard of [
      'yes that works for me',
      'Yes, that works for me.',
      'oh yes that works thanks',
      'well yes that works',
      'yes yes that works for me',
      'yes please',
    ])
      expect(optionOf(heard), heard).toBe(0);
    expect(understandAnswer(greet, 'yes that works for me')).toMatchObject({
      option: 0,
      phrase: 'yes that works',
      match: 'contains',
      reason: 'it contains the listed phrase "yes that works"',
    });
    expect(understandAnswer(greet, 'no i need to reschedule please')).toMatchObject({
      option: 1,
      phrase: 'no i need to reschedule',
    });
    expect(optionOf('could you take a message please')).toBe(2);
  });

  it('the listed phrase alone is an exact match, as before', () => {
    expect(understandAnswer(greet, 'yes that works')).toMatchObject({ option: 0, match: 'exact' });
    expect(understandAnswer(greet, 'no')).toMatchObject({ option: 1, match: 'exact' });
  });

  it('common variants of the core words', () => {
    for (const heard of [
      'yeah',
      'yep',
      'sure thing',
      'yeah that works',
      "yes that's fine",
      'sounds good',
      'of course',
    ])
      expect(optionOf(heard), heard).toBe(0);
    for (const heard of [
      'nope',
      'nah',
      'not really',
      "no i can't",
      'i have to reschedule',
      'i need to move it',
    ])
      expect(optionOf(heard), heard).toBe(1);
    expect(understandAnswer(greet, 'yeah')).toMatchObject({ option: 0, match: 'variant', phrase: 'yes' });
  });

  it('negation stays distinct from affirmation', () => {
    // "no that doesn't work" is not "that works": it is the "no" option.
    expect(optionOf("no that doesn't work")).toBe(1);
    expect(optionOf('yes that does not work')).toBeNull();
    expect(understandAnswer(greet, "that doesn't work")).toMatchObject({ option: null });
    expect(understandAnswer(greet, 'yes i can not')).toMatchObject({ option: null });
    expect(optionOf("i'm not sure")).toBeNull();
    expect(optionOf('i have no idea')).toBeNull();
    // Idioms of agreement that hold a "no" are agreement.
    expect(optionOf('no problem')).toBe(0);
  });

  it('the longest phrase wins, then the earlier option', () => {
    expect(understandAnswer(greet, 'no i need to reschedule')).toMatchObject({
      option: 1,
      phrase: 'no i need to reschedule',
    });
  });

  it('off-script answers match nothing and say why', () => {
    for (const heard of [
      'who is this',
      'what is this about',
      'hello',
      "i'm driving right now",
      'is this a robot',
    ])
      expect(understandAnswer(greet, heard), heard).toMatchObject({
        option: null,
        phrase: null,
        match: null,
        reason: 'no listed phrase or variant of one is in it',
      });
    expect(understandAnswer(greet, '')).toMatchObject({ option: null, reason: 'nothing was heard' });
  });

  it('every answer of the bench corpus is understood as labelled, given its words exactly', () => {
    const corpus = JSON.parse(
      readFileSync(new URL('../../bench/fixtures/intentCorpus.json', import.meta.url), 'utf8'),
    ) as {
      rules: Record<string, { name: string; phrases: string[] }[]>;
      paraphrases: { rule: string; text: string; intent: string }[];
      offScript: { rule: string; text: string }[];
      exact: { rule: string; text: string; intent: string }[];
    };
    const intentOf = (rule: string, text: string) => {
      const options = corpus.rules[rule] ?? [];
      const understood = understandAnswer(options, text);
      return understood.option === null ? null : options[understood.option]?.name;
    };
    for (const entry of [...corpus.paraphrases, ...corpus.exact])
      expect(intentOf(entry.rule, entry.text), entry.text).toBe(entry.intent);
    for (const entry of corpus.offScript) expect(intentOf(entry.rule, entry.text), entry.text).toBeNull();
  });
});

describe('canonical words and grammar variants', () => {
  it('spells out contractions and folds variants', () => {
    expect(canonicalWords("Yeah, that's fine")).toEqual(['yes', 'that', 'works']);
    expect(canonicalWords('that works for me')).toEqual(['that', 'works', 'for', 'me']);
    expect(canonicalWords("I can't make it")).toEqual(['i', 'can', 'not']);
  });

  it('a grammar gets the commonest variants of a phrase, the phrase first', () => {
    const variants = surfaceVariants('yes that works');
    expect(variants[0]).toBe('yes that works');
    expect(variants).toContain('yeah that works');
    expect(surfaceVariants('no')).toEqual(expect.arrayContaining(['no', 'nope', 'not really']));
    expect(surfaceVariants('monday')).toEqual(['monday']);
  });

  it('reports the listed phrase a recognised answer carries', () => {
    expect(phraseCarried('yes that works for me', ['yes', 'yes that works', 'no'])).toBe('yes that works');
    expect(phraseCarried('who is this', ['yes', 'no'])).toBeUndefined();
  });
});
