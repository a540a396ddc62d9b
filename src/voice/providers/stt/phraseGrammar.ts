import { canonicalWords } from '../../../domain/intentMatching.js';

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
 * What a grammar may hear around its phrases ("oh yes that works for me thanks"), and their cost:
 * up to two short words before a phrase ("oh", "well", "uh no") and up to two short phrases after
 * it ("for me", "thank you", "is fine"). A fixed shape, not a free loop of words: a free loop let
 * the recogniser spell any sentence as fillers around a one-word phrase (bench:intents).
 */
export interface GrammarFillers {
  before: readonly string[];
  after: readonly string[];
  /**
   * The cost (a log probability in the recognizer's units) of each phrase after: lower keeps more
   * answers to the bare phrase and forces fewer sentences outside the phrases into phrase + filler.
   */
  logp: number;
  /** The cost of each word before a phrase; default `logp`. */
  beforeLogp?: number;
}

/**
 * Builds the grammar: state 0 starts, state 1 ends, and each phrase is a chain of fresh states
 * between them. Phrases sharing a first word share nothing else, which keeps the network a plain
 * union of alternatives. With `fillers`, a phrase may come with words before and after it.
 */
export function buildPhraseGrammar(
  phrases: readonly string[],
  rejection?: { words: readonly string[]; logp: number },
  fillers?: GrammarFillers,
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
  const before = fillers ? [...new Set(fillers.before)] : [];
  const after = fillers ? [...new Set(fillers.after.map((phrase) => phraseWords(phrase).join(' ')))] : [];
  const fillerLogp = fillers?.logp ?? 0;
  // Before: start → word → firstBefore → word → secondBefore; a phrase may start at any of them.
  const phraseStarts = [startState];
  if (before.length > 0) {
    const firstBefore = nextState++;
    const secondBefore = nextState++;
    const beforeLogp = fillers?.beforeLogp ?? fillerLogp;
    for (const word of before) {
      transitions.push({ fromState: startState, toState: firstBefore, word, logp: beforeLogp });
      transitions.push({ fromState: firstBefore, toState: secondBefore, word, logp: beforeLogp });
    }
    phraseStarts.push(firstBefore, secondBefore);
  }
  // After: phrase → afterPhrase → one phrase after → end, or → afterFirst → another → end.
  const afterPhrase = after.length > 0 ? nextState++ : -1;
  if (after.length > 0) {
    const afterFirst = nextState++;
    const chain = (from: number, to: number, words: readonly string[]) => {
      let fromState = from;
      words.forEach((word, index) => {
        const toState = index === words.length - 1 ? to : nextState++;
        transitions.push({ fromState, toState, word, ...(index === 0 ? { logp: fillerLogp } : {}) });
        fromState = toState;
      });
    };
    for (const phrase of after) {
      const words = phrase.split(' ');
      chain(afterPhrase, endState, words);
      chain(afterPhrase, afterFirst, words);
      chain(afterFirst, endState, words);
    }
  }
  for (const phrase of phrases) {
    const words = phraseWords(phrase);
    let fromStates = phraseStarts;
    words.forEach((word, index) => {
      if (index === words.length - 1) {
        for (const fromState of fromStates) {
          transitions.push({ fromState, toState: endState, word });
          if (afterPhrase >= 0) transitions.push({ fromState, toState: afterPhrase, word });
        }
        return;
      }
      const toState = nextState++;
      for (const fromState of fromStates) transitions.push({ fromState, toState, word });
      fromStates = [toState];
    });
  }
  if (transitions.length === 0) throw new RangeError('a grammar needs at least one phrase with a word');
  return { stateCount: nextState, startState, endState, transitions };
}

/**
 * Short words people put before an answer ("oh yes", "well no", "uh friday", "sorry i need…"). Not
 * "yes" or "no": a grammar that let them stand before any phrase heard "yes" as "yeah no".
 */
export const wordsBeforeAnswers = ['oh', 'um', 'uh', 'well', 'okay', 'so', 'sorry', 'actually', 'hmm'];

/** Short phrases people put after an answer ("…works for me", "tuesday please", "thursday is fine"). */
export const phrasesAfterAnswers = [
  'for me',
  'thanks',
  'thank you',
  'please',
  'sorry',
  'is fine',
  'is good',
  'would be good',
  'would be great',
  'would be fine',
  "that's fine",
  'that works',
  'works for me',
  'thanks a lot',
];

/** The fillers a grammar can use: those whose every word the dictionary has. */
export function fillersFor(
  knownWords: ReadonlySet<string>,
  costs: { afterLogp: number; beforeLogp: number },
): GrammarFillers {
  const spelled = (phrase: string) => phraseWords(phrase).every((word) => knownWords.has(word));
  return {
    before: wordsBeforeAnswers.filter(spelled),
    after: phrasesAfterAnswers.filter(spelled),
    logp: costs.afterLogp,
    beforeLogp: costs.beforeLogp,
  };
}

/** Every word of the fillers, for the dictionary lookup. */
export const fillerWords = [...new Set([...wordsBeforeAnswers, ...phrasesAfterAnswers.flatMap(phraseWords)])];

/**
 * The share (0..1) of a transcript's words, in canonical words (domain/intentMatching.ts), that are
 * the phrase's own or filler words: how much of it the grammar's shape (fillers, a phrase, fillers)
 * accounts for. The free-form second pass keeps a phrase only at ≥ 0.5: off-script answers that the
 * language model spelt with a "yes" or "no" among other words ("no and hit her" for "how did you
 * get this number") filled a field (bench:intents, issue 36).
 */
export function shareOfPhraseAndFillers(text: string, phrase: string): number {
  const words = canonicalWords(text);
  if (words.length === 0) return 0;
  const own = new Set([...canonicalWords(phrase), ...fillerWords.flatMap(canonicalWords)]);
  return words.filter((word) => own.has(word)).length / words.length;
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
