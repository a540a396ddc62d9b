import { parse } from 'sdp-transform';
import { describe, expect, it } from 'vitest';
import { isMediaError, type MediaErrorReason } from './mediaError.js';
import { canSendTo, createAnswer, createOffer, parseAnswer } from './sdp.js';

const crlf = (lines: string[]): string => `${lines.join('\r\n')}\r\n`;

/** What SIPp's embedded uas answers with (its [media_ip]/[media_port] filled in). */
const sippAnswer = crlf([
  'v=0',
  'o=user1 53655765 2353687637 IN IP4 127.0.0.1',
  's=-',
  'c=IN IP4 127.0.0.1',
  't=0 0',
  'm=audio 6000 RTP/AVP 0',
  'a=rtpmap:0 PCMU/8000',
]);

/** A carrier media gateway's answer: connection at media level, DTMF on 101, ptime. */
const carrierAnswer = crlf([
  'v=0',
  'o=root 1904236337 1904236337 IN IP4 54.172.60.1',
  's=Media Gateway',
  't=0 0',
  'm=audio 17414 RTP/AVP 8 101',
  'c=IN IP4 54.172.60.3',
  'a=rtpmap:8 PCMA/8000',
  'a=rtpmap:101 telephone-event/8000',
  'a=fmtp:101 0-16',
  'a=ptime:20',
  'a=maxptime:150',
  'a=sendrecv',
]);

/** A carrier's offer (UAS side), with video and an SRTP audio line we cannot use first. */
const carrierOffer = crlf([
  'v=0',
  'o=- 3913462891 3913462891 IN IP4 198.51.100.7',
  's=SBC',
  'c=IN IP4 198.51.100.7',
  't=0 0',
  'm=audio 40000 RTP/SAVP 0',
  'a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz',
  'm=audio 40002 RTP/AVP 18 0 8 96',
  'a=rtpmap:18 G729/8000',
  'a=fmtp:18 annexb=no',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:8 PCMA/8000',
  'a=rtpmap:96 telephone-event/8000',
  'a=fmtp:96 0-15',
  'a=ptime:20',
  'a=sendrecv',
  'm=video 40004 RTP/AVP 99',
  'a=rtpmap:99 H264/90000',
]);

function reasonOf(action: () => unknown): MediaErrorReason | 'no error' | 'other error' {
  try {
    action();
    return 'no error';
  } catch (error) {
    return isMediaError(error) ? error.reason : 'other error';
  }
}

describe('createOffer', () => {
  it('offers PCMU, PCMA and telephone-event 0-16 at 20 ms', () => {
    const sdp = createOffer({
      address: '203.0.113.5',
      port: 10000,
      codecs: ['PCMU', 'PCMA'],
      telephoneEvent: true,
      ptimeMs: 20,
    });
    expect(sdp).toContain('\r\n');
    expect(sdp).toContain('c=IN IP4 203.0.113.5');
    expect(sdp).toContain('m=audio 10000 RTP/AVP 0 8 101');
    expect(sdp).toContain('a=rtpmap:0 PCMU/8000');
    expect(sdp).toContain('a=rtpmap:8 PCMA/8000');
    expect(sdp).toContain('a=rtpmap:101 telephone-event/8000');
    expect(sdp).toContain('a=fmtp:101 0-16');
    expect(sdp).toContain('a=ptime:20');
    expect(sdp).toContain('a=sendrecv');
    // RFC 5761: RTCP may share the RTP port; it stays on port + 1 unless the answer agrees.
    expect(sdp).toContain('a=rtcp-mux');
    expect(createOffer({ address: '203.0.113.5', port: 10000, rtcpMux: false })).not.toContain('rtcp-mux');
    expect(parse(sdp).media).toHaveLength(1);
  });

  it('can leave DTMF out and use IPv6', () => {
    const sdp = createOffer({ address: '2001:db8::1', port: 10002, codecs: ['PCMA'], telephoneEvent: false });
    expect(sdp).toContain('c=IN IP6 2001:db8::1');
    expect(sdp).toContain('m=audio 10002 RTP/AVP 8\r\n');
    expect(sdp).not.toContain('telephone-event');
  });
});

