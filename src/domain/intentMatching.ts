/**
 * What a callee's answer means to a script's `listen` rule: intents, not exact phrases. People rarely
 * say a listed phrase alone ("yes that works for me", "oh yes that works thanks", "yeah, Tuesday's
 * fine", "nope"). An answer carries an option's meaning when, after both sides are put in canonical
 * words (contractions spelt out, common variants of the core words folded into one: yeah/yep/sure →
 * yes, nope/nah/not really → no), a listed phrase lies inside it — unless the answer negates it ("no
 * that doesn't work" is not "that works", "yes… no i can not" is not "yes"). Pure rules, no I/O; the
 * offline recogniser uses `surfaceVariants` to put the variants into its grammar.
 */

/** Contractions and spellings, each folded into its words (the recogniser's dictionary has both). */
const spelledOut: Readonly<Record<string, string>> = {
  "can't": 'can not',
  cannot: 'can not',
  "don't": 'do not',
  "doesn't": 'does not',
  "won't": 'will not',
  "isn't": 'is not',
  "wouldn't": 'would not',
  "couldn't": 'could not',
  "i'm": 'i am',
  "that's": 'that is',
  "it's": 'it is',
  "i'd": 'i would',
  "i'll": 'i will',
  "we'll": 'we will',
  "let's": 'let us',
  okay: 'ok',
  alright: 'all right',
};

/**
 * Variants of core meanings, as word sequences folded into a canonical one (longest first when
 * they overlap). Both the listed phrases and the answer are folded, so a script listing "sure"
 * understands "yeah" as well as one listing "yes".
 */
const variantGroups: ReadonlyArray<{ canonical: string; variants: readonly string[] }> = [
  {
    canonical: 'yes',
    variants: [
      'yes',
      'yeah',
      'yep',
      'yup',
      'sure',
      'sure thing',
      'of course',
      'absolutely',
      'definitely',
      'certainly',
      'no problem',
      'not a problem',
      'no worries',
      'why not',
      'you bet',
    ],
  },
  { canonical: 'no', variants: ['no', 'nope', 'nah', 'not really', 'no way', 'no thanks'] },
  {
    canonical: 'that works',
    variants: [
      'that works',
      'that is fine',
      'that is good',
      'that is great',
      'that is perfect',
      'that will work',
      'that would work',
      'sounds good',
      'sounds great',
      'works for me',
      'that is ok',
      'that is all right',
    ],
  },
  {
    canonical: 'i need to reschedule',
    variants: [
      'i need to reschedule',
      'i have to reschedule',
      'i want to reschedule',
      'i would like to reschedule',
      'i need to move it',
      'i need to change it',
      'i have to move it',
    ],
  },
  { canonical: 'i can not', variants: ['i can not', 'i can not make it', 'i will not make it'] },
  // Not an answer, and no "no" or "sure" either: "i have no idea", "i'm not sure".
  { canonical: 'do not know', variants: ['do not know', 'no idea', 'not sure'] },
  { canonical: 'take a message', variants: ['take a message', 'pass on a message'] },
];

/**
 * The variants an offline recogniser's grammar gets (each one more it may force other speech
 * into): the commonest. The others are understood when a recogniser of free speech hears them.
 */
const grammarVariants = new Set([
  'yes',
  'yeah',
  'yep',
  'sure',
  'sure thing',
  'of course',
  'no',
  'nope',
  'not really',
  'that works',
  'sounds good',
  'works for me',
  'i need to reschedule',
  'i have to reschedule',
  'i need to move it',
  'i can not',
  'i can not make it',
]);

/** Words that negate what follows or precedes them. */
const negationWords = new Set(['no', 'not', 'never']);
/** Words that make a phrase an affirmation, which a negation in the answer turns around. */
const affirmationWords = new Set([
  'yes',
  'works',
  'work',
  'fine',
  'good',
  'can',
  'will',
  'right',
  'correct',
  'ok',
]);

