/**
 * What the sandbox person says, worded as people word it: each answer has natural variants
 * ("Yes, that works for me.", "Yeah, that works.", "Oh yes, that works, thanks."), one chosen per
 * call. The choice is reproducible: it follows `sandbox_seed` when the call gives one, else a hash
 * of the call's variables (the same request words its answers the same way). `sandbox_wording:
 * "exact"` keeps the listed phrases alone, where a test needs exactly those; `sandbox_reply` puts
 * the person's first answer in the caller's own words.
 */

export type PersonaAnswer = 'agree' | 'reschedule' | 'day' | 'closing';

/**
 * The variants of each answer. Every one carries a phrase the example appointment agent lists (or
 * a common variant of one), and each is understood by the offline recogniser in the sandbox's
 * flite voice (bench:intents, 2026-11-27): "Oh yes, that works, thanks.", "Uh, no, I need to
 * reschedule." and "Uh, Wednesday." were not (unclear, garbage), so they are left out here — the
 * sandbox suites must stay deterministic; docs/benchmarks.md has what the recogniser misses.
 */
export const personaAnswerVariants: Readonly<Record<PersonaAnswer, readonly string[]>> = {
  agree: ['Yes, that works for me.', 'Yes, that works, thank you.', 'Yeah, that works.', 'Yes, that works.'],
  reschedule: [
    'No, I need to reschedule.',
    'No, I need to reschedule, sorry.',
    'No, I need to reschedule please.',
  ],
  day: ['{day}.', '{day}, please.', '{day} would be good.'],
  closing: ['Okay, thank you.'],
};

/** The listed phrase of each answer, said alone (`sandbox_wording: "exact"`). */
const exactAnswers: Readonly<Record<PersonaAnswer, string>> = {
  agree: 'Yes, that works.',
  reschedule: 'No, I need to reschedule.',
  day: '{day}',
  closing: 'Okay, thank you.',
};

/** FNV-1a over a text: a small, stable hash for the default seed. */
function hashText(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** The call's seed: `sandbox_seed` when it is given, else a hash of the call's variables. */
export function wordingSeed(variables: Readonly<Record<string, unknown>>): number {
  const given = variables.sandbox_seed;
  if (typeof given === 'number' && Number.isFinite(given)) return Math.abs(Math.trunc(given));
  if (typeof given === 'string' && /^\d{1,15}$/.test(given.trim())) return Number(given.trim());
  const entries = Object.entries(variables).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return hashText(JSON.stringify(entries));
}

/** The person's answer of this kind on this call, worded by the call's seed (see above). */
export function wordAnswer(
  answer: PersonaAnswer,
  variables: Readonly<Record<string, unknown>>,
  fill: { day?: string } = {},
): string {
  const exact = variables.sandbox_wording === 'exact';
  const variants = personaAnswerVariants[answer];
  // Each kind of answer takes its own draw from the seed, so one call's answers vary independently.
  const draw = hashText(`${wordingSeed(variables)}:${answer}`);
  const template = exact ? exactAnswers[answer] : (variants[draw % variants.length] as string);
  return template.replace('{day}', fill.day ?? '');
}

/**
 * The person's reply number `turn` on a call: agree, or (with `reschedule_to`) reschedule then name
 * the day; then a closing line. `sandbox_reply` replaces the first reply.
 */
export function personReplyText(turn: number, variables: Readonly<Record<string, unknown>>): string {
  const own = typeof variables.sandbox_reply === 'string' ? variables.sandbox_reply.trim().slice(0, 500) : '';
  if (turn === 0 && own) return own;
  const rescheduleTo = typeof variables.reschedule_to === 'string' ? variables.reschedule_to.trim() : '';
  const plan: PersonaAnswer[] = rescheduleTo ? ['reschedule', 'day'] : ['agree'];
  const answer = plan[turn] ?? 'closing';
  return wordAnswer(answer, variables, { day: rescheduleTo });
}
