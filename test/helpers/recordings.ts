/** The interleaved samples of a PCM WAV's data chunk (a stereo call recording: even = callee). */
export function wavSamples(bytes: Buffer): Int16Array {
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('ascii', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    if (id === 'data') {
      const end = Math.min(bytes.length, offset + 8 + size);
      const copy = Buffer.from(bytes.subarray(offset + 8, end - ((end - offset - 8) % 2)));
      return new Int16Array(copy.buffer, copy.byteOffset, copy.length / 2);
    }
    offset += 8 + size + (size % 2);
  }
  return new Int16Array(0);
}

/** A stereo call recording's callee channel (left; the agent is right). */
export function calleeChannel(wav: Buffer): Int16Array {
  return wavSamples(wav).filter((_, i) => i % 2 === 0);
}

/** A stereo call recording's agent channel (right). */
export function agentChannel(wav: Buffer): Int16Array {
  return wavSamples(wav).filter((_, i) => i % 2 === 1);
}

/** How many 20 ms frames (8 kHz) are louder than line noise (speech or tone). */
export function loudFrames(samples: Int16Array): number {
  let frames = 0;
  for (let at = 0; at + 160 <= samples.length; at += 160) {
    let energy = 0;
    for (let i = at; i < at + 160; i++) energy += samples[i]! ** 2;
    if (energy / 160 > 300 ** 2) frames++;
  }
  return frames;
}

/**
 * How many loud 20 ms frames (8 kHz) are mostly one tone of `frequencyHz` (over half the frame's
 * energy, by a Goertzel filter): which of two hold sounds, or a tone and speech, was heard.
 */
export function framesOfTone(samples: Int16Array, frequencyHz: number): number {
  const coefficient = 2 * Math.cos((2 * Math.PI * frequencyHz) / 8000);
  let frames = 0;
  for (let at = 0; at + 160 <= samples.length; at += 160) {
    let energy = 0;
    let previous = 0;
    let beforePrevious = 0;
    for (let i = at; i < at + 160; i++) {
      const sample = samples[i]!;
      energy += sample ** 2;
      const current = sample + coefficient * previous - beforePrevious;
      beforePrevious = previous;
      previous = current;
    }
    const power = previous ** 2 + beforePrevious ** 2 - coefficient * previous * beforePrevious;
    if (energy / 160 > 300 ** 2 && power / ((energy * 160) / 2) > 0.5) frames++;
  }
  return frames;
}
