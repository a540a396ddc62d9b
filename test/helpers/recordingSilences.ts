import { readFileSync } from 'node:fs';

/**
 * What the callee heard, read from a call's recording (stereo 16-bit WAV at 8 kHz: callee left,
 * agent right; it starts at the answer), in 20 ms windows.
 */
export interface HeardOnTheLine {
  /** From the answer to the agent's first sound; null when the agent never made one. */
  firstAgentSoundMs: number | null;
  /** The longest run of silence on the agent's channel between its first and last sound. */
  longestAgentGapMs: number;
  /**
   * The longest run in which neither side made a sound, between the agent's first and last sound:
   * the callee waiting for the agent (their own pauses before they reply included).
   */
  longestLineSilenceMs: number;
  /** The first agent sound at or after `ms` from the answer; null when none. */
  agentSoundAfter(ms: number): number | null;
  /** Milliseconds of the agent's channel that are a pure tone of this frequency (a fake vendor's voice). */
  agentToneMs(frequencyHz: number): number;
}

const windowSamples = 160;
const loudPeak = 200;

export function heardOnTheLine(wavPath: string): HeardOnTheLine {
  const wav = readFileSync(wavPath);
  const frames = Math.floor((wav.length - 44) / 4);
  const sample = (frame: number, channel: 0 | 1) => wav.readInt16LE(44 + frame * 4 + channel * 2);
  const agentLoud: boolean[] = [];
  const calleeLoud: boolean[] = [];
  for (let start = 0; start + windowSamples <= frames; start += windowSamples) {
    let agentPeak = 0;
    let calleePeak = 0;
    for (let i = start; i < start + windowSamples; i++) {
      agentPeak = Math.max(agentPeak, Math.abs(sample(i, 1)));
      calleePeak = Math.max(calleePeak, Math.abs(sample(i, 0)));
    }
    agentLoud.push(agentPeak > loudPeak);
    calleeLoud.push(calleePeak > loudPeak);
  }
  const first = agentLoud.indexOf(true);
  const last = agentLoud.lastIndexOf(true);
  const longestRun = (quiet: (index: number) => boolean) => {
    let longest = 0;
    let run = 0;
    for (let index = Math.max(0, first); index <= last; index++) {
      run = quiet(index) ? run + 1 : 0;
      longest = Math.max(longest, run);
    }
    return longest * 20;
  };
  return {
    firstAgentSoundMs: first < 0 ? null : first * 20,
    longestAgentGapMs: longestRun((index) => !agentLoud[index]),
    longestLineSilenceMs: longestRun((index) => !agentLoud[index] && !calleeLoud[index]),
    agentSoundAfter(ms: number): number | null {
      const index = agentLoud.findIndex((loud, at) => loud && at * 20 >= ms);
      return index < 0 ? null : index * 20;
    },
    agentToneMs(frequencyHz: number): number {
      // Goertzel per window: a window is the tone when nearly all its energy is in that one bin.
      const coefficient = 2 * Math.cos((2 * Math.PI * frequencyHz) / 8000);
      let toneWindows = 0;
      for (let start = 0; start + windowSamples <= frames; start += windowSamples) {
        let previous = 0;
        let beforePrevious = 0;
        let energy = 0;
        for (let i = start; i < start + windowSamples; i++) {
          const value = sample(i, 1);
          energy += value * value;
          const current = value + coefficient * previous - beforePrevious;
          beforePrevious = previous;
          previous = current;
        }
        if (energy < windowSamples * 1000 * 1000) continue;
        const power =
          previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious;
        // A pure sine of the bin's frequency gives power ≈ energy · N / 2.
        if (power > 0.8 * energy * (windowSamples / 2)) toneWindows++;
      }
      return toneWindows * 20;
    },
  };
}
