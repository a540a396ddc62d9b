import { describe, expect, it } from 'vitest';
import { scrubSecrets, vendorErrorCode } from './secretScrubbing.js';

describe('scrubSecrets', () => {
  it('replaces a known key wherever it appears, whatever it looks like', () => {
    expect(scrubSecrets('bad key shortk3y! and again shortk3y!', ['shortk3y!'])).toBe(
      'bad key [redacted] and again [redacted]',
    );
  });

  it.each([
    ['Incorrect API key provided: sk-proj-AbCdEf0123456789xyz', 'Incorrect API key provided: [redacted]'],
    ['key sk_3f9a0c1b2d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6 refused', 'key [redacted] refused'],
    ['gsk_abcdEFGH12345678 is invalid', '[redacted] is invalid'],
    ['Authorization: Bearer abc.def-123', 'Authorization: [redacted]'],
    ['sent Token 0123abcd', 'sent Token [redacted]'],
    ['{"xi-api-key":"a1b2c3d4"}', '{"xi-api-key":"[redacted]"}'],
    ['api_key=hunter22&x=1', 'api_key=[redacted]&x=1'],
    ['deepgram key 4f7e2a9c0b1d3e5f6a7b8c9d0e1f2a3b4c5d6e7f rejected', 'deepgram key [redacted] rejected'],
    ['eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abc123def456', '[redacted]'],
  ])('catches what looks like a key: %s', (text, scrubbed) => {
    expect(scrubSecrets(text)).toBe(scrubbed);
  });

  it('leaves ordinary failure messages alone', () => {
    for (const text of [
      'openai-chat: HTTP 429 rate_limit_exceeded',
      'elevenlabs: the socket closed before the end of the audio (1008 no code)',
      'the credential base_url host llm.vendor.test resolves to a loopback address (127.0.0.1)',
      'deepgram: the stream closed (1011 NET-0001)',
      'request to http://127.0.0.1:43123/v1 failed: connect ECONNREFUSED 127.0.0.1:43123',
    ])
      expect(scrubSecrets(text)).toBe(text);
  });
});

describe('vendorErrorCode', () => {
  it('keeps a short code and drops free text or anything key-like', () => {
    expect(vendorErrorCode('invalid_api_key')).toBe('invalid_api_key');
    expect(vendorErrorCode('NET-0001')).toBe('NET-0001');
    expect(vendorErrorCode(1008)).toBe('1008');
    expect(vendorErrorCode('Incorrect API key provided')).toBeNull();
    expect(vendorErrorCode('sk-abcdef0123456789')).toBeNull();
    expect(vendorErrorCode('tinykey1', ['tinykey1'])).toBeNull();
    expect(vendorErrorCode(undefined)).toBeNull();
  });
});
