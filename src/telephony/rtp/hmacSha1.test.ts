import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HmacSha1 } from './hmacSha1.js';

function mac(key: Uint8Array, data: Uint8Array, trailer: number | null = null, bytes = 20): string {
  const out = Buffer.alloc(bytes);
  new HmacSha1(key).macInto(data, data.length, trailer, out, 0, bytes);
  return out.toString('hex');
}

describe('HmacSha1', () => {
  it('gives RFC 2202’s HMAC-SHA1 test cases', () => {
    const cases: Array<[Buffer, Buffer, string]> = [
      [Buffer.alloc(20, 0x0b), Buffer.from('Hi There'), 'b617318655057264e28bc0b6fb378c8ef146be00'],
      [
        Buffer.from('Jefe'),
        Buffer.from('what do ya want for nothing?'),
        'effcdf6ae5eb2fa2d27416d5f184df9c259a7c79',
      ],
      [Buffer.alloc(20, 0xaa), Buffer.alloc(50, 0xdd), '125d7342b9ac11cd91a39af48aa17b4f63f175d3'],
      [
        Buffer.from('0102030405060708090a0b0c0d0e0f10111213141516171819', 'hex'),
        Buffer.alloc(50, 0xcd),
        '4c9007f4026250c6bc8414f9bf50c86c2d7235da',
      ],
      [
        Buffer.alloc(80, 0xaa),
        Buffer.from('Test Using Larger Than Block-Size Key - Hash Key First'),
        'aa4ae5e15272d00e95705637ce8a3b55ed402112',
      ],
      [
        Buffer.alloc(80, 0xaa),
        Buffer.from('Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data'),
        'e8e99d0f45237d786d6bbaa7965c7808bbff1a91',
      ],
    ];
    for (const [key, data, expected] of cases) expect(mac(key, data)).toBe(expected);
  });

  it('matches node:crypto for every length up to 300 bytes, with and without a trailer', () => {
    const key = randomBytes(20);
    const keyed = new HmacSha1(key);
    const out = Buffer.alloc(20);
    for (let length = 0; length <= 300; length++) {
      const data = randomBytes(length + 7);
      const trailer = (length * 2654435761) >>> 0;
      keyed.macInto(data, length, trailer, out, 0, 20);
      const word = Buffer.alloc(4);
      word.writeUInt32BE(trailer);
      const expected = createHmac('sha1', key).update(data.subarray(0, length)).update(word).digest();
      expect(out.toString('hex'), `length ${length}`).toBe(expected.toString('hex'));
      keyed.macInto(data, length, null, out, 0, 20);
      expect(out).toEqual(createHmac('sha1', key).update(data.subarray(0, length)).digest());
    }
  });

  it('writes only the bytes asked for, where asked', () => {
    const key = randomBytes(20);
    const data = randomBytes(172);
    const out = Buffer.alloc(200, 0xee);
    new HmacSha1(key).macInto(data, 172, 7, out, 172, 10);
    const full = mac(key, data, 7);
    expect(out.subarray(172, 182).toString('hex')).toBe(full.slice(0, 20));
    expect(out.subarray(182).every((byte) => byte === 0xee)).toBe(true);
    expect(out.subarray(0, 172).every((byte) => byte === 0xee)).toBe(true);
    expect(() => new HmacSha1(key).macInto(data, 173, null, out, 0, 10)).toThrow(RangeError);
    expect(() => new HmacSha1(key).macInto(data, 172, null, out, 195, 10)).toThrow(RangeError);
  });
});
