import { describe, expect, it } from 'vitest';
import { createResampler, resample } from './resampler.js';
import { decodeWav, encodeWav } from './wav.js';

function tone(frequencyHz: number, sampleRateHz: number, durationMs: number, amplitude = 10000): Int16Array {
  const length = Math.round((sampleRateHz * durationMs) / 1000);
  const samples = new Int16Array(length);
  for (let i = 0; i < length; i += 1) {
    samples[i] = Math.round(amplitude * Math.sin((2 * Math.PI * frequencyHz * i) / sampleRateHz));
  }
  return samples;
}

/** Magnitude of one frequency component (a single DFT bin), normalized to the tone amplitude. */
function magnitudeAt(samples: Int16Array, sampleRateHz: number, frequencyHz: number): number {
  let real = 0;
  let imaginary = 0;
  for (let i = 0; i < samples.length; i += 1) {
    const angle = (2 * Math.PI * frequencyHz * i) / sampleRateHz;
    real += (samples[i] ?? 0) * Math.cos(angle);
    imaginary -= (samples[i] ?? 0) * Math.sin(angle);
  }
  return (2 * Math.hypot(real, imaginary)) / samples.length;
}

/** Frequency estimated from positive-going zero crossings over the middle of the signal. */
function zeroCrossingFrequencyHz(samples: Int16Array, sampleRateHz: number): number {
  const start = Math.floor(samples.length * 0.2);
  const end = Math.floor(samples.length * 0.8);
  let crossings = 0;
  let first = -1;
  let last = -1;
  for (let i = start + 1; i < end; i += 1) {
    if ((samples[i - 1] ?? 0) < 0 && (samples[i] ?? 0) >= 0) {
      crossings += 1;
      if (first < 0) first = i;
      last = i;
    }
  }
  return ((crossings - 1) * sampleRateHz) / (last - first);
}

describe('resample', () => {
  const cases: Array<[number, number]> = [
    [8000, 16000],
    [16000, 8000],
    [22050, 8000],
    [8000, 22050],
    [24000, 8000],
  ];
  it.each(cases)('keeps a 440 Hz tone at 440 Hz from %i Hz to %i Hz', (inputRateHz, outputRateHz) => {
    const input = tone(440, inputRateHz, 500);
    const output = resample(input, inputRateHz, outputRateHz);
    expect(output.length).toBe(Math.round((input.length * outputRateHz) / inputRateHz));
    expect(zeroCrossingFrequencyHz(output, outputRateHz)).toBeCloseTo(440, 0);
    const middle = output.subarray(Math.floor(output.length * 0.2), Math.floor(output.length * 0.8));
    expect(magnitudeAt(middle, outputRateHz, 440)).toBeGreaterThan(9000);
    expect(magnitudeAt(middle, outputRateHz, 440)).toBeLessThan(11000);
  });

  it('interpolates linearly when asked: midpoints between neighbours, originals kept', () => {
    const input = Int16Array.from([0, 100, 300, -300, 50]);
    expect(Array.from(resample(input, 8000, 16000, 'linear'))).toEqual([
      0, 50, 100, 200, 300, 0, -300, -125, 50, 25,
    ]);
    const tone440 = resample(tone(440, 8000, 500), 8000, 16000, 'linear');
    expect(zeroCrossingFrequencyHz(tone440, 16000)).toBeCloseTo(440, 0);
  });

  it('removes what lies above the new Nyquist frequency instead of folding it down', () => {
    // 6 kHz at 16 kHz would alias to 2 kHz at 8 kHz without the low-pass filter.
    const output = resample(tone(6000, 16000, 500), 16000, 8000);
    const middle = output.subarray(800, 3200);
    expect(magnitudeAt(middle, 8000, 2000)).toBeLessThan(100);
  });

  it('gives the same samples whether the stream arrives whole or in 20 ms pieces', () => {
    const input = tone(300, 8000, 400);
    const whole = resample(input, 8000, 16000);
    const resampler = createResampler({ inputSampleRateHz: 8000, outputSampleRateHz: 16000 });
    const pieces: Int16Array[] = [];
    for (let offset = 0; offset < input.length; offset += 160) {
      pieces.push(resampler.push(input.subarray(offset, offset + 160)));
    }
    pieces.push(resampler.flush());
    const joined = new Int16Array(pieces.reduce((total, piece) => total + piece.length, 0));
    let position = 0;
    for (const piece of pieces) {
      joined.set(piece, position);
      position += piece.length;
    }
    expect(Array.from(joined)).toEqual(Array.from(whole));
  });

  it('does not delay the signal: a click stays at the same instant', () => {
    const input = new Int16Array(800);
    input[400] = 20000;
    const output = resample(input, 8000, 16000);
    let peakIndex = 0;
    for (let i = 0; i < output.length; i += 1) {
      if ((output[i] ?? 0) > (output[peakIndex] ?? 0)) peakIndex = i;
    }
    expect(peakIndex).toBe(800);
  });
});

describe('wav', () => {
  it('round-trips samples and sample rate', () => {
    const samples = tone(1000, 8000, 50);
    const decoded = decodeWav(encodeWav(samples, 8000));
    expect(decoded.sampleRateHz).toBe(8000);
    expect(Array.from(decoded.samples)).toEqual(Array.from(samples));
  });

  it('reads a streamed WAV whose data size is unknown', () => {
    const bytes = encodeWav(tone(1000, 24000, 10), 24000);
    new DataView(bytes.buffer).setUint32(40, 0xffffffff, true);
    expect(decodeWav(bytes).samples.length).toBe(240);
  });

  it('rejects what is not a WAV', () => {
    expect(() => decodeWav(new TextEncoder().encode('{"error":"nope"}'))).toThrow(/RIFF/);
  });
});
