/**
 * What the agent side sends until the voice pipeline speaks for it: one short tone when the call is
 * answered, so audio flows both ways and the far end hears that someone is there.
 */
export function answerTone(sampleRateHz = 8000, durationMs = 600, frequencyHz = 440): Int16Array {
  const samples = new Int16Array(Math.round((sampleRateHz * durationMs) / 1000));
  for (let i = 0; i < samples.length; i++) {
    samples[i] = Math.round(6000 * Math.sin((2 * Math.PI * frequencyHz * i) / sampleRateHz));
  }
  return samples;
}