/** Lower-case words: letters, digits and apostrophes; everything else separates words. */
export function speechWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .split(/[^a-z0-9']+/)
    .map((word) => word.replace(/^'+|'+$/g, ''))
    .filter((word) => word !== '');
}

const foldedGroups = variantGroups
  .flatMap(({ canonical, variants }) =>
    variants.map((variant) => ({
      from: spellOut(speechWords(variant)),
      to: spellOut(speechWords(canonical)),
    })),
  )
  .sort((a, b) => b.from.length - a.from.length);

function spellOut(words: readonly string[]): string[] {
  return words.flatMap((word) => (spelledOut[word] ?? word).split(' '));
}

/** The canonical words of a text: contractions spelt out, variants folded into their meaning. */
export function canonicalWords(text: string): string[] {
  const words = spellOut(speechWords(text));
  const folded: string[] = [];
  for (let index = 0; index < words.length; ) {
    const group = foldedGroups.find(({ from }) =>
      from.every((word, offset) => words[index + offset] === word),
    );
    if (group) {
      // "that works for me" folds "works for me" into "that works": one "that", not two.
      const repeats = group.to.length > 1 && folded.at(-1) === group.to[0] ? 1 : 0;
      folded.push(...group.to.slice(repeats));
      index += group.from.length;
    } else {
      folded.push(words[index] as string);
      index += 1;
    }
  }
  return folded;
}

/**
 * Other ways of saying `phrase` that mean the same, for a recogniser's grammar: the phrase, the
 * commonest variants of its meaning, and the phrase with its first word in other words ("yeah
 * that works"). At most `limit` of them, the phrase first.
 */
export function surfaceVariants(phrase: string, limit = 24): string[] {
  const words = speechWords(phrase);
  const results = new Set<string>([words.join(' ')]);
  const canonical = canonicalWords(phrase).join(' ');
  for (const { canonical: meaning, variants } of variantGroups) {
    if (meaning === canonical)
      for (const variant of variants) if (grammarVariants.has(variant)) results.add(variant);
  }
  // A phrase that starts with a folded word ("yes i can", "no i need to reschedule") also gets the
  // other first words of that meaning.
  const first = words[0];
  const rest = words.slice(1).join(' ');
  const firstGroup = variantGroups.find(
    (group) => group.variants.includes(first ?? '') && speechWords(group.canonical).length === 1,
  );
  if (firstGroup && rest) {
    for (const variant of firstGroup.variants)
      if (speechWords(variant).length === 1 && grammarVariants.has(variant))
        results.add(`${variant} ${rest}`);
  }
  return [...results].slice(0, limit);
}

export interface PhraseOption {
  phrases: readonly string[];
}

/** How an answer met a rule: it was a listed phrase, held one among other words, or held a variant of one. */
export type UnderstandingMatch = 'exact' | 'contains' | 'variant';

/** What was understood of one answer: which option, by which phrase, and why — or why none. */
export interface Understanding {
  /** The words heard (the recogniser's text). */
  heard: string;
  /** The option's index in the rule's list; null when no option matched. */
  option: number | null;
  /** The listed phrase that matched. */
  phrase: string | null;
  match: UnderstandingMatch | null;
  /** In a sentence, why this option or none. */
  reason: string;
}

interface Candidate {
  option: number;
  phrase: string;
  match: UnderstandingMatch;
  length: number;
}

function indexOfSequence(haystack: readonly string[], needle: readonly string[], from = 0): number {
  for (let start = from; start + needle.length <= haystack.length; start++) {
    if (needle.every((word, offset) => haystack[start + offset] === word)) return start;
  }
  return -1;
}

/**
 * Which option an answer carries. An option matches when one of its phrases, in canonical words,
 * lies inside the answer's canonical words; a phrase of affirmation (yes, works, can…) does not
 * match when the answer negates outside it. The longest matching phrase wins (so "no i need to
 * reschedule" beats "no"), then the earlier option. Options without phrases (free-form) are the
 * caller's business: they are skipped here.
 */
export function understandAnswer(options: readonly PhraseOption[], heard: string): Understanding {
  const surface = speechWords(heard);
  const answer = canonicalWords(heard);
  const base = { heard: surface.join(' ') };
  if (answer.length === 0)
    return { ...base, option: null, phrase: null, match: null, reason: 'nothing was heard' };
  const candidates: Candidate[] = [];
  const negated: string[] = [];
  options.forEach((option, optionIndex) => {
    for (const phrase of option.phrases) {
      const wanted = canonicalWords(phrase);
      if (wanted.length === 0) continue;
      const at = indexOfSequence(answer, wanted);
      if (at < 0) continue;
      const phraseNegates = wanted.some((word) => negationWords.has(word));
      const phraseAffirms = !phraseNegates && wanted.some((word) => affirmationWords.has(word));
      const outside = [...answer.slice(0, at), ...answer.slice(at + wanted.length)];
      if (phraseAffirms && outside.some((word) => negationWords.has(word))) {
        negated.push(phrase);
        continue;
      }
      const exact = answer.length === wanted.length && surface.join(' ') === speechWords(phrase).join(' ');
      const literal = indexOfSequence(spellOut(surface), spellOut(speechWords(phrase))) >= 0;
      candidates.push({
        option: optionIndex,
        phrase,
        match: exact ? 'exact' : literal ? 'contains' : 'variant',
        length: wanted.length,
      });
    }
  });
  const best = candidates.sort((a, b) => b.length - a.length || a.option - b.option)[0];
  if (!best) {
    const reason =
      negated.length > 0
        ? `"${negated[0]}" is in it but negated`
        : 'no listed phrase or variant of one is in it';
    return { ...base, option: null, phrase: null, match: null, reason };
  }
  const reason =
    best.match === 'exact'
      ? `it is the listed phrase "${best.phrase}"`
      : best.match === 'contains'
        ? `it contains the listed phrase "${best.phrase}"`
        : `it says "${best.phrase}" in other words (${canonicalWords(best.phrase).join(' ')})`;
  return { ...base, option: best.option, phrase: best.phrase, match: best.match, reason };
}

/** The listed phrase an answer carries, if any (each phrase its own option). */
export function phraseCarried(heard: string, phrases: readonly string[]): string | undefined {
  const understood = understandAnswer(
    phrases.map((phrase) => ({ phrases: [phrase] })),
    heard,
  );
  return understood.phrase ?? undefined;
}
