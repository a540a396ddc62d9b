const sampleRateHz = 8000;
const frameSamples = 160;

/**
 * The call's stereo recording, callee left and agent right, 8 kHz 16-bit. Both sides are placed
 * on the media clock's 20 ms grid: each frame the callee side delivers advances time by one frame,
 * and the agent's frame of that tick lands beside it.
 */
export class CallRecorder {
  private callee: Int16Array[] = [];
  private agent: (Int16Array | undefined)[] = [];
  private readonly maxFrames: number;

  constructor(maxDurationMs: number) {
    this.maxFrames = Math.ceil(maxDurationMs / 20) + 50;
  }

  /** Milliseconds recorded so far (the call's clock, from the answer). */
  get elapsedMs(): number {
    return this.callee.length * 20;
  }

  addCalleeFrame(samples: Int16Array): void {
    if (this.callee.length >= this.maxFrames) return;
    this.callee.push(samples.length === frameSamples ? samples : fitFrame(samples));
  }

  addAgentFrame(samples: Int16Array): void {
    const index = Math.max(0, this.callee.length - 1);
    if (index >= this.maxFrames) return;
    if (this.agent[index] !== undefined) this.agent[index + 1] = fitFrame(samples);
    else this.agent[index] = fitFrame(samples);
  }

  /** Both sides interleaved as the bytes of a stereo 16-bit WAV file. */
  toWav(): Buffer {
    const frames = Math.max(this.callee.length, this.agent.length);
    const samples = frames * frameSamples;
    const data = Buffer.alloc(samples * 4);
    for (let frame = 0; frame < frames; frame++) {
      const left = this.callee[frame];
      const right = this.agent[frame];
      for (let i = 0; i < frameSamples; i++) {
        const offset = (frame * frameSamples + i) * 4;
        data.writeInt16LE(left?.[i] ?? 0, offset);
        data.writeInt16LE(right?.[i] ?? 0, offset + 2);
      }
    }
    const header = Buffer.alloc(44);
    header.write('RIFF', 0, 'ascii');
    header.writeUInt32LE(36 + data.length, 4);
    header.write('WAVE', 8, 'ascii');
    header.write('fmt ', 12, 'ascii');
    header.writeUInt32LE(16, 16);
    header.writeUInt16LE(1, 20); // PCM
    header.writeUInt16LE(2, 22); // stereo
    header.writeUInt32LE(sampleRateHz, 24);
    header.writeUInt32LE(sampleRateHz * 4, 28);
    header.writeUInt16LE(4, 32);
    header.writeUInt16LE(16, 34);
    header.write('data', 36, 'ascii');
    header.writeUInt32LE(data.length, 40);
    return Buffer.concat([header, data]);
  }
}

function fitFrame(samples: Int16Array): Int16Array {
  const frame = new Int16Array(frameSamples);
  frame.set(samples.subarray(0, frameSamples));
  return frame;
}
