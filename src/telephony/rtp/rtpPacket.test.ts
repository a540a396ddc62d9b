import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createRtpHeader,
  encodeRtpPacket,
  parseRtpPacket,
  readRtpHeader,
  sequenceDelta,
  writeRtpHeader,
} from './rtpPacket.js';

describe('RTP packets', () => {
  it('round-trips header fields and payload', () => {
    const payload = Uint8Array.from({ length: 160 }, (_, i) => i);
    const packet = encodeRtpPacket({
      marker: true,
      payloadType: 8,
      sequenceNumber: 65535,
      timestamp: 0xfffffff0,
      ssrc: 0xdeadbeef,
      payload,
    });
    expect(packet.length).toBe(172);
    expect(packet[0]).toBe(0x80);
    expect(packet[1]).toBe(0x88);
    const parsed = parseRtpPacket(packet);
    expect(parsed).not.toBeNull();
    expect(parsed?.marker).toBe(true);
    expect(parsed?.payloadType).toBe(8);
    expect(parsed?.sequenceNumber).toBe(65535);
    expect(parsed?.timestamp).toBe(0xfffffff0);
    expect(parsed?.ssrc).toBe(0xdeadbeef);
    expect(Array.from(parsed?.payload ?? [])).toEqual(Array.from(payload));
  });

  it('skips CSRCs, a header extension and padding', () => {
    const payload = [1, 2, 3, 4, 5];
    const bytes = [
      0x80 | 0x20 | 0x10 | 2, // V=2, P, X, CC=2
      0x00,
      0x12,
      0x34,
      0,
      0,
      0x01,
      0x00,
      1,
      2,
      3,
      4,
      ...[9, 9, 9, 9, 8, 8, 8, 8], // two CSRCs
      0xbe,
      0xde,
      0x00,
      0x01, // extension profile, length 1 word
      7,
      7,
      7,
      7,
      ...payload,
      0,
      0,
      3, // 3 bytes of padding
    ];
    const parsed = parseRtpPacket(Uint8Array.from(bytes));
    expect(parsed?.csrcCount).toBe(2);
    expect(parsed?.extension).toBe(true);
    expect(parsed?.padding).toBe(true);
    expect(parsed?.sequenceNumber).toBe(0x1234);
    expect(parsed?.timestamp).toBe(256);
    expect(parsed?.ssrc).toBe(0x01020304);
    expect(Array.from(parsed?.payload ?? [])).toEqual(payload);
  });

  it('rejects what is not RTP', () => {
    const good = encodeRtpPacket({
      marker: false,
      payloadType: 0,
      sequenceNumber: 1,
      timestamp: 1,
      ssrc: 1,
      payload: new Uint8Array(4),
    });
    expect(parseRtpPacket(good.subarray(0, 11))).toBeNull();
    const v1 = Buffer.from(good);
    v1[0] = 0x40;
    expect(parseRtpPacket(v1)).toBeNull();
    const rtcp = Buffer.from(good);
    rtcp[1] = 200; // RTCP sender report
    expect(parseRtpPacket(rtcp)).toBeNull();
    const manyCsrcs = Buffer.from(good);
    manyCsrcs[0] = 0x8f;
    expect(parseRtpPacket(manyCsrcs)).toBeNull();
    const badPadding = Buffer.from(good);
    badPadding[0] = 0xa0;
    badPadding[badPadding.length - 1] = 0;
    expect(parseRtpPacket(badPadding)).toBeNull();
    badPadding[badPadding.length - 1] = 200;
    expect(parseRtpPacket(badPadding)).toBeNull();
    const longExtension = Buffer.from(good);
    longExtension[0] = 0x90;
    longExtension[14] = 0xff;
    expect(parseRtpPacket(longExtension)).toBeNull();
  });

  it('never throws and never reports a payload outside the datagram, whatever arrives', () => {
    const header = createRtpHeader();
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 300 }), fc.boolean(), (bytes, forceV2) => {
        if (forceV2 && bytes.length > 0) bytes[0] = (bytes[0]! & 0x3f) | 0x80;
        if (readRtpHeader(bytes, header)) {
          expect(header.payloadOffset).toBeGreaterThanOrEqual(12);
          expect(header.payloadLength).toBeGreaterThanOrEqual(0);
          expect(header.payloadOffset + header.payloadLength).toBeLessThanOrEqual(bytes.length);
        }
      }),
      { numRuns: 5000 },
    );
  });

  it('writes into a reused buffer at an offset', () => {
    const target = new Uint8Array(20).fill(0xaa);
    expect(
      writeRtpHeader(
        target,
        { marker: false, payloadType: 101, sequenceNumber: 70000, timestamp: 2 ** 32 + 5, ssrc: 7 },
        4,
      ),
    ).toBe(12);
    const parsed = parseRtpPacket(target.subarray(4));
    expect(parsed?.payloadType).toBe(101);
    expect(parsed?.sequenceNumber).toBe(70000 & 0xffff);
    expect(parsed?.timestamp).toBe(5);
    expect(target[0]).toBe(0xaa);
  });

  it('computes sequence distance across the 16-bit wrap', () => {
    expect(sequenceDelta(2, 65534)).toBe(4);
    expect(sequenceDelta(65534, 2)).toBe(-4);
    expect(sequenceDelta(100, 100)).toBe(0);
  });
});
