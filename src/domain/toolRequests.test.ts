import { describe, expect, it } from 'vitest';
import { agentVoiceSettingsOf } from './agentVoiceSettings.js';
import { parseResponsePath, redactToolSecrets, valueAtPath, variablesFromAnswer } from './toolRequests.js';

describe('response paths (response_variables)', () => {
  it('reads names and indexes, nothing else', () => {
    expect(parseResponsePath('p', '$.delivery.eta')).toEqual(['delivery', 'eta']);
    expect(parseResponsePath('p', '$.items[0].sku')).toEqual(['items', 0, 'sku']);
    expect(parseResponsePath('p', '$[2]')).toEqual([2]);
    for (const bad of ['status', '$', '$..a', '$.a[*]', '$.a[-1]', '$.a[1000]', "$['a']", '$.a.', '$.a b'])
      expect(() => parseResponsePath('p', bad), bad).toThrow(/p/);
  });

  it('names one scalar value or nothing, never what an object inherits', () => {
    const answer = {
      status: 'shipped',
      n: 2,
      ok: false,
      items: [{ sku: 'S' }],
      nested: { a: 1 },
      none: null,
    };
    expect(valueAtPath(answer, ['status'])).toBe('shipped');
    expect(valueAtPath(answer, ['n'])).toBe(2);
    expect(valueAtPath(answer, ['ok'])).toBe(false);
    expect(valueAtPath(answer, ['items', 0, 'sku'])).toBe('S');
    expect(valueAtPath(answer, ['items', 1, 'sku'])).toBeUndefined();
    expect(valueAtPath(answer, ['nested'])).toBeUndefined();
    expect(valueAtPath(answer, ['none'])).toBeUndefined();
    expect(valueAtPath(answer, ['constructor'])).toBeUndefined();
    expect(valueAtPath(answer, ['__proto__'])).toBeUndefined();
    expect(valueAtPath(answer, ['status', 'length'])).toBeUndefined();
    expect(valueAtPath(answer, ['items', 'length'])).toBeUndefined();
    expect(valueAtPath({ long: 'x'.repeat(5_000) }, ['long'])).toHaveLength(1_000);
  });

  it('sets only what the answer has', () => {
    const mapping = [
      { variable: 'a', path: '$.a', steps: ['a'] },
      { variable: 'b', path: '$.b', steps: ['b'] },
    ];
    expect(variablesFromAnswer({ a: 'x' }, mapping)).toEqual({ a: 'x' });
    expect(variablesFromAnswer('not an object', mapping)).toEqual({});
  });
});

describe('redactToolSecrets', () => {
  it('shows every secret as {"sealed": true} and leaves the rest', () => {
    const settings = {
      llm: { model: 'm' },
      tools: [
        {
          name: 't',
          headers: { 'X-Plain': 'p', 'X-Key': { sealed: 'v1.abc' } },
          auth: { type: 'basic', username: 'u', password: { sealed: 'v1.def' } },
        },
      ],
    };
    expect(redactToolSecrets(settings)).toEqual({
      llm: { model: 'm' },
      tools: [
        {
          name: 't',
          headers: { 'X-Plain': 'p', 'X-Key': { sealed: true } },
          auth: { type: 'basic', username: 'u', password: { sealed: true } },
        },
      ],
    });
    expect(JSON.stringify(settings)).toContain('v1.abc');
  });
});

describe('at call time', () => {
  const stored = (extra: Record<string, unknown>) => ({
    tools: [{ name: 't', description: 'd', url: 'https://shop.example.com/t', ...extra }],
  });

  it('a stored tool that would not pass the check at save is not offered (a row edited by hand)', () => {
    expect(agentVoiceSettingsOf(stored({ method: 'GET' })).tools).toHaveLength(1);
    for (const extra of [
      { headers: { Host: 'evil.example' } },
      { headers: { 'X-Key': { secret: 'in clear' } } },
      { auth: { type: 'bearer', token: 'in clear' } },
      { response_variables: { a: '$..a' } },
    ])
      expect(agentVoiceSettingsOf(stored(extra)).tools, JSON.stringify(extra)).toEqual([]);
  });
});
