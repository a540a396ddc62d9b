import type { RtpSession } from '../telephony/rtp/index.js';
import { concatSamples } from '../voice/providers/audio/samples.js';
import { answerTone } from './placeholderMedia.js';

const holdBeepMs = 400;
const holdCycleMs = 2_000;

/** One cycle of the hold tone: a soft 440 Hz beep, then silence, 2 s in all (8 kHz). */
export function holdToneCycle(): Int16Array {
  return concatSamples([
    answerTone(8000, holdBeepMs, 440),
    new Int16Array((8000 * (holdCycleMs - holdBeepMs)) / 1000),
  ]);
}

/**
 * Plays `cycle` (the hold tone, or the agent's own file) to the callee in a loop until the returned
 * function is called (which cuts the cycle being played): what a caller hears while callwright
 * dials, briefs and bridges a transfer target, instead of silence that sounds like a dropped line.
 */
export function startHoldAudio(rtp: RtpSession, cycle: Int16Array = holdToneCycle()): () => void {
  let stopped = false;
  void (async () => {
    while (!stopped) {
      const played = await rtp.play(cycle).catch(() => null);
      // A closed session, or a cycle cut by someone else and nothing left to wait for: stop.
      if (!played || (played.interrupted && played.playedMs === 0 && !stopped)) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        if (!played) return;
      }
    }
  })();
  return () => {
    if (stopped) return;
    stopped = true;
    rtp.clear();
  };
}
