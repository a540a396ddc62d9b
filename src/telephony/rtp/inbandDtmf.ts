import { isDtmfDigits } from './dtmf.js';
import { goertzelCoefficient, goertzelPower } from './goertzel.js';

/**
 * DTMF as audio (ITU-T Q.23/Q.24): each key is a low "row" tone plus a high "column" tone. For
 * lines that do not carry RFC 4733 events (no telephone-event in the SDP, or a trunk or PBX that
 * drops them): the agent's keys are played into the audio, and a far end's keys are heard in it.
 * 8 kHz mono Int16, 20 ms frames.
 */

const rowsHz = [697, 770, 852, 941] as const;
const columnsHz = [1209, 1336, 1477, 1633] as const;
const keypad = ['123A', '456B', '789C', '*0#D'] as const;
const sampleRateHz = 8_000;
const rowCoefficients = rowsHz.map(goertzelCoefficient);
const columnCoefficients = columnsHz.map(goertzelCoefficient);

export interface InbandDtmfOptions {
  /** Tone length per key (default 120 ms; Q.24 asks for ≥ 40 ms). */
  durationMs?: number;
  /** Silence after each key (default 80 ms). */
  gapMs?: number;
  /** Peak of each of the two tones, in sample units (default 7,000, about −13.4 dBFS each). */
  amplitude?: number;
}

/** The audio of `digits` as dual tones, each followed by a gap; throws on a non-DTMF key. */
export function dtmfToneAudio(digits: string, options: InbandDtmfOptions = {}): Int16Array {
  if (!isDtmfDigits(digits)) throw new RangeError(`not DTMF digits: ${digits}`);
  const toneSamples = Math.round(((options.durationMs ?? 120) * sampleRateHz) / 1000);
  const gapSamples = Math.round(((options.gapMs ?? 80) * sampleRateHz) / 1000);
  const amplitude = options.amplitude ?? 7_000;
  const out = new Int16Array((toneSamples + gapSamples) * digits.length);
  for (const [index, digit] of [...digits.toUpperCase()].entries()) {
    const row = keypad.findIndex((keys) => keys.includes(digit));
    const column = (keypad[row] as string).indexOf(digit);
    const lowHz = rowsHz[row] as number;
    const highHz = columnsHz[column] as number;
    const start = index * (toneSamples + gapSamples);
    const fadeSamples = Math.min(40, Math.floor(toneSamples / 4));
    for (let i = 0; i < toneSamples; i++) {
      const fade = Math.min(1, i / fadeSamples, (toneSamples - 1 - i) / fadeSamples);
      const t = i / sampleRateHz;
      out[start + i] = Math.round(
        fade * amplitude * (Math.sin(2 * Math.PI * lowHz * t) + Math.sin(2 * Math.PI * highHz * t)),
      );
    }
  }
  return out;
}

/** The strongest and second strongest of four powers, with the index of the strongest. */
function strongest(powers: number[]): { index: number; best: number; runnerUp: number } {
  let index = 0;
  for (let i = 1; i < powers.length; i++) if ((powers[i] as number) > (powers[index] as number)) index = i;
  const best = powers[index] as number;
  const runnerUp = Math.max(...powers.filter((_, i) => i !== index));
  return { index, best, runnerUp };
}

/**
 * Hears DTMF keys in audio, one 20 ms frame at a time: a row tone and a column tone that hold most
 * of the frame's energy, each well above the other tones of its group, with at most 8 dB between
 * them (twist), for two frames in a row. A key is reported once, when it starts; the same key
 * again needs a frame without it in between (the gap). Speech, music and single tones (a beep) do
 * not pass: their energy is not in exactly one row and one column.
 */
export class InbandDtmfDetector {
  private candidate: string | null = null;
  private reported: string | null = null;

  /** Feeds one frame; the key that just started, else null. */
  push(frame: Int16Array): string | null {
    const digit = this.frameDigit(frame);
    if (digit === null) {
      this.candidate = null;
      this.reported = null;
      return null;
    }
    if (digit === this.reported) return null;
    if (digit !== this.candidate) {
      this.candidate = digit;
      return null;
    }
    this.reported = digit;
    return digit;
  }

  private frameDigit(frame: Int16Array): string | null {
    let energy = 0;
    for (let i = 0; i < frame.length; i++) energy += (frame[i] as number) ** 2;
    // Quieter than about −45 dBFS: no key.
    if (frame.length === 0 || energy / frame.length < 1_000) return null;
    const rows = strongest(rowCoefficients.map((coefficient) => goertzelPower(frame, coefficient)));
    const columns = strongest(columnCoefficients.map((coefficient) => goertzelPower(frame, coefficient)));
    // A pure tone's Goertzel power is about energy * N / 2 (its share of the frame's energy).
    const scale = (energy * frame.length) / 2;
    const rowShare = rows.best / scale;
    const columnShare = columns.best / scale;
    if (rowShare < 0.2 || columnShare < 0.2 || rowShare + columnShare < 0.7) return null;
    if (rows.runnerUp > rows.best / 6 || columns.runnerUp > columns.best / 6) return null;
    const twist = rows.best / columns.best;
    if (twist > 6.3 || twist < 1 / 6.3) return null;
    return (keypad[rows.index] as string)[columns.index] ?? null;
  }
}
