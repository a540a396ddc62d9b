import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  aesCounterKeystream,
  deriveSrtpKeys,
  SrtcpReceiver,
  SrtcpSender,
  SrtpReceiver,
  SrtpSender,
} from './srtp.js';

const hex = (text: string): Buffer => Buffer.from(text.replace(/\s+/g, ''), 'hex');

// RFC 3711 Appendix B.3 (key derivation) and libsrtp's srtp_driver reference packet.
const rfcMasterKeySalt = hex('E1F97A0D3E018BE0D64FA32C06DE4139 0EC675AD498AFEEBB6960B3AABE6');

function rtpPacket(seq: number, ssrc: number, payload: Buffer, room = 10): Buffer {
  const packet = Buffer.alloc(12 + payload.length + room);
  packet[0] = 0x80;
  packet[1] = 0;
  packet.writeUInt16BE(seq, 2);
  packet.writeUInt32BE(seq * 160, 4);
  packet.writeUInt32BE(ssrc, 8);
  payload.copy(packet, 12);
  return packet;
}

describe('SRTP (RFC 3711)', () => {
  it('derives the session keys of Appendix B.3', () => {
    const keys = deriveSrtpKeys(rfcMasterKeySalt);
    expect(keys.cipherKey.toString('hex')).toBe('c61e7a93744f39ee10734afe3ff7a087');
    expect(keys.cipherSalt.toString('hex')).toBe('30cbbc08863d8c85d49db34a9ae1');
    expect(keys.authKey.toString('hex')).toBe('cebe321f6ff7716b6fd4ab49af256a156d38baa4');
  });

  it('produces the AES-CM keystream of Appendix B.2', () => {
    const keystream = aesCounterKeystream(
      hex('2B7E151628AED2A6ABF7158809CF4F3C'),
      hex('F0F1F2F3F4F5F6F7F8F9FAFBFCFD0000'),
      48,
    );
    expect(keystream.toString('hex')).toBe(
      'e03ead0935c95e80e166b16dd92b4eb4d23513162b02d0f72a43a2fe4a5f97ab41e95b3bb0a2e8dd477901e4fca894c0',
    );
  });

  it('protects the libsrtp reference packet to its reference ciphertext and back', () => {
    const plain = hex('800f1234decafbad cafebabe abababababababababababababababab');
    const buffer = Buffer.alloc(plain.length + 10);
    plain.copy(buffer);
    const length = new SrtpSender('AES_CM_128_HMAC_SHA1_80', rfcMasterKeySalt).protect(buffer, plain.length);
    expect(buffer.subarray(0, length).toString('hex')).toBe(
      '800f1234decafbadcafebabe4e55dc4ce79978d88ca4d215949d2402b78d6acc99ea179b8dbb',
    );
    const received = Buffer.from(buffer.subarray(0, length));
    const result = new SrtpReceiver('AES_CM_128_HMAC_SHA1_80', rfcMasterKeySalt).unprotect(received);
    expect(result).toEqual({ length: plain.length });
    expect(received.subarray(0, plain.length).equals(plain)).toBe(true);
  });

  it('refuses a packet with any bit changed, a truncated one and one under another key', () => {
    const key = randomBytes(30);
    const payload = randomBytes(160);
    const packet = rtpPacket(7, 0x1234, payload);
    const length = new SrtpSender('AES_CM_128_HMAC_SHA1_80', key).protect(packet, 172);
    for (const at of [1, 3, 9, 40, length - 1]) {
      const tampered = Buffer.from(packet.subarray(0, length));
      tampered[at] = tampered[at]! ^ 0x01;
      expect(new SrtpReceiver('AES_CM_128_HMAC_SHA1_80', key).unprotect(tampered)).toEqual({
        refused: 'authentication',
      });
    }
    const truncated = Buffer.from(packet.subarray(0, 15));
    expect(new SrtpReceiver('AES_CM_128_HMAC_SHA1_80', key).unprotect(truncated)).toHaveProperty('refused');
    const other = new SrtpReceiver('AES_CM_128_HMAC_SHA1_80', randomBytes(30));
    expect(other.unprotect(Buffer.from(packet.subarray(0, length)))).toEqual({ refused: 'authentication' });
  });

  it('refuses a replayed packet and one older than the 64-packet window, accepts reordering', () => {
    const key = randomBytes(30);
    const sender = new SrtpSender('AES_CM_128_HMAC_SHA1_32', key);
    const receiver = new SrtpReceiver('AES_CM_128_HMAC_SHA1_32', key);
    const sent = new Map<number, Buffer>();
    for (let seq = 100; seq < 200; seq++) {
      const packet = rtpPacket(seq, 9, Buffer.alloc(160, seq & 0xff));
      sent.set(seq, packet.subarray(0, sender.protect(packet, 172)));
    }
    expect(sent.get(100)!.length).toBe(172 + 4);
    const copy = (seq: number): Buffer => Buffer.from(sent.get(seq)!);
    expect(receiver.unprotect(copy(102))).toEqual({ length: 172 });
    expect(receiver.unprotect(copy(101))).toEqual({ length: 172 });
    expect(receiver.unprotect(copy(102))).toEqual({ refused: 'replay' });
    expect(receiver.unprotect(copy(199))).toEqual({ length: 172 });
    expect(receiver.unprotect(copy(150))).toEqual({ length: 172 });
    expect(receiver.unprotect(copy(120))).toEqual({ refused: 'replay' });
  });

  it('keeps sender and receiver in step across the sequence-number rollover', () => {
    const key = randomBytes(30);
    const sender = new SrtpSender('AES_CM_128_HMAC_SHA1_80', key);
    const receiver = new SrtpReceiver('AES_CM_128_HMAC_SHA1_80', key);
    const packets: Buffer[] = [];
    for (let n = 0; n < 40; n++) {
      const seq = (65520 + n) & 0xffff;
      const payload = Buffer.alloc(160, n);
      const packet = rtpPacket(seq, 77, payload);
      packets.push(Buffer.from(packet.subarray(0, sender.protect(packet, 172))));
    }
    // Two packets swapped across the wrap: 65535 arrives after 0.
    [packets[15], packets[16]] = [packets[16]!, packets[15]!];
    for (const packet of packets) {
      const result = receiver.unprotect(packet);
      expect(result).toEqual({ length: 172 });
      const n = packet[12]!;
      expect(packet.readUInt16BE(2)).toBe((65520 + n) & 0xffff);
      expect(packet.subarray(12, 172).every((byte) => byte === n)).toBe(true);
    }
  });

  it('encrypts every packet with its own keystream when the next ones are made ahead', () => {
    // Against RFC 3711 §4.1.1 computed packet by packet: in order, across a gap, backwards, with
    // another SSRC, with a longer payload than the keystream made ahead, and across the ROC wrap.
    const masterKeySalt = randomBytes(30);
    const keys = deriveSrtpKeys(masterKeySalt);
    const expectedPayload = (plain: Buffer, ssrc: number, roc: number, seq: number): Buffer => {
      const iv = Buffer.alloc(16);
      keys.cipherSalt.copy(iv);
      iv.writeUInt32BE((iv.readUInt32BE(4) ^ ssrc) >>> 0, 4);
      iv.writeUInt32BE((iv.readUInt32BE(8) ^ roc) >>> 0, 8);
      iv.writeUInt16BE(iv.readUInt16BE(12) ^ seq, 12);
      const keystream = aesCounterKeystream(keys.cipherKey, iv, plain.length);
      return Buffer.from(plain.map((byte, i) => byte ^ (keystream[i] as number)));
    };
    const sender = new SrtpSender('AES_CM_128_HMAC_SHA1_80', masterKeySalt);
    const receiver = new SrtpReceiver('AES_CM_128_HMAC_SHA1_80', masterKeySalt);
    const steps: Array<[seq: number, ssrc: number, bytes: number, roc: number]> = [
      ...Array.from({ length: 40 }, (_, i): [number, number, number, number] => [i, 7, 160, 0]),
      [1000, 7, 160, 0],
      [999, 7, 160, 0],
      [1001, 7, 400, 0],
      [1002, 9, 160, 0],
      [1003, 7, 20, 0],
      ...Array.from({ length: 12 }, (_, i): [number, number, number, number] => [
        (65530 + i) % 65536,
        7,
        160,
        65530 + i > 65535 ? 1 : 0,
      ]),
    ];
    for (const [seq, ssrc, bytes, roc] of steps) {
      const plain = randomBytes(bytes);
      const packet = rtpPacket(seq, ssrc, plain);
      const length = sender.protect(packet, 12 + bytes);
      expect(packet.subarray(12, 12 + bytes), `seq ${seq} ssrc ${ssrc}`).toEqual(
        expectedPayload(plain, ssrc, roc, seq),
      );
      // The receiver's keystream, made ahead from where it is, gives the plaintext back.
      const received = Buffer.from(packet.subarray(0, length));
      expect(receiver.unprotect(received)).toEqual({ length: 12 + bytes });
      expect(received.subarray(12, 12 + bytes)).toEqual(plain);
    }
  });

  it('protects the libsrtp reference RTCP packet (index 1) to its reference SRTCP and back, once', () => {
    const plain = hex('81c8000bcafebabe abababababababababababababababab');
    const sender = new SrtcpSender(rfcMasterKeySalt);
    const first = sender.protect(plain);
    expect(first.readUInt32BE(plain.length)).toBe(0x80000000);
    const second = sender.protect(plain);
    expect(second.toString('hex')).toBe(
      '81c8000bcafebabe7128035be487b9bdbef89041f977a5a880000001993e08cd54d6c1230798',
    );
    const receiver = new SrtcpReceiver(rfcMasterKeySalt);
    expect(receiver.unprotect(Buffer.from(second))?.equals(plain)).toBe(true);
    expect(receiver.unprotect(Buffer.from(second))).toBeNull(); // replayed
    expect(receiver.unprotect(Buffer.from(first))?.equals(plain)).toBe(true); // older, not yet seen
    const tampered = Buffer.from(second);
    tampered[12] = tampered[12]! ^ 1;
    expect(new SrtcpReceiver(rfcMasterKeySalt).unprotect(tampered)).toBeNull();
  });
});
