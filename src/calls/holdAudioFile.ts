import { AppError } from '../domain/errors.js';
import type { StoredHoldAudio } from '../store/types.js';
import { decodeG711, encodeG711 } from '../telephony/rtp/index.js';
import { resample } from '../voice/providers/audio/resampler.js';
import { decodeWav } from '../voice/providers/audio/wav.js';

/**
 * An agent's own hold audio (settings.transfer.hold_audio `"file"`): a WAV uploaded with
 * `PUT /v1/agents/{agent_id}/hold_audio`, checked and converted once there — to 8 kHz G.711 µ-law,
 * what the line carries — so a transfer only reads and loops it.
 */
export const holdAudioFileLimits = {
  /** The upload's size cap (a 30 s 16-bit mono WAV at 16 kHz is ~0.94 MiB). */
  bodyBytesMax: 2 * 1024 * 1024,
  durationMinMs: 500,
  durationMaxMs: 30_000,
  sampleRateMinHz: 8_000,
  sampleRateMaxHz: 48_000,
  channelsMax: 2,
} as const;

/** Checks an uploaded WAV (16-bit PCM, 1–2 channels, 8–48 kHz, 0.5–30 s) and converts it. */
export function holdAudioFromWav(bytes: Uint8Array): StoredHoldAudio {
  const limits = holdAudioFileLimits;
  const channels = wavChannels(bytes);
  if (channels !== null && (channels < 1 || channels > limits.channelsMax))
    throw new AppError(
      'validation_error',
      `the hold audio WAV must be mono or stereo, not ${channels} channels`,
    );
  let audio: ReturnType<typeof decodeWav>;
  try {
    audio = decodeWav(bytes);
  } catch (error) {
    throw new AppError(
      'validation_error',
      `the hold audio must be a 16-bit PCM WAV file (${(error as Error).message})`,
    );
  }
  if (audio.sampleRateHz < limits.sampleRateMinHz || audio.sampleRateHz > limits.sampleRateMaxHz)
    throw new AppError(
      'validation_error',
      `the hold audio WAV must be sampled at ${limits.sampleRateMinHz}–${limits.sampleRateMaxHz} Hz`,
    );
  const durationMs = Math.round((audio.samples.length / audio.sampleRateHz) * 1000);
  if (durationMs < limits.durationMinMs || durationMs > limits.durationMaxMs)
    throw new AppError(
      'validation_error',
      `the hold audio must last ${limits.durationMinMs / 1000} to ${limits.durationMaxMs / 1000} s (this one: ${(durationMs / 1000).toFixed(1)} s)`,
    );
  const samples =
    audio.sampleRateHz === 8000 ? audio.samples : resample(audio.samples, audio.sampleRateHz, 8000);
  return { mulaw: encodeG711('PCMU', samples), durationMs };
}

/** The stored audio as 8 kHz samples, for playing. */
export function holdAudioSamples(audio: StoredHoldAudio): Int16Array {
  return decodeG711('PCMU', audio.mulaw);
}

/** The channel count of a WAV's fmt chunk, or null when there is none to read (decodeWav says why). */
function wavChannels(bytes: Uint8Array): number | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 12;
  while (offset + 8 <= bytes.byteLength) {
    const id = String.fromCharCode(...bytes.subarray(offset, offset + 4));
    const size = view.getUint32(offset + 4, true);
    if (id === 'fmt ' && offset + 12 <= bytes.byteLength) return view.getUint16(offset + 10, true);
    offset += 8 + size + (size % 2);
  }
  return null;
}
