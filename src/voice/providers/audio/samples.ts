/** Joins buffers of samples into one (the one itself when there is only one). */
export function concatSamples(parts: readonly Int16Array[]): Int16Array {
  if (parts.length === 1) return parts[0] as Int16Array;
  const whole = new Int16Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    whole.set(part, offset);
    offset += part.length;
  }
  return whole;
}
