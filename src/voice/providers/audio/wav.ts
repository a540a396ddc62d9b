/** Minimal RIFF/WAVE reading and writing for 16-bit PCM, the only kind our providers exchange. */

export interface PcmAudio {
  /** Mono 16-bit samples (multi-channel input is averaged). */
  samples: Int16Array;
  sampleRateHz: number;
}

const pcmFormatTag = 1;
const extensibleFormatTag = 0xfffe;

export function encodeWav(samples: Int16Array, sampleRateHz: number): Uint8Array {
  const dataByteLength = samples.length * 2;
  const bytes = new Uint8Array(44 + dataByteLength);
  const view = new DataView(bytes.buffer);
  const writeAscii = (offset: number, text: string): void => {
    for (let i = 0; i < text.length; i += 1) view.setUint8(offset + i, text.charCodeAt(i));
  };
  writeAscii(0, 'RIFF');
  view.setUint32(4, 36 + dataByteLength, true);
  writeAscii(8, 'WAVE');
  writeAscii(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, pcmFormatTag, true);
  view.setUint16(22, 1, true);
  view.setUint32(24, sampleRateHz, true);
  view.setUint32(28, sampleRateHz * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  writeAscii(36, 'data');
  view.setUint32(40, dataByteLength, true);
  for (let i = 0; i < samples.length; i += 1) view.setInt16(44 + i * 2, samples[i] ?? 0, true);
  return bytes;
}

/**
 * Reads a 16-bit PCM WAV. Streamed WAVs whose data size is unknown (0 or 0xFFFFFFFF, as some
 * servers send) are read to the end of the bytes. `channel` picks one channel (0: the left of a
 * stereo file, a call recording's callee) instead of averaging them.
 */
export function decodeWav(bytes: Uint8Array, options: { channel?: number } = {}): PcmAudio {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const readAscii = (offset: number): string =>
    String.fromCharCode(
      view.getUint8(offset),
      view.getUint8(offset + 1),
      view.getUint8(offset + 2),
      view.getUint8(offset + 3),
    );
  if (bytes.byteLength < 12 || readAscii(0) !== 'RIFF' || readAscii(8) !== 'WAVE') {
    throw new Error('not a RIFF/WAVE file');
  }
  let channelCount = 0;
  let sampleRateHz = 0;
  let offset = 12;
  while (offset + 8 <= bytes.byteLength) {
    const chunkId = readAscii(offset);
    const declaredSize = view.getUint32(offset + 4, true);
    const bodyOffset = offset + 8;
    if (chunkId === 'fmt ') {
      const formatTag = view.getUint16(bodyOffset, true);
      const bitsPerSample = view.getUint16(bodyOffset + 14, true);
      if ((formatTag !== pcmFormatTag && formatTag !== extensibleFormatTag) || bitsPerSample !== 16) {
        throw new Error(`unsupported WAV format ${formatTag} with ${bitsPerSample} bits per sample`);
      }
      channelCount = view.getUint16(bodyOffset + 2, true);
      sampleRateHz = view.getUint32(bodyOffset + 4, true);
    } else if (chunkId === 'data') {
      if (channelCount === 0) throw new Error('WAV data chunk before its fmt chunk');
      const available = bytes.byteLength - bodyOffset;
      const unknownSize = declaredSize === 0 || declaredSize === 0xffffffff;
      const dataByteLength = unknownSize ? available : Math.min(declaredSize, available);
      const frameCount = Math.floor(dataByteLength / (2 * channelCount));
      const samples = new Int16Array(frameCount);
      const picked = options.channel;
      if (picked !== undefined) {
        if (picked >= channelCount) throw new Error(`WAV file has no channel ${picked}`);
        for (let frame = 0; frame < frameCount; frame += 1)
          samples[frame] = view.getInt16(bodyOffset + (frame * channelCount + picked) * 2, true);
        return { samples, sampleRateHz };
      }
      for (let frame = 0; frame < frameCount; frame += 1) {
        let sum = 0;
        for (let channel = 0; channel < channelCount; channel += 1) {
          sum += view.getInt16(bodyOffset + (frame * channelCount + channel) * 2, true);
        }
        samples[frame] = Math.round(sum / channelCount);
      }
      return { samples, sampleRateHz };
    }
    offset = bodyOffset + declaredSize + (declaredSize % 2);
  }
  throw new Error('WAV file has no data chunk');
}

/** Reinterprets little-endian 16-bit PCM bytes as samples (copying, so alignment never matters). */
export function int16FromLittleEndianBytes(bytes: Uint8Array): Int16Array {
  const sampleCount = Math.floor(bytes.byteLength / 2);
  const view = new DataView(bytes.buffer, bytes.byteOffset, sampleCount * 2);
  const samples = new Int16Array(sampleCount);
  for (let i = 0; i < sampleCount; i += 1) samples[i] = view.getInt16(i * 2, true);
  return samples;
}
