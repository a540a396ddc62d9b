import { describe, expect, it } from 'vitest';
import { buildPhraseGrammar, type PhraseGrammar, shareOfPhraseAndFillers } from './phraseGrammar.js';

/** Whether a word sequence is a path of the grammar from its start to its end state, and its cost. */
function spell(grammar: PhraseGrammar, text: string): number | null {
  let states = new Map<number, number>([[grammar.startState, 0]]);
  for (const word of text.split(' ')) {
    const next = new Map<number, number>();
    for (const [state, cost] of states)
      for (const transition of grammar.transitions)
        if (transition.fromState === state && transition.word === word) {
          const total = cost + (transition.logp ?? 0);
          next.set(transition.toState, Math.max(next.get(transition.toState) ?? -Infinity, total));
        }
    states = next;
  }
  return states.get(grammar.endState) ?? null;
}

const fillers = { before: ['oh', 'well', 'uh'], after: ['for me', 'thanks', 'thank you'], logp: -300 };

describe('a phrase grammar with words around the phrases', () => {
  const grammar = buildPhraseGrammar(['yes', 'yes that works', 'no'], undefined, fillers);

  it('hears a phrase alone at no cost, and with up to two words before and two phrases after, each at its cost', () => {
    expect(spell(grammar, 'yes that works')).toBe(0);
    expect(spell(grammar, 'yes that works for me')).toBe(-300);
    expect(spell(grammar, 'oh yes that works thanks')).toBe(-600);
    expect(spell(grammar, 'well uh yes that works for me thank you')).toBe(-1200);
  });

  it('does not let fillers alone, or long runs of them, stand for an answer', () => {
    expect(spell(grammar, 'oh thanks')).toBeNull();
    expect(spell(grammar, 'oh well uh yes')).toBeNull();
    expect(spell(grammar, 'yes thanks thanks thanks')).toBeNull();
    expect(spell(grammar, 'that works')).toBeNull();
  });

  it('without fillers only the bare phrases', () => {
    const bare = buildPhraseGrammar(['yes', 'no']);
    expect(spell(bare, 'yes')).toBe(0);
    expect(spell(bare, 'oh yes')).toBeNull();
  });
});

describe('shareOfPhraseAndFillers', () => {
  it('counts the phrase’s words (variants folded) and filler words against all of the transcript’s', () => {
    expect(shareOfPhraseAndFillers('oh yeah', 'yes')).toBe(1);
    expect(shareOfPhraseAndFillers('no i have to reschedule', 'no i need to reschedule')).toBe(1);
    expect(shareOfPhraseAndFillers('yeah i can and', 'yes i can')).toBe(0.75);
    // Off-script answers the language model spelt with a core word among others.
    expect(shareOfPhraseAndFillers('no and hit her', 'no')).toBe(0.25);
    expect(shareOfPhraseAndFillers('', 'no')).toBe(0);
  });
});
