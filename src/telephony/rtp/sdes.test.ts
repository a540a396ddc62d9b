import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isMediaError } from './mediaError.js';
import { createCryptoLines } from './sdes.js';
import { createAnswer, createOffer, parseAnswer } from './sdp.js';

const b64 = (key: Buffer): string => key.toString('base64');

function reasonOf(action: () => unknown): string {
  try {
    action();
    return 'no error';
  } catch (error) {
    return isMediaError(error) ? error.reason : 'other error';
  }
}

describe('SDES (RFC 4568) in offer/answer', () => {
  it('offers RTP/SAVP with a line per suite, each under its own key, and settles on the answered tag', () => {
    const lines = createCryptoLines();
    expect(lines.map((l) => l.suite)).toEqual(['AES_CM_128_HMAC_SHA1_80', 'AES_CM_128_HMAC_SHA1_32']);
    expect(lines[0]!.key.equals(lines[1]!.key)).toBe(false);
    const offer = createOffer({ address: '192.0.2.1', port: 4000, crypto: { lines, secureProfile: true } });
    expect(offer).toContain('m=audio 4000 RTP/SAVP 0 8 101');
    expect(offer).toContain(`a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${b64(lines[0]!.key)}`);
    expect(offer).toContain(`a=crypto:2 AES_CM_128_HMAC_SHA1_32 inline:${b64(lines[1]!.key)}`);

    const answer = createAnswer(offer, { address: '192.0.2.2', port: 5000, srtp: 'required' });
    expect(answer.sdp).toContain('m=audio 5000 RTP/SAVP 0 101');
    expect(answer.sdp.match(/a=crypto:/g)).toHaveLength(1);
    const answererKeying = answer.remote.srtp!;
    expect(answererKeying.suite).toBe('AES_CM_128_HMAC_SHA1_80');
    expect(answererKeying.remoteKey.equals(lines[0]!.key)).toBe(true);
    expect(answer.sdp).toContain(`a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${b64(answererKeying.localKey)}`);

    const offererKeying = parseAnswer(answer.sdp, { srtp: { offered: lines, policy: 'required' } }).srtp!;
    expect(offererKeying.suite).toBe('AES_CM_128_HMAC_SHA1_80');
    expect(offererKeying.localKey.equals(lines[0]!.key)).toBe(true);
    expect(offererKeying.remoteKey.equals(answererKeying.localKey)).toBe(true);
  });

  it('best effort: keys in an RTP/AVP offer are taken by an SRTP peer and ignored by a plain one', () => {
    const lines = createCryptoLines();
    const offer = createOffer({ address: '192.0.2.1', port: 4000, crypto: { lines, secureProfile: false } });
    expect(offer).toContain('m=audio 4000 RTP/AVP');
    const plainPeer = createAnswer(offer, { address: '192.0.2.2', port: 5000 });
    expect(plainPeer.sdp).not.toContain('a=crypto');
    expect(plainPeer.remote.srtp).toBeNull();
    expect(parseAnswer(plainPeer.sdp, { srtp: { offered: lines, policy: 'optional' } }).srtp).toBeNull();
    expect(reasonOf(() => parseAnswer(plainPeer.sdp, { srtp: { offered: lines, policy: 'required' } }))).toBe(
      'no_common_crypto',
    );
    const srtpPeer = createAnswer(offer, { address: '192.0.2.2', port: 5000, srtp: 'optional' });
    expect(srtpPeer.sdp).toContain('m=audio 5000 RTP/AVP');
    expect(parseAnswer(srtpPeer.sdp, { srtp: { offered: lines, policy: 'optional' } }).srtp?.suite).toBe(
      'AES_CM_128_HMAC_SHA1_80',
    );
  });

  it('takes only lines it can honour: no MKI, no session parameters, no unknown suite, keys of 30 bytes', () => {
    const key = b64(randomBytes(30));
    const offerWith = (...crypto: string[]): string =>
      [
        'v=0',
        'o=- 1 1 IN IP4 192.0.2.9',
        's=-',
        'c=IN IP4 192.0.2.9',
        't=0 0',
        'm=audio 7000 RTP/SAVP 0',
        ...crypto,
        '',
      ].join('\r\n');
    const refused = [
      `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${key}|2^20|1:4`,
      `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${key} KDR=1`,
      `a=crypto:1 AES_256_CM_HMAC_SHA1_80 inline:${key}`,
      `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${b64(randomBytes(29))}`,
      `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${key};inline:${key}`,
    ];
    for (const line of refused) {
      expect(
        reasonOf(() => createAnswer(offerWith(line), { address: '192.0.2.2', port: 5000, srtp: 'optional' })),
      ).toBe('no_common_crypto');
    }
    // A lifetime is fine; the first honourable line wins.
    const answer = createAnswer(
      offerWith(refused[2]!, `a=crypto:7 AES_CM_128_HMAC_SHA1_32 inline:${key}|2^31`),
      { address: '192.0.2.2', port: 5000, srtp: 'required' },
    );
    expect(answer.sdp).toMatch(/a=crypto:7 AES_CM_128_HMAC_SHA1_32 inline:/);
    expect(answer.remote.srtp?.suite).toBe('AES_CM_128_HMAC_SHA1_32');
  });

  it('refuses an answer whose line names a tag or suite we did not offer', () => {
    const lines = createCryptoLines();
    const offer = createOffer({ address: '192.0.2.1', port: 4000, crypto: { lines, secureProfile: true } });
    const answer = createAnswer(offer, { address: '192.0.2.2', port: 5000, srtp: 'required' }).sdp;
    const wrongTag = answer.replace('a=crypto:1 ', 'a=crypto:9 ');
    const wrongSuite = answer.replace('AES_CM_128_HMAC_SHA1_80', 'AES_CM_128_HMAC_SHA1_32');
    for (const sdp of [wrongTag, wrongSuite]) {
      expect(reasonOf(() => parseAnswer(sdp, { srtp: { offered: lines, policy: 'optional' } }))).toBe(
        'no_common_crypto',
      );
    }
  });

  it('keeps its own key across a re-offer of the same suite and takes the far end’s new one', () => {
    const first = createAnswer(
      createOffer({
        address: '192.0.2.1',
        port: 4000,
        crypto: { lines: createCryptoLines(), secureProfile: true },
      }),
      { address: '192.0.2.2', port: 5000, srtp: 'required' },
    );
    const reofferLines = createCryptoLines();
    const second = createAnswer(
      createOffer({ address: '192.0.2.1', port: 4002, crypto: { lines: reofferLines, secureProfile: true } }),
      { address: '192.0.2.2', port: 5000, srtp: 'required', currentSrtp: first.remote.srtp },
    );
    expect(second.remote.srtp!.localKey.equals(first.remote.srtp!.localKey)).toBe(true);
    expect(second.remote.srtp!.remoteKey.equals(reofferLines[0]!.key)).toBe(true);
  });

  it('refuses an SRTP-only offer when SRTP is off, and a plain offer when it is required', () => {
    const srtpOffer = createOffer({
      address: '192.0.2.1',
      port: 4000,
      crypto: { lines: createCryptoLines(), secureProfile: true },
    });
    expect(reasonOf(() => createAnswer(srtpOffer, { address: '192.0.2.2', port: 5000 }))).toBe(
      'no_common_crypto',
    );
    const plainOffer = createOffer({ address: '192.0.2.1', port: 4000 });
    expect(
      reasonOf(() => createAnswer(plainOffer, { address: '192.0.2.2', port: 5000, srtp: 'required' })),
    ).toBe('no_common_crypto');
  });
});
