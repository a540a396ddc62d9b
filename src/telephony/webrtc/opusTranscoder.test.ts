import { describe, expect, it } from 'vitest';
import { decodeG711, encodeG711 } from '../rtp/g711.js';
import { parseRtpPacket } from '../rtp/rtpPacket.js';
import { OpusVoiceCodec } from './opusCodec.js';
import { OpusTranscoder } from './opusTranscoder.js';
import { chooseBrowserCodec } from './webRtcLeg.js';

/** A sine of `amplitude` at `frequencyHz`, samples `from`..`from + count` of an endless one. */
function tone(
  sampleRateHz: number,
  frequencyHz: number,
  amplitude: number,
  from: number,
  count: number,
): Int16Array {
  const samples = new Int16Array(count);
  for (let i = 0; i < count; i++) {
    samples[i] = Math.round(amplitude * Math.sin((2 * Math.PI * frequencyHz * (from + i)) / sampleRateHz));
  }
  return samples;
}

function rms(samples: Int16Array): number {
  let sum = 0;
  for (const sample of samples) sum += sample * sample;
  return Math.sqrt(sum / samples.length);
}

/** Frequency from upward zero crossings, interpolated between samples (a clean tone's is exact). */
function toneFrequencyHz(samples: Int16Array, sampleRateHz: number): number {
  const crossings: number[] = [];
  for (let i = 1; i < samples.length; i++) {
    const before = samples[i - 1] as number;
    const after = samples[i] as number;
    if (before < 0 && after >= 0) crossings.push(i - 1 + -before / (after - before));
  }
  const first = crossings[0] as number;
  const last = crossings[crossings.length - 1] as number;
  return ((crossings.length - 1) * sampleRateHz) / (last - first);
}

/** The share of a signal's energy at one frequency (Goertzel): ~1 for a pure tone there. */
function toneShare(samples: Int16Array, frequencyHz: number, sampleRateHz: number): number {
  const coefficient = 2 * Math.cos((2 * Math.PI * frequencyHz) / sampleRateHz);
  let previous = 0;
  let beforePrevious = 0;
  let energy = 0;
  for (const sample of samples) {
    const current = sample + coefficient * previous - beforePrevious;
    beforePrevious = previous;
    previous = current;
    energy += sample * sample;
  }
  const power = previous ** 2 + beforePrevious ** 2 - coefficient * previous * beforePrevious;
  return power / ((energy * samples.length) / 2);
}

function decibels(ratio: number): number {
  return 20 * Math.log10(ratio);
}

/** The browser's side: 20 ms Opus packets of a 48 kHz tone, as Chromium sends them. */
function browserPackets(frequencyHz: number, amplitude: number, count: number): Uint8Array[] {
  const browser = new OpusVoiceCodec({ sampleRateHz: 48_000, bitrateBps: 32_000, complexity: 10 });
  const packets = Array.from({ length: count }, (_, k) =>
    browser.encode(tone(48_000, frequencyHz, amplitude, k * 960, 960)),
  );
  browser.close();
  return packets;
}

