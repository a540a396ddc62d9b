/**
 * Expected phrases as a finite-state grammar for pocketsphinx: the recognizer may only answer with
 * one of the phrases, which is what brings word errors on telephone audio from ~65% down to ~10%.
 */

export interface GrammarTransition {
  fromState: number;
  toState: number;
  word: string;
  /** The transition's log probability in the recognizer's log base (absent: 0, certain). */
  logp?: number;
}

/** A word network: every path from `startState` to `endState` spells one phrase. */
export interface PhraseGrammar {
  stateCount: number;
  startState: number;
  endState: number;
  transitions: GrammarTransition[];
}

/**
 * Lower-case words as the recognizer's dictionary spells them: letters, digits and apostrophes
 * ("don't" stays one word); everything else separates words.
 */
export function phraseWords(phrase: string): string[] {
  return phrase
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .split(/[^a-z0-9']+/)
    .map((word) => word.replace(/^'+|'+$/g, ''))
    .filter((word) => word !== '');
}

/** The canonical spelling of a phrase: its words joined by single spaces. */
export function normalizePhrase(phrase: string): string {
  return phraseWords(phrase).join(' ');
}

export interface PhraseSelection {
  /** Normalized, de-duplicated phrases whose every word the recognizer knows. */
  usablePhrases: string[];
  /** Phrases left out, with the words that made them unusable. */
  rejectedPhrases: Array<{ phrase: string; unknownWords: string[] }>;
}

/** Keeps the phrases the dictionary can spell; a phrase with an unknown word cannot be recognized. */
export function selectUsablePhrases(
  phrases: readonly string[],
  knownWords: ReadonlySet<string>,
): PhraseSelection {
  const usable = new Set<string>();
  const rejectedPhrases: PhraseSelection['rejectedPhrases'] = [];
  for (const phrase of phrases) {
    const words = phraseWords(phrase);
    if (words.length === 0) continue;
    const unknownWords = words.filter((word) => !knownWords.has(word));
    if (unknownWords.length > 0) rejectedPhrases.push({ phrase, unknownWords });
    else usable.add(words.join(' '));
  }
  return { usablePhrases: [...usable].sort(), rejectedPhrases };
}

/**
 * Builds the grammar: state 0 starts, state 1 ends, and each phrase is a chain of fresh states
 * between them. Phrases sharing a first word share nothing else, which keeps the network a plain
 * union of alternatives.
 */
export function buildPhraseGrammar(
  phrases: readonly string[],
  rejection?: { words: readonly string[]; logp: number },
): PhraseGrammar {
  const startState = 0;
  const endState = 1;
  let nextState = 2;
  const transitions: GrammarTransition[] = [];
  if (rejection && rejection.words.length > 0) {
    // The garbage path: any run of other words, at one cost on entering it (not per word, so a long
    // sentence outside the phrases is no cheaper to force into one), so that speech outside the
    // phrases is heard as other words instead of as the nearest phrase.
    const garbageState = nextState++;
    for (const word of rejection.words) {
      transitions.push({ fromState: startState, toState: garbageState, word, logp: rejection.logp });
      transitions.push({ fromState: garbageState, toState: garbageState, word });
      transitions.push({ fromState: garbageState, toState: endState, word });
      transitions.push({ fromState: startState, toState: endState, word, logp: rejection.logp });
    }
  }
  for (const phrase of phrases) {
    const words = phraseWords(phrase);
    let fromState = startState;
    words.forEach((word, index) => {
      const isLast = index === words.length - 1;
      const toState = isLast ? endState : nextState++;
      transitions.push({ fromState, toState, word });
      fromState = toState;
    });
  }
  if (transitions.length === 0) throw new RangeError('a grammar needs at least one phrase with a word');
  return { stateCount: nextState, startState, endState, transitions };
}

/** Which expected phrase a hypothesis is, if it is exactly one of them. */
export function matchPhrase(hypothesis: string, phrases: readonly string[]): string | undefined {
  const normalized = normalizePhrase(hypothesis);
  if (normalized === '') return undefined;
  return phrases.find((phrase) => normalizePhrase(phrase) === normalized);
}

/**
 * Everyday words of answers that are not what the agent asked for ("hello", "who is this", "what is
 * this about", "I'm busy"): the garbage path of a grammar. A phrase's own words are left out of it.
 */
export const rejectionWords = [
  'hello',
  'hi',
  'who',
  'what',
  'is',
  'this',
  'about',
  'calling',
  'speaking',
  'sorry',
  'pardon',
  'the',
  'a',
  'to',
  'of',
  'it',
  'you',
  'me',
  'my',
  'i',
  'am',
  'are',
  'how',
  'why',
  'where',
  'when',
  'do',
  'did',
  "don't",
  'say',
  'again',
  'please',
  'there',
  'here',
  'want',
  'call',
  'later',
  'busy',
  'right',
  'now',
  'um',
  'uh',
  'well',
  'maybe',
  'think',
  'get',
  'got',
  'have',
  'number',
  'wrong',
  'hold',
  'on',
  'moment',
  'robot',
  'driving',
  'time',
  'she',
  'he',
  'one',
  "who's",
  'okay',
  'hmm',
  'huh',
  'mean',
  'company',
  'name',
  'again',
  'stop',
  'remove',
  'list',
  'talk',
];

/** The rejection words a grammar for `phrases` uses: those the dictionary has, minus the phrases' words. */
export function rejectionWordsFor(phrases: readonly string[], knownWords: ReadonlySet<string>): string[] {
  const phraseVocabulary = new Set(phrases.flatMap(phraseWords));
  return [...new Set(rejectionWords)].filter((word) => knownWords.has(word) && !phraseVocabulary.has(word));
}
