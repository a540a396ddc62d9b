import { describe, expect, it } from 'vitest';
import {
  buildDigestAuthorization,
  buildDigestChallenge,
  computeDigestResponse,
  parseAuthParams,
  parseDigestChallenge,
  selectDigestChallenge,
  verifyDigestAuthorization,
} from './digest.js';

describe('digest vectors', () => {
  it('matches RFC 2617 §3.5 (MD5, qop=auth)', () => {
    const response = computeDigestResponse({
      algorithm: 'MD5',
      username: 'Mufasa',
      password: 'Circle Of Life',
      realm: 'testrealm@host.com',
      nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093',
      method: 'GET',
      uri: '/dir/index.html',
      qop: 'auth',
      nonceCount: '00000001',
      cnonce: '0a4f113b',
    });
    expect(response).toBe('6629fae49393a05397450978507c4ef1');
  });

  const rfc7616 = {
    username: 'Mufasa',
    password: 'Circle of Life',
    realm: 'http-auth@example.org',
    nonce: '7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v',
    method: 'GET',
    uri: '/dir/index.html',
    qop: 'auth' as const,
    nonceCount: '00000001',
    cnonce: 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ',
  };

  it('matches RFC 7616 §3.9.1 with MD5', () => {
    expect(computeDigestResponse({ ...rfc7616, algorithm: 'MD5' })).toBe('8ca523f5e9506fed4657c9700eebdbec');
  });

  it('matches RFC 7616 §3.9.1 with SHA-256', () => {
    expect(computeDigestResponse({ ...rfc7616, algorithm: 'SHA-256' })).toBe(
      '753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1',
    );
  });

  it('computes the legacy form without qop as H(HA1:nonce:HA2)', () => {
    // HA1 = md5("u:r:p"), HA2 = md5("INVITE:sip:x"), both fixed by the definition.
    const response = computeDigestResponse({
      algorithm: 'MD5',
      username: 'u',
      password: 'p',
      realm: 'r',
      nonce: 'n',
      method: 'INVITE',
      uri: 'sip:x',
      qop: null,
      nonceCount: '',
      cnonce: '',
    });
    expect(response).toMatch(/^[0-9a-f]{32}$/);
    expect(response).not.toBe(
      computeDigestResponse({
        algorithm: 'MD5',
        username: 'u',
        password: 'p',
        realm: 'r',
        nonce: 'n',
        method: 'INVITE',
        uri: 'sip:x',
        qop: 'auth',
        nonceCount: '00000001',
        cnonce: 'c',
      }),
    );
  });
});

describe('challenges and authorizations', () => {
  it('parses a challenge with quoted commas and picks SHA-256 over MD5', () => {
    const md5 = 'Digest realm="a, b", nonce="n1", qop="auth,auth-int", opaque="o", algorithm=MD5';
    const sha = 'Digest realm="a, b", nonce="n2", qop="auth", algorithm=SHA-256, stale=TRUE';
    expect(parseDigestChallenge(md5)).toEqual({
      realm: 'a, b',
      nonce: 'n1',
      opaque: 'o',
      algorithm: 'MD5',
      qopOptions: ['auth', 'auth-int'],
      stale: false,
    });
    expect(selectDigestChallenge([md5, sha])?.nonce).toBe('n2');
    expect(selectDigestChallenge([sha])?.stale).toBe(true);
    expect(parseDigestChallenge('Basic realm="x"')).toBeNull();
    expect(parseDigestChallenge('Digest realm="x", nonce="y", algorithm=SHA-512-256')).toBeNull();
    expect(parseDigestChallenge('Digest realm="x", nonce="y", qop="auth-int"')).toBeNull();
    expect(parseAuthParams('a="unterminated, b=c')).not.toBeNull();
  });

  it('builds an Authorization the verifier accepts, and rejects a wrong password', () => {
    for (const algorithm of ['MD5', 'SHA-256', 'MD5-sess', 'SHA-256-sess'] as const) {
      for (const qop of [true, false]) {
        const header = buildDigestChallenge({ realm: 'sandbox', algorithm, nonce: 'abc', opaque: 'op', qop });
        const challenge = parseDigestChallenge(header);
        if (challenge === null) throw new Error('challenge did not parse');
        const credentials = { username: 'trunkuser', password: 's3cret' };
        const authorization = buildDigestAuthorization(challenge, credentials, {
          method: 'INVITE',
          uri: 'sip:+15550100001@127.0.0.1',
        });
        expect(authorization).toContain(`algorithm=${algorithm}`);
        expect(authorization).toContain('opaque="op"');
        expect(authorization.includes('qop=auth')).toBe(qop);
        expect(authorization).not.toContain('s3cret');
        const expected = { method: 'INVITE', realm: 'sandbox', nonce: 'abc', credentials };
        expect(verifyDigestAuthorization(authorization, expected)).toBe(true);
        expect(verifyDigestAuthorization(authorization, { ...expected, method: 'BYE' })).toBe(false);
        expect(
          verifyDigestAuthorization(authorization, {
            ...expected,
            credentials: { ...credentials, password: 'x' },
          }),
        ).toBe(false);
      }
    }
  });
});
