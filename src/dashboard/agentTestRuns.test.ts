import { describe, expect, it } from 'vitest';
import { overridesFromText, replayOverrides, scenariosFromText } from './agentTestRuns.js';

describe("the Test tab's form fields", () => {
  it('takes one scenario or a list, and says what is wrong with text that is not JSON', () => {
    expect(scenariosFromText('{"name":"a"}')).toEqual([{ name: 'a' }]);
    expect(scenariosFromText('[{"name":"a"},{"name":"b"}]')).toHaveLength(2);
    expect(() => scenariosFromText('  ')).toThrow('Paste a scenario');
    expect(() => scenariosFromText('[{')).toThrow('The scenarios are not valid JSON');
    expect(overridesFromText('')).toBeUndefined();
    expect(() => overridesFromText('[1]')).toThrow('must be a JSON object');
  });

  it('merges the end-of-turn wait into the overrides as all three waits', () => {
    expect(replayOverrides('', '')).toBeUndefined();
    expect(replayOverrides('1500', '{"prompt":"p"}')).toEqual({
      prompt: 'p',
      settings: { turn_taking: { end_of_turn: { min_wait_ms: 1500, wait_ms: 1500, max_wait_ms: 1500 } } },
    });
    expect(replayOverrides('2500', '')).toEqual({
      settings: { turn_taking: { end_of_turn: { min_wait_ms: 2500, wait_ms: 2500, max_wait_ms: 2500 } } },
    });
    expect(replayOverrides('150', '{"settings":{"turn_taking":{"interruptions":{"min_words":3}}}}')).toEqual({
      settings: {
        turn_taking: {
          interruptions: { min_words: 3 },
          end_of_turn: { min_wait_ms: 150, wait_ms: 150, max_wait_ms: 150 },
        },
      },
    });
    expect(() => replayOverrides('1.5', '')).toThrow('from 100 to 5000');
    expect(() => replayOverrides('99999', '')).toThrow('from 100 to 5000');
  });
});
