/**
 * Where the audible part of 8 kHz audio begins and ends. One threshold for the whole service: the
 * voice pipeline's latency marks and leading-silence trim, the jitter buffer's choice of a quiet
 * frame to skip, the recogniser's quiet moment to cut a long utterance at.
 */

/** A sample above this (about -36 dBFS) is audible: synthesised leading silence and dither are not. */
export const audibleSampleMin = 500;

function isAudible(sample: number): boolean {
  return sample >= audibleSampleMin || sample <= -audibleSampleMin;
}

/** The index of the first audible sample in `samples`, or -1 (-1: the audio is quiet). */
export function firstAudibleIndex(samples: Int16Array): number {
  for (let index = 0; index < samples.length; index++) {
    if (isAudible(samples[index] as number)) return index;
  }
  return -1;
}

/** The index of the last audible sample in `samples`, or -1. */
export function lastAudibleIndex(samples: Int16Array): number {
  for (let index = samples.length - 1; index >= 0; index--) {
    if (isAudible(samples[index] as number)) return index;
  }
  return -1;
}
