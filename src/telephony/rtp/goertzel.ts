/** The Goertzel filter's coefficient for `frequencyHz` at the telephone rate (8 kHz). */
export function goertzelCoefficient(frequencyHz: number): number {
  return 2 * Math.cos((2 * Math.PI * frequencyHz) / 8000);
}

/**
 * The power of one frequency over a frame (Goertzel). A pure tone's power is about
 * energy × N / 2, which is how callers turn it into the tone's share of the frame's energy.
 */
export function goertzelPower(frame: Int16Array, coefficient: number): number {
  let previous = 0;
  let beforePrevious = 0;
  for (let i = 0; i < frame.length; i++) {
    const current = (frame[i] as number) + coefficient * previous - beforePrevious;
    beforePrevious = previous;
    previous = current;
  }
  return previous ** 2 + beforePrevious ** 2 - coefficient * previous * beforePrevious;
}
