import { describe, expect, it } from 'vitest';
import { understandingOf, understandingTable } from './understandingTable.js';

describe('the call page says what the agent understood of each answer', () => {
  it('a row per answer: step, words heard, the rule matched or none, and why (escaped)', () => {
    const turns = understandingOf({
      understanding: [
        {
          node: 'greet',
          heard: 'yes that works for me',
          option: 0,
          phrase: 'yes that works',
          match: 'contains',
          reason: 'it contains the listed phrase "yes that works"',
        },
        {
          node: 'ask_again',
          heard: '',
          option: null,
          phrase: null,
          match: null,
          reason: 'nothing was heard',
        },
        { node: 'bad' },
      ],
    });
    expect(turns).toHaveLength(2);
    const page = understandingTable(turns).toString();
    expect(page).toContain('data-testid="understanding"');
    expect(page).toContain('<td>yes that works for me</td>');
    expect(page).toContain('option 1 (“yes that works”, among other words)');
    expect(page).toContain('it contains the listed phrase &quot;yes that works&quot;');
    expect(page).toContain('[unclear]');
    expect(page).toContain('<strong>none</strong>');
    expect(understandingOf({})).toEqual([]);
  });
});
