// The benches' simulated callee: says `speech` each time the agent's reply has finished arriving
// (`quietFrames` quiet frames after loud ones, default 10), `turns` times, then resolves (or after a time limit, so one
// stalled pair cannot stall a whole run).
import { concatSamples } from '../dist/voice/providers/audio/samples.js';

/** Concatenates a TTS's chunks for `text` into one buffer. */
export async function synthesizeWhole(tts, text) {
  const parts = [];
  for await (const chunk of tts.synthesize(text)) parts.push(chunk.samples);
  return Int16Array.from(concatSamples(parts));
}

export function answerEachReply(
  calleeRtp,
  speech,
  { turns, limitMs, quietFrames: replyAfterQuietFrames = 10 },
) {
  let heard = 0;
  let quietFrames = 0;
  let spoken = 0;
  return new Promise((resolve) => {
    setTimeout(resolve, limitMs).unref();
    calleeRtp.on('audio', (samples) => {
      let energy = 0;
      for (const s of samples) energy += s * s;
      if (energy / samples.length > 100_000) {
        heard++;
        quietFrames = 0;
      } else if (heard > 0 && ++quietFrames === replyAfterQuietFrames) {
        heard = 0;
        if (spoken++ >= turns) resolve();
        else void calleeRtp.play(speech);
      }
    });
  });
}
