import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  DtmfReceiver,
  DtmfSender,
  digitForEvent,
  eventForDigit,
  readDtmfPayload,
  writeDtmfPayload,
} from './dtmf.js';
import { parseRtpPacket } from './rtpPacket.js';

/** UDP payloads of an Ethernet/IPv4 pcap (as SIPp ships them). */
function udpPayloadsOfPcap(path: string): Uint8Array[] {
  const file = readFileSync(path);
  expect(file.readUInt32LE(0)).toBe(0xa1b2c3d4);
  expect(file.readUInt32LE(20)).toBe(1); // Ethernet
  const out: Uint8Array[] = [];
  let offset = 24;
  while (offset + 16 <= file.length) {
    const length = file.readUInt32LE(offset + 8);
    const frame = file.subarray(offset + 16, offset + 16 + length);
    offset += 16 + length;
    const ipHeaderBytes = (frame[14]! & 0x0f) * 4;
    if (frame[14 + 9] !== 17) continue;
    out.push(frame.subarray(14 + ipHeaderBytes + 8));
  }
  return out;
}

describe('RFC 4733 payload', () => {
  it('maps digits to events and back', () => {
    expect(eventForDigit('0')).toBe(0);
    expect(eventForDigit('*')).toBe(10);
    expect(eventForDigit('#')).toBe(11);
    expect(eventForDigit('d')).toBe(15);
    expect(eventForDigit('x')).toBeNull();
    expect(digitForEvent(11)).toBe('#');
    expect(digitForEvent(16)).toBeNull();
  });

  it('round-trips the event payload', () => {
    const target = new Uint8Array(4);
    writeDtmfPayload(target, 0, { event: 11, end: true, volume: 10, duration: 1280 });
    expect(Array.from(target)).toEqual([11, 0x8a, 0x05, 0x00]);
    expect(readDtmfPayload(target)).toEqual({ event: 11, end: true, volume: 10, duration: 1280 });
    expect(readDtmfPayload(new Uint8Array(3))).toBeNull();
  });
});

describe('DtmfSender', () => {
  it('sends growing durations on one timestamp, then three end packets, then a gap', async () => {
    const sender = new DtmfSender(160);
    let resolved = false;
    void sender.enqueue('5', { durationMs: 100, gapMs: 40 }, 20).then(() => {
      resolved = true;
    });
    const payload = new Uint8Array(4);
    const frames: { marker: boolean; timestamp: number; duration: number; end: boolean }[] = [];
    let timestamp = 1000;
    let audioFrames = 0;
    for (let tick = 0; tick < 12 && sender.busy; tick++, timestamp += 160) {
      const frame = sender.nextFrame(timestamp, payload, 0);
      if (!frame) {
        audioFrames++;
        continue;
      }
      const value = readDtmfPayload(payload)!;
      expect(value.event).toBe(5);
      frames.push({
        marker: frame.marker,
        timestamp: frame.timestamp,
        duration: value.duration,
        end: value.end,
      });
    }
    expect(frames.map((f) => f.duration)).toEqual([160, 320, 480, 640, 800, 800, 800]);
    expect(frames.map((f) => f.end)).toEqual([false, false, false, false, true, true, true]);
    expect(frames.map((f) => f.marker)).toEqual([true, false, false, false, false, false, false]);
    expect(new Set(frames.map((f) => f.timestamp))).toEqual(new Set([1000]));
    expect(audioFrames).toBe(2);
    expect(sender.busy).toBe(false);
    await Promise.resolve();
    expect(resolved).toBe(true);
  });
});

describe('DtmfReceiver', () => {
  it('reports the digit of SIPp dtmf_2833_1.pcap once', () => {
    const receiver = new DtmfReceiver();
    const digits: string[] = [];
    const packets = udpPayloadsOfPcap('/usr/share/sip-tester/dtmf_2833_1.pcap');
    expect(packets.length).toBeGreaterThanOrEqual(4);
    for (const datagram of packets) {
      const packet = parseRtpPacket(datagram);
      expect(packet?.payloadType).toBe(101);
      const digit = receiver.accept(packet!.timestamp, packet!.payload);
      if (digit) digits.push(digit);
    }
    expect(digits).toEqual(['1']);
  });

  it('reports the same key pressed twice as two digits', () => {
    const receiver = new DtmfReceiver();
    const payload = Uint8Array.of(7, 0x0a, 0, 160);
    expect(receiver.accept(100, payload)).toBe('7');
    expect(receiver.accept(100, payload)).toBeNull();
    expect(receiver.accept(2000, payload)).toBe('7');
    expect(receiver.accept(3000, Uint8Array.of(16, 0, 0, 160))).toBeNull();
  });
});
