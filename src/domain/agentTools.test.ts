import { describe, expect, it } from 'vitest';
import { agentToolLimits, checkAgentTools } from './agentTools.js';

const lookup = {
  name: 'lookup_order',
  description: 'Looks up an order.',
  parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
  url: 'https://shop.example.com/tools/lookup',
};

describe('checkAgentTools', () => {
  it('reads a declaration with its defaults', () => {
    expect(checkAgentTools([lookup], 'llm')).toEqual([
      {
        name: 'lookup_order',
        description: 'Looks up an order.',
        parameters: lookup.parameters,
        url: 'https://shop.example.com/tools/lookup',
        timeoutMs: agentToolLimits.defaultTimeoutMs,
        sayWhileWaiting: null,
        filler: null,
        failedMessage: null,
        method: 'POST',
        query: {},
        headers: [],
        auth: null,
        responseVariables: [],
      },
    ]);
    expect(
      checkAgentTools([
        { ...lookup, timeout_ms: 2500, filler: { after_ms: 1000, text: 'Still looking.' } },
      ])[0],
    ).toMatchObject({ timeoutMs: 2500, filler: { afterMs: 1000, text: 'Still looking.' } });
    expect(checkAgentTools(undefined)).toEqual([]);
  });

  it.each([
    [[{ ...lookup, name: 'end_call' }], /built-in tool/],
    [[{ ...lookup, name: '9lives' }], /name must be/],
    [[lookup, lookup], /declared twice/],
    [[{ ...lookup, description: '' }], /description/],
    [[{ ...lookup, url: 'ftp://shop.example.com/x' }], /http or https/],
    [[{ ...lookup, url: 'https://user:pw@shop.example.com/x' }], /credentials/],
    [[{ ...lookup, url: 'not a url' }], /not a URL/],
    [[{ ...lookup, parameters: { type: 'string' } }], /type.*object/],
    [
      [{ ...lookup, parameters: { type: 'object', properties: { a: { type: 'strnig' } } } }],
      /not a valid JSON Schema/,
    ],
    [[{ ...lookup, timeout_ms: 50 }], /timeout_ms/],
    [[{ ...lookup, filler: { after_ms: 1000 } }], /filler.text/],
    [[{ ...lookup, filler: { after_ms: 10, text: 'x' } }], /after_ms/],
    [[{ ...lookup, body_template: {} }], /body_template is not a setting/],
    [[{ ...lookup, headers: { 'X-Key': { secret: 'plain' } } }], /headers\.X-Key must be a secret/],
    [Array.from({ length: 17 }, (_, i) => ({ ...lookup, name: `t${i}` })), /at most 16/],
    [{ lookup }, /must be a list/],
  ])('refuses %j', (raw, why) => {
    expect(() => checkAgentTools(raw, 'llm')).toThrow(why);
  });

  it('belongs to the llm brain', () => {
    expect(() => checkAgentTools([lookup], 'script')).toThrow(/llm brain/);
  });
});
