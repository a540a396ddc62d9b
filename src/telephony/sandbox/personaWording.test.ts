import { describe, expect, it } from 'vitest';
import { personaAnswerVariants, personReplyText, wordAnswer, wordingSeed } from './personaWording.js';

describe('the sandbox person words its answers as people do', () => {
  it('chooses a natural variant per call, the same one again for the same seed', () => {
    const first = personReplyText(0, { customer_name: 'Ann', sandbox_seed: 7 });
    expect(personaAnswerVariants.agree).toContain(first);
    expect(personReplyText(0, { customer_name: 'Ann', sandbox_seed: 7 })).toBe(first);
    // Over many calls every variant is said.
    const said = new Set(
      Array.from({ length: 200 }, (_, seed) => personReplyText(0, { sandbox_seed: seed })),
    );
    expect([...said].sort()).toEqual([...personaAnswerVariants.agree].sort());
  });

  it('without a seed, the call’s variables choose (the same request, the same words)', () => {
    expect(wordingSeed({ customer_name: 'Ann' })).toBe(wordingSeed({ customer_name: 'Ann' }));
    expect(wordingSeed({ customer_name: 'Ann' })).not.toBe(wordingSeed({ customer_name: 'Bob' }));
    expect(wordingSeed({ sandbox_seed: '42' })).toBe(42);
  });

  it('reschedules in its own words, then names the day', () => {
    const variables = { reschedule_to: 'Wednesday', sandbox_seed: 3 };
    expect(personaAnswerVariants.reschedule).toContain(personReplyText(0, variables));
    expect(personReplyText(1, variables)).toContain('Wednesday');
    expect(personReplyText(2, variables)).toBe('Okay, thank you.');
  });

  it('sandbox_wording "exact" says the listed phrases alone; sandbox_reply replaces the first answer', () => {
    expect(personReplyText(0, { sandbox_wording: 'exact', sandbox_seed: 1 })).toBe('Yes, that works.');
    expect(personReplyText(1, { sandbox_wording: 'exact', reschedule_to: 'Friday' })).toBe('Friday');
    expect(wordAnswer('reschedule', { sandbox_wording: 'exact' })).toBe('No, I need to reschedule.');
    expect(personReplyText(0, { sandbox_reply: 'yes that works for me' })).toBe('yes that works for me');
  });
});
