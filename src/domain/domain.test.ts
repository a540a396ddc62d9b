import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey, hasValidKeyShape, keyDisplayParts, safeEqual } from './apiKeys.js';
import { canTransition, isTerminal } from './callStatus.js';
import { isIdOf, newId, ulid } from './ids.js';
import { isE164, maskPhone } from './phone.js';
import { fullBucket, parseRatePolicy, takeToken } from './rateLimit.js';
import { placeholderNames, renderTemplate } from './templates.js';

describe('ids', () => {
  it('are 26-character ULIDs that sort in creation order, even within one millisecond', () => {
    const ids = Array.from({ length: 2000 }, () => ulid(1_700_000_000_000));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    expect(ids[0]).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it('carry their kind as a prefix', () => {
    const id = newId('call');
    expect(isIdOf('call', id)).toBe(true);
    expect(isIdOf('agent', id)).toBe(false);
    expect(isIdOf('call', 'call_short')).toBe(false);
  });
});

describe('API keys', () => {
  it('have the cw_live_ shape with a checksum that catches any single changed character', () => {
    const key = generateApiKey();
    expect(key).toMatch(/^cw_live_[0-9A-Za-z]{38}$/);
    expect(hasValidKeyShape(key)).toBe(true);
    for (let i = 8; i < key.length; i++) {
      const changed = key.slice(0, i) + (key[i] === 'a' ? 'b' : 'a') + key.slice(i + 1);
      expect(hasValidKeyShape(changed), `position ${i}`).toBe(false);
    }
  });

  it('are stored as SHA-256 hex and displayed as prefix and last 4', () => {
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const key = generateApiKey();
    expect(keyDisplayParts(key)).toEqual({ prefix: key.slice(0, 12), last4: key.slice(-4) });
  });

  it('compare in constant time and correctly', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
  });
});

describe('E.164', () => {
  it('accepts + and 2 to 15 digits not starting with 0', () => {
    for (const ok of ['+12', '+15550100001', '+123456789012345']) expect(isE164(ok)).toBe(true);
    for (const bad of ['+1', '+0123', '15550100001', '+1234567890123456', '+1 555', '+1555\n', ''])
      expect(isE164(bad)).toBe(false);
  });

  it('masks numbers for logs, keeping only the head and the last two digits', () => {
    expect(maskPhone('+15550100001')).toBe('+1555*****01');
    expect(maskPhone('not a number')).toBe('[redacted]');
    fc.assert(
      fc.property(fc.stringMatching(/^\+[1-9][0-9]{5,14}$/), (number) => {
        const masked = maskPhone(number);
        expect(masked).toHaveLength(number.length);
        expect(masked).not.toBe(number);
      }),
    );
  });
});

describe('rate policies and token buckets', () => {
  it('parse <requests>/<seconds>s', () => {
    expect(parseRatePolicy('100/10s')).toEqual({ requests: 100, windowS: 10 });
    for (const bad of ['100/10', '0/10s', '10/0s', 'x/10s', '100 / 10s', '-1/1s'])
      expect(parseRatePolicy(bad)).toBeNull();
  });

  it('allow a full burst, refuse the next, and refill continuously', () => {
    const policy = { requests: 10, windowS: 10 };
    const bucket = fullBucket(policy, 0);
    for (let i = 0; i < 10; i++) expect(takeToken(bucket, policy, 0).allowed).toBe(true);
    const refused = takeToken(bucket, policy, 0);
    expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterS: 1, resetS: 10 });
    expect(takeToken(bucket, policy, 999).allowed).toBe(false);
    expect(takeToken(bucket, policy, 1000).allowed).toBe(true);
    expect(takeToken(bucket, policy, 60_000).remaining).toBe(9);
  });
});

describe('templates', () => {
  it('fill declared placeholders and render missing ones as empty', () => {
    expect(renderTemplate('Hi {{ name }}, see you {{slot}}.{{gone}}', { name: 'Ann', slot: 3 })).toBe(
      'Hi Ann, see you 3.',
    );
    expect(renderTemplate('{{constructor}}{{__proto__}}', {})).toBe('');
    expect(placeholderNames('{{a}} {{ b }} {{a}} {{not valid}}')).toEqual(['a', 'b']);
  });
});

describe('call statuses', () => {
  it('move forward only, and terminal statuses are final', () => {
    expect(canTransition('queued', 'dialing')).toBe(true);
    expect(canTransition('dialing', 'queued')).toBe(false);
    expect(canTransition('completed', 'failed')).toBe(false);
    expect(isTerminal('no_answer')).toBe(true);
    expect(isTerminal('ringing')).toBe(false);
  });
});