describe('parseAnswer', () => {
  it("reads SIPp's answer (session-level c=, no DTMF)", () => {
    expect(parseAnswer(sippAnswer)).toEqual({
      address: '127.0.0.1',
      port: 6000,
      codec: 'PCMU',
      payloadType: 0,
      telephoneEventPayloadType: null,
      ptimeMs: null,
      direction: 'sendrecv',
      srtp: null,
      rtcpMux: false,
    });
  });

  it("reads a carrier's answer (media-level c=, PCMA, DTMF)", () => {
    const remote = parseAnswer(carrierAnswer);
    expect(remote).toMatchObject({ address: '54.172.60.3', port: 17414, codec: 'PCMA', payloadType: 8 });
    expect(remote.telephoneEventPayloadType).toBe(101);
    expect(remote.ptimeMs).toBe(20);
    expect(canSendTo(remote)).toBe(true);
  });

  it('accepts static payload types without rtpmap lines', () => {
    const sdp = sippAnswer.replace('a=rtpmap:0 PCMU/8000\r\n', '').replace('RTP/AVP 0', 'RTP/AVP 8');
    expect(parseAnswer(sdp)).toMatchObject({ codec: 'PCMA', payloadType: 8 });
  });

  it('follows the direction, including hold by c=0.0.0.0', () => {
    expect(parseAnswer(`${carrierAnswer.replace('a=sendrecv', 'a=recvonly')}`).direction).toBe('recvonly');
    const inactive = parseAnswer(carrierAnswer.replace('a=sendrecv', 'a=inactive'));
    expect(canSendTo(inactive)).toBe(false);
    const held = parseAnswer(carrierAnswer.replace('c=IN IP4 54.172.60.3', 'c=IN IP4 0.0.0.0'));
    expect(held.direction).toBe('sendonly');
    expect(canSendTo(held)).toBe(false);
    const sessionLevel = sippAnswer.replace('t=0 0\r\n', 't=0 0\r\na=sendonly\r\n');
    expect(parseAnswer(sessionLevel).direction).toBe('sendonly');
  });

  it('ignores telephone-event whose fmtp leaves out digits', () => {
    expect(
      parseAnswer(carrierAnswer.replace('a=fmtp:101 0-16', 'a=fmtp:101 16')).telephoneEventPayloadType,
    ).toBeNull();
    expect(
      parseAnswer(carrierAnswer.replace('a=fmtp:101 0-16', 'a=fmtp:101 0-9,10-15')).telephoneEventPayloadType,
    ).toBe(101);
  });

  it('fails clearly without a common codec', () => {
    const g729 = carrierAnswer
      .replace('RTP/AVP 8 101', 'RTP/AVP 18 101')
      .replace('a=rtpmap:8 PCMA/8000', 'a=rtpmap:18 G729/8000');
    expect(reasonOf(() => parseAnswer(g729))).toBe('no_common_codec');
    expect(() => parseAnswer(g729)).toThrow(/G729\/8000.*PCMU, PCMA/);
    expect(reasonOf(() => parseAnswer(carrierAnswer, { offeredCodecs: ['PCMU'] }))).toBe('no_common_codec');
  });

  it('fails on rejected or malformed media', () => {
    expect(reasonOf(() => parseAnswer(sippAnswer.replace('m=audio 6000', 'm=audio 0')))).toBe(
      'media_rejected',
    );
    expect(reasonOf(() => parseAnswer(sippAnswer.replace('c=IN IP4 127.0.0.1\r\n', '')))).toBe('invalid_sdp');
    expect(reasonOf(() => parseAnswer('hello'))).toBe('invalid_sdp');
    expect(reasonOf(() => parseAnswer(sippAnswer.replace('m=audio', 'm=video')))).toBe('invalid_sdp');
  });
});

