import { createHash } from 'node:crypto';

/**
 * HMAC-SHA1 (RFC 2104, SHA-1 per FIPS 180-4) for SRTP's per-packet tags, with the key's inner and
 * outer states computed once. node:crypto has no way to reuse a keyed HMAC: `createHmac` per
 * packet re-derives both key blocks and allocates an object and a digest each time, which made
 * HMAC about two thirds of SRTP's CPU in bench:media. This computes a 172-byte packet's tag in
 * about half the time and allocates nothing (docs/decisions.md). Checked against RFC 2202's test
 * cases and against node:crypto for every length the media path sends.
 *
 * The computation has no branches or table lookups that depend on the key or the data, like any
 * SHA-1; tags are still compared with `timingSafeEqual` by the caller.
 */

const blockBytes = 64;
const digestBytes = 20;
/** The message schedule, shared: every call runs to completion before the next (one thread). */
const schedule = new Int32Array(80);

/** One SHA-1 compression of `block[offset, offset + 64)` into `state` (five 32-bit words). */
function compress(state: Int32Array, block: Uint8Array, offset: number): void {
  const w = schedule;
  for (let t = 0; t < 16; t++) {
    const at = offset + t * 4;
    w[t] = (block[at]! << 24) | (block[at + 1]! << 16) | (block[at + 2]! << 8) | block[at + 3]!;
  }
  for (let t = 16; t < 80; t++) {
    const x = w[t - 3]! ^ w[t - 8]! ^ w[t - 14]! ^ w[t - 16]!;
    w[t] = (x << 1) | (x >>> 31);
  }
  let a = state[0]!;
  let b = state[1]!;
  let c = state[2]!;
  let d = state[3]!;
  let e = state[4]!;
  for (let t = 0; t < 80; t++) {
    let f: number;
    let k: number;
    if (t < 20) {
      f = (b & c) | (~b & d);
      k = 0x5a827999;
    } else if (t < 40) {
      f = b ^ c ^ d;
      k = 0x6ed9eba1;
    } else if (t < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8f1bbcdc;
    } else {
      f = b ^ c ^ d;
      k = 0xca62c1d6;
    }
    const next = (((a << 5) | (a >>> 27)) + f + e + k + w[t]!) | 0;
    e = d;
    d = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = next;
  }
  state[0] = (state[0]! + a) | 0;
  state[1] = (state[1]! + b) | 0;
  state[2] = (state[2]! + c) | 0;
  state[3] = (state[3]! + d) | 0;
  state[4] = (state[4]! + e) | 0;
}

const initialState = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0];

/** The state after compressing the key padded to a block and XORed with `pad` (0x36 or 0x5c). */
function keyedState(key: Uint8Array, pad: number): Int32Array {
  const block = new Uint8Array(blockBytes).fill(pad);
  for (let index = 0; index < key.length; index++) block[index] = block[index]! ^ key[index]!;
  const state = Int32Array.from(initialState);
  compress(state, block, 0);
  return state;
}

export class HmacSha1 {
  readonly #inner: Int32Array;
  readonly #outer: Int32Array;
  readonly #state = new Int32Array(5);
  /** The message's last partial block, the 4-byte trailer and the padding: at most two blocks. */
  readonly #tail = new Uint8Array(2 * blockBytes);

  constructor(key: Uint8Array) {
    // RFC 2104: a key longer than a block is replaced by its hash.
    const blockKey = key.length > blockBytes ? createHash('sha1').update(key).digest() : key;
    this.#inner = keyedState(blockKey, 0x36);
    this.#outer = keyedState(blockKey, 0x5c);
  }

  /**
   * Writes the first `outBytes` (1–20) of HMAC(data[0, length) ‖ trailer) to `out` at `outOffset`,
   * where `trailer`, when not null, is appended as a 32-bit big-endian word (SRTP's ROC).
   */
  macInto(
    data: Uint8Array,
    length: number,
    trailer: number | null,
    out: Uint8Array,
    outOffset: number,
    outBytes: number,
  ): void {
    // The message's length in bits must fit the low 32 bits of SHA-1's length field (see finishBlocks).
    if (length < 0 || length > data.length || length > 0x0fffffff)
      throw new RangeError('length is outside the data');
    if (outBytes < 1 || outBytes > digestBytes || outOffset + outBytes > out.length)
      throw new RangeError('no room for the tag');
    const state = this.#state;
    const tail = this.#tail;
    state.set(this.#inner);
    let at = 0;
    for (; at + blockBytes <= length; at += blockBytes) compress(state, data, at);
    let used = length - at;
    tail.set(data.subarray(at, length), 0);
    if (trailer !== null) {
      tail[used] = trailer >>> 24;
      tail[used + 1] = (trailer >>> 16) & 0xff;
      tail[used + 2] = (trailer >>> 8) & 0xff;
      tail[used + 3] = trailer & 0xff;
      used += 4;
    }
    // The inner hash's message: the inner key block, the data, the trailer.
    finishBlocks(state, tail, used, used + 9 <= blockBytes ? 1 : 2, blockBytes + at + used);
    // The outer hash: the outer key block, then the inner digest.
    writeStateBytes(state, tail, 0, digestBytes);
    state.set(this.#outer);
    finishBlocks(state, tail, digestBytes, 1, blockBytes + digestBytes);
    writeStateBytes(state, out, outOffset, outBytes);
  }
}

/** Pads `tail[0, used)` (0x80, zeros, the message length in bits) to `blocks` and compresses them. */
function finishBlocks(
  state: Int32Array,
  tail: Uint8Array,
  used: number,
  blocks: number,
  messageBytes: number,
): void {
  const end = blocks * blockBytes;
  tail[used] = 0x80;
  tail.fill(0, used + 1, end - 4);
  // macInto keeps messages under 2^28 bytes: the length's high word is zero.
  const bits = messageBytes * 8;
  tail[end - 4] = bits >>> 24;
  tail[end - 3] = (bits >>> 16) & 0xff;
  tail[end - 2] = (bits >>> 8) & 0xff;
  tail[end - 1] = bits & 0xff;
  for (let block = 0; block < blocks; block++) compress(state, tail, block * blockBytes);
}

/** The first `bytes` of the digest in `state` (big-endian words), written to `out` at `offset`. */
function writeStateBytes(state: Int32Array, out: Uint8Array, offset: number, bytes: number): void {
  for (let index = 0; index < bytes; index++)
    out[offset + index] = (state[index >> 2]! >>> (24 - 8 * (index & 3))) & 0xff;
}
