import * as alawmulawModule from 'alawmulaw';

type AlawMulaw = typeof alawmulawModule;
// Node loads the package's CommonJS build (everything under `default`); bundlers its ES build.
const alawmulaw: AlawMulaw =
  (alawmulawModule as AlawMulaw & { default?: AlawMulaw }).default ?? alawmulawModule;

/**
 * G.711 µ-law (PCMU, payload type 0) and A-law (PCMA, payload type 8) at 8 kHz. The sample maths is
 * alawmulaw's; it is run once into lookup tables so the per-packet path is a table read per sample
 * and writes into caller-owned buffers.
 */

export type G711Codec = 'PCMU' | 'PCMA';

export const g711Codecs: readonly G711Codec[] = ['PCMU', 'PCMA'];
export const staticPayloadTypeByCodec: Record<G711Codec, number> = { PCMU: 0, PCMA: 8 };
export const sampleRateHz = 8000;
export const samplesPerMs = 8;

/** The encoded byte of digital silence (a zero sample) per codec. */
export const silenceByteByCodec: Record<G711Codec, number> = { PCMU: 0xff, PCMA: 0xd5 };

export function samplesForMs(durationMs: number): number {
  return Math.round(durationMs * samplesPerMs);
}

interface CodecTables {
  /** Indexed by the sample's 16 bits read as unsigned (sample & 0xffff). */
  encode: Uint8Array;
  decode: Int16Array;
}

const tablesByCodec = new Map<G711Codec, CodecTables>();

function tables(codec: G711Codec): CodecTables {
  let found = tablesByCodec.get(codec);
  if (found) return found;
  const lib = codec === 'PCMU' ? alawmulaw.mulaw : alawmulaw.alaw;
  const encode = new Uint8Array(65536);
  for (let i = 0; i < 65536; i++) encode[i] = lib.encodeSample((i << 16) >> 16) & 0xff;
  const decode = new Int16Array(256);
  for (let i = 0; i < 256; i++) decode[i] = lib.decodeSample(i);
  found = { encode, decode };
  tablesByCodec.set(codec, found);
  return found;
}

/**
 * Encodes `samples` into `target` at `targetOffset` (target must have room); returns bytes written.
 */
export function encodeG711Into(
  codec: G711Codec,
  samples: Int16Array,
  target: Uint8Array,
  targetOffset = 0,
): number {
  const table = tables(codec).encode;
  const count = samples.length;
  for (let i = 0; i < count; i++) target[targetOffset + i] = table[samples[i]! & 0xffff]!;
  return count;
}

/** Decodes `payload` into `target` (room for payload.length samples); returns samples written. */
export function decodeG711Into(codec: G711Codec, payload: Uint8Array, target: Int16Array): number {
  const table = tables(codec).decode;
  const count = Math.min(payload.length, target.length);
  for (let i = 0; i < count; i++) target[i] = table[payload[i]!]!;
  return count;
}

export function encodeG711(codec: G711Codec, samples: Int16Array): Uint8Array {
  const out = new Uint8Array(samples.length);
  encodeG711Into(codec, samples, out);
  return out;
}

export function decodeG711(codec: G711Codec, payload: Uint8Array): Int16Array {
  const out = new Int16Array(payload.length);
  decodeG711Into(codec, payload, out);
  return out;
}

/** Warms the tables so the first call does not pay for building them. */
export function prepareG711(): void {
  tables('PCMU');
  tables('PCMA');
}