describe('createAnswer', () => {
  it("answers SIPp's uac offer", () => {
    const offer = sippAnswer.replace('o=user1', 'o=user2');
    const answer = createAnswer(offer, { address: '127.0.0.1', port: 10010 });
    expect(answer.remote).toMatchObject({
      address: '127.0.0.1',
      port: 6000,
      codec: 'PCMU',
      telephoneEventPayloadType: null,
    });
    const parsed = parse(answer.sdp);
    expect(parsed.media).toHaveLength(1);
    expect(parsed.media[0]?.payloads).toBe(0);
    expect(answer.sdp).not.toContain('telephone-event');
  });

  it("answers a carrier's offer: our codec preference, its DTMF number, other m-lines rejected", () => {
    const answer = createAnswer(carrierOffer, {
      address: '192.0.2.10',
      port: 10012,
      codecs: ['PCMA', 'PCMU'],
    });
    expect(answer.remote).toMatchObject({
      address: '198.51.100.7',
      port: 40002,
      codec: 'PCMA',
      payloadType: 8,
      telephoneEventPayloadType: 96,
    });
    const media = parse(answer.sdp).media;
    expect(media.map((m) => m.port)).toEqual([0, 10012, 0]);
    expect(media[1]?.payloads).toBe('8 96');
    expect(answer.sdp).toContain('a=fmtp:96 0-16');
    // The caller reads our answer as an answer.
    expect(parseAnswer(answer.sdp)).toMatchObject({
      address: '192.0.2.10',
      port: 10012,
      codec: 'PCMA',
      telephoneEventPayloadType: 96,
    });
  });

  it('mirrors the offered direction', () => {
    const sendonly = carrierOffer.replace('a=sendrecv', 'a=sendonly');
    const answer = createAnswer(sendonly, { address: '192.0.2.10', port: 10012 });
    expect(answer.sdp).toContain('a=recvonly');
    expect(canSendTo(answer.remote)).toBe(false);
  });

  it('refuses an offer it cannot take', () => {
    const g729Only = carrierOffer.replace('RTP/AVP 18 0 8 96', 'RTP/AVP 18 96');
    expect(reasonOf(() => createAnswer(g729Only, { address: '192.0.2.10', port: 10012 }))).toBe(
      'no_common_codec',
    );
    const srtpOnly = crlf(
      carrierOffer
        .split('\r\n')
        .filter((l) => !l.startsWith('m=audio 40002'))
        .slice(0, 6),
    );
    expect(reasonOf(() => createAnswer(srtpOnly, { address: '192.0.2.10', port: 10012 }))).toBe(
      'no_common_crypto',
    );
  });
});

describe('hostile SDP', () => {
  it('throws nothing but MediaError, whatever the lines say', async () => {
    const fc = (await import('fast-check')).default;
    const lines = [...carrierOffer.split('\r\n'), ...sippAnswer.split('\r\n')].filter(Boolean);
    const junk = fc.oneof(
      fc.constantFrom(...lines),
      fc.string({ maxLength: 40 }).map((text) => `a=${text}`),
      fc.string({ maxLength: 40 }).map((text) => `m=${text}`),
      fc.string({ maxLength: 40 }).map((text) => `c=${text}`),
      fc.constantFrom(
        'a=fmtp:101 16',
        'a=rtpmap:0 PCMU',
        'm=audio 99999 RTP/AVP 0',
        'm=audio x RTP/AVP',
        'c=IN IP4',
      ),
    );
    fc.assert(
      fc.property(fc.array(junk, { maxLength: 25 }), (picked) => {
        const sdp = crlf(['v=0', ...picked]);
        for (const action of [
          () => parseAnswer(sdp),
          () => createAnswer(sdp, { address: '127.0.0.1', port: 10000 }),
        ]) {
          try {
            action();
          } catch (error) {
            if (!isMediaError(error)) throw error;
          }
        }
      }),
      { numRuns: 3000 },
    );
  });
});

describe('connection addresses', () => {
  it('accepts only IP literals', () => {
    expect(
      reasonOf(() => parseAnswer(sippAnswer.replace('c=IN IP4 127.0.0.1', 'c=IN IP4 media.example.com'))),
    ).toBe('invalid_sdp');
    expect(parseAnswer(sippAnswer.replace('c=IN IP4 127.0.0.1', 'c=IN IP6 2001:db8::7')).address).toBe(
      '2001:db8::7',
    );
  });
});