describe('OpusTranscoder', () => {
  it("turns the browser's 48 kHz Opus into 20 ms PCMU frames that keep the tone's frequency and level", () => {
    const transcoder = new OpusTranscoder();
    const frames = browserPackets(1_000, 8_000, 50).flatMap((packet, k) =>
      transcoder.fromBrowser((65_530 + k) & 0xffff, packet).map((datagram) => parseRtpPacket(datagram)),
    );
    transcoder.close();
    expect(frames).toHaveLength(50);
    // One stream the session plays a frame per tick: PCMU, 160 samples, consecutive numbers.
    for (const [k, frame] of frames.entries()) {
      expect(frame).toMatchObject({ payloadType: 0, ssrc: frames[0]?.ssrc });
      expect(frame?.payload).toHaveLength(160);
      expect(frame?.sequenceNumber).toBe(((frames[0]?.sequenceNumber as number) + k) & 0xffff);
      expect(frame?.timestamp).toBe(((frames[0]?.timestamp as number) + 160 * k) >>> 0);
    }
    // After the codec's start-up (the first 100 ms), the tone as the agent hears it.
    const heard = decodeG711(
      'PCMU',
      Buffer.concat(frames.slice(5).map((frame) => frame?.payload as Uint8Array)),
    );
    expect(toneFrequencyHz(heard, 8_000)).toBeCloseTo(1_000, -1);
    expect(toneShare(heard, 1_000, 8_000)).toBeGreaterThan(0.9);
    expect(Math.abs(decibels(rms(heard) / (8_000 / Math.SQRT2)))).toBeLessThan(1.5);
  });

  it("turns the session's PCMU into Opus on the 48 kHz clock that the browser decodes to the same tone", () => {
    const transcoder = new OpusTranscoder();
    const browser = new OpusVoiceCodec({ sampleRateHz: 48_000 });
    // The session's timestamps wrap during these 50 frames: the 48 kHz ones wrap with them.
    const firstTimestamp = 2 ** 32 - 160 * 20;
    const decoded: Int16Array[] = [];
    for (let k = 0; k < 50; k++) {
      const header = {
        marker: k === 0,
        sequenceNumber: 100 + k,
        timestamp: (firstTimestamp + 160 * k) >>> 0,
      };
      const packet = transcoder.toBrowser(header, encodeG711('PCMU', tone(8_000, 700, 6_000, k * 160, 160)));
      expect(packet?.header).toMatchObject({
        marker: k === 0,
        sequenceNumber: 100 + k,
        timestamp: (((firstTimestamp * 6) >>> 0) + 960 * k) >>> 0,
      });
      decoded.push(browser.decode(packet?.payload as Uint8Array));
    }
    expect(transcoder.counts.framesEncoded).toBe(50);
    // What the browser plays: 20 ms at 48 kHz per packet, the tone kept (telephone-band: no more).
    expect(decoded.every((frame) => frame.length === 960)).toBe(true);
    const played = Int16Array.from(decoded.slice(5).flatMap((frame) => Array.from(frame)));
    expect(toneFrequencyHz(played, 48_000)).toBeCloseTo(700, -1);
    expect(toneShare(played, 700, 48_000)).toBeGreaterThan(0.9);
    expect(Math.abs(decibels(rms(played) / (6_000 / Math.SQRT2)))).toBeLessThan(1.5);
    // Not a 20 ms frame: nothing to send rather than a wrong one.
    expect(
      transcoder.toBrowser({ marker: false, sequenceNumber: 1, timestamp: 0 }, new Uint8Array(100)),
    ).toBeNull();
    browser.close();
    transcoder.close();
  });

  it('leaves lost browser packets as a gap the session conceals, and drops late ones', () => {
    const transcoder = new OpusTranscoder();
    const packets = browserPackets(440, 5_000, 20);
    const sent = [0, 1, 2, 3, 7, 8, 5, 9];
    const frames = sent.flatMap((k) =>
      transcoder.fromBrowser(1_000 + k, packets[k] as Uint8Array).map((datagram) => parseRtpPacket(datagram)),
    );
    transcoder.close();
    // 4, 5, 6 were missing when 7 came (5 came late and is dropped): three numbers and 60 ms skipped.
    expect(frames).toHaveLength(7);
    const first = frames[0]?.sequenceNumber as number;
    expect(frames.map((frame) => ((frame?.sequenceNumber as number) - first) & 0xffff)).toEqual([
      0, 1, 2, 3, 7, 8, 9,
    ]);
    expect(((frames[4]?.timestamp as number) - (frames[3]?.timestamp as number)) >>> 0).toBe(4 * 160);
    expect(transcoder.counts).toMatchObject({ packetsDecoded: 7, packetsLost: 3, packetsDropped: 1 });
  });

  it('keeps each codec to its own memory when many calls run at once', () => {
    // opusscript's own wrapper works at twice the addresses it allocated: with forty codecs its
    // decode runs off the heap. Ours must encode the same bytes alone and among forty others.
    const frames = Array.from({ length: 10 }, (_, k) => tone(8_000, 500 + 50 * k, 7_000, k * 160, 160));
    const alone = new OpusVoiceCodec({ sampleRateHz: 8_000 });
    const expected = frames.map((frame) => Buffer.from(alone.encode(frame)).toString('hex'));
    alone.close();
    const crowd = Array.from({ length: 40 }, () => new OpusVoiceCodec({ sampleRateHz: 8_000 }));
    const outputs: string[][] = crowd.map(() => []);
    for (const frame of frames) {
      for (const [i, codec] of crowd.entries()) {
        outputs[i]?.push(Buffer.from(codec.encode(frame)).toString('hex'));
        codec.decode(browserPacket);
      }
    }
    for (const codec of crowd) codec.close();
    expect(outputs.every((output) => JSON.stringify(output) === JSON.stringify(expected))).toBe(true);
  });
});

const browserPacket = browserPackets(300, 4_000, 1)[0] as Uint8Array;

describe('chooseBrowserCodec', () => {
  const offer = (formats: string) =>
    `v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF ${formats}\r\n` +
    'c=IN IP4 0.0.0.0\r\na=rtpmap:111 opus/48000/2\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:8 PCMA/8000\r\n';

  it('answers Opus when offered, whatever its place, and PCMU only when it is not', () => {
    expect(chooseBrowserCodec(offer('111 0 8'))).toBe('opus');
    expect(chooseBrowserCodec(offer('0 111'))).toBe('opus');
    expect(chooseBrowserCodec(offer('0 8'))).toBe('PCMU');
    expect(chooseBrowserCodec('v=0\r\n')).toBe('PCMU');
    // Opus off (CALLWRIGHT_WEB_CALL_OPUS=false, the default): PCMU whatever is offered.
    expect(chooseBrowserCodec(offer('111 0 8'), false)).toBe('PCMU');
  });
});
