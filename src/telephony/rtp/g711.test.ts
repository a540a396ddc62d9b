import alawmulaw from 'alawmulaw';
import { describe, expect, it } from 'vitest';
import { decodeG711, encodeG711, encodeG711Into, type G711Codec, silenceByteByCodec } from './g711.js';

/** A speech-like test signal: a few harmonics under a syllable-rate envelope, plus a little noise. */
function speechLike(samples: number): Int16Array {
  const out = new Int16Array(samples);
  let seed = 12345;
  for (let i = 0; i < samples; i++) {
    const t = i / 8000;
    const envelope = 0.2 + 0.8 * Math.abs(Math.sin(2 * Math.PI * 3 * t));
    const f0 = 140 + 30 * Math.sin(2 * Math.PI * 0.7 * t);
    let v = 0;
    for (let h = 1; h <= 6; h++) v += Math.sin(2 * Math.PI * f0 * h * t) / h;
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    const noise = (seed / 0x7fffffff - 0.5) * 0.05;
    out[i] = Math.round(6000 * envelope * (v + noise));
  }
  return out;
}

function snrDb(reference: Int16Array, decoded: Int16Array): number {
  let signal = 0;
  let error = 0;
  for (let i = 0; i < reference.length; i++) {
    const r = reference[i]!;
    signal += r * r;
    error += (r - decoded[i]!) ** 2;
  }
  return 10 * Math.log10(signal / error);
}

describe.each<G711Codec>(['PCMU', 'PCMA'])('G.711 %s', (codec) => {
  const lib = codec === 'PCMU' ? alawmulaw.mulaw : alawmulaw.alaw;

  it('encodes exactly like alawmulaw', () => {
    const all = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
    expect(Array.from(encodeG711(codec, all))).toEqual(Array.from(lib.encode(all)));
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(Array.from(decodeG711(codec, bytes))).toEqual(Array.from(lib.decode(bytes)));
  });

  it('keeps speech at about 37 dB SNR through a round trip', () => {
    const pcm = speechLike(8000 * 2);
    const snr = snrDb(pcm, decodeG711(codec, encodeG711(codec, pcm)));
    expect(snr).toBeGreaterThan(33);
    expect(snr).toBeLessThan(45);
  });

  it('is stable on its own output and turns 20 ms into 160 bytes', () => {
    const bytes = Uint8Array.from({ length: 160 }, (_, i) => (i * 37) & 0xff);
    const once = decodeG711(codec, bytes);
    expect(Array.from(decodeG711(codec, encodeG711(codec, once)))).toEqual(Array.from(once));
    const target = new Uint8Array(172);
    expect(encodeG711Into(codec, once, target, 12)).toBe(160);
    expect(decodeG711(codec, Uint8Array.of(silenceByteByCodec[codec]))[0]).toBeLessThanOrEqual(8);
  });
});
