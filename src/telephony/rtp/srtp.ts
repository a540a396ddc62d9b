import { type Cipher, createCipheriv, timingSafeEqual } from 'node:crypto';
import { HmacSha1 } from './hmacSha1.js';

/**
 * SRTP (RFC 3711) for the two SDES suites every SIP device speaks: AES counter mode with a
 * 128-bit key and HMAC-SHA1 tags of 80 or 32 bits (RFC 4568 §6.2). Key derivation rate 0 (keys
 * derived once), no MKI. One `SrtpSender` per outgoing stream, one `SrtpReceiver` per incoming
 * stream; both work in place on the caller's buffer, so the media path allocates nothing extra
 * but the cipher's output blocks.
 *
 * Written on node:crypto rather than taken from a package: the npm SRTP packages are unmaintained
 * or bind libsrtp natively (docs/decisions.md).
 */

export const srtpSuites = ['AES_CM_128_HMAC_SHA1_80', 'AES_CM_128_HMAC_SHA1_32'] as const;
export type SrtpSuite = (typeof srtpSuites)[number];

/** Master key (16 bytes) followed by master salt (14 bytes), as SDES `inline:` carries it. */
export const srtpMasterKeySaltBytes = 30;
const masterKeyBytes = 16;
const saltBytes = 14;
const authKeyBytes = 20;
/** The longest tag a packet grows by: room to leave after the RTP packet in a send buffer. */
export const srtpMaxTagBytes = 10;
const replayWindow = 64;
/** Key derivation labels (RFC 3711 §4.3.2): SRTP's keys, and SRTCP's. */
const srtpLabels = [0, 1, 2] as const;
const srtcpLabels = [3, 4, 5] as const;
/** SRTCP's tag is 80 bits for both suites (RFC 4568 §6.2.1 and §6.2.2). */
const srtcpTagBytes = 10;

export function srtpTagBytes(suite: SrtpSuite): number {
  return suite === 'AES_CM_128_HMAC_SHA1_80' ? 10 : 4;
}

export interface SrtpSessionKeys {
  cipherKey: Buffer;
  cipherSalt: Buffer;
  authKey: Buffer;
}

/**
 * RFC 3711 §4.3.1 with kdr = 0: each session key is the AES-CM keystream of the master key with
 * IV = (master salt XOR label at byte 7) · 2^16. Labels 0, 1, 2 are SRTP's encryption,
 * authentication and salt keys.
 */
export function deriveSrtpKeys(
  masterKeySalt: Uint8Array,
  labels: readonly [cipher: number, auth: number, salt: number] = srtpLabels,
): SrtpSessionKeys {
  if (masterKeySalt.length !== srtpMasterKeySaltBytes)
    throw new RangeError(`SRTP master key and salt must be ${srtpMasterKeySaltBytes} bytes`);
  const masterKey = masterKeySalt.subarray(0, masterKeyBytes);
  const masterSalt = masterKeySalt.subarray(masterKeyBytes);
  const derive = (label: number, length: number): Buffer => {
    const iv = Buffer.alloc(16);
    iv.set(masterSalt, 0);
    iv[7] = iv[7]! ^ label;
    return aesCounterKeystream(masterKey, iv, length);
  };
  return {
    cipherKey: derive(labels[0], masterKeyBytes),
    authKey: derive(labels[1], authKeyBytes),
    cipherSalt: derive(labels[2], saltBytes),
  };
}

/** AES-128 in counter mode from `iv`, counting in its last 16 bits (RFC 3711 §4.1.1). */
export function aesCounterKeystream(key: Uint8Array, iv: Uint8Array, length: number): Buffer {
  const ecb = createCipheriv('aes-128-ecb', key, null).setAutoPadding(false);
  const blocks = Math.ceil(length / 16);
  const counters = Buffer.alloc(blocks * 16);
  counters.set(iv, 0);
  writeCounterBlocks(counters, 0, blocks);
  return ecb.update(counters).subarray(0, length);
}

/**
 * Fills blocks 1 … blocks − 1 after the IV at `counters[at]` with IV + 1, IV + 2, …: the counter
 * runs in the IV's last 16 bits.
 */
function writeCounterBlocks(counters: Buffer, at: number, blocks: number): void {
  const low = (counters[at + 14]! << 8) | counters[at + 15]!;
  for (let block = 1; block < blocks; block++) {
    const blockAt = at + block * 16;
    const counter = (low + block) & 0xffff;
    counters.copy(counters, blockAt, at, at + 14);
    counters[blockAt + 14] = counter >> 8;
    counters[blockAt + 15] = counter & 0xff;
  }
}

/**
 * How many packets' keystream one AES call makes: a stream's packets come in index order, so the
 * next ones' keystream is made ahead in one ECB update instead of one call (and one output
 * buffer) per packet, about a quarter of SRTP's CPU (docs/benchmarks.md).
 */
const keystreamAheadPackets = 16;

/** The per-packet work both directions share: IV, keystream XOR and the HMAC-SHA1 tag. */
class SrtpCrypto {
  readonly tagBytes: number;
  private readonly keys: SrtpSessionKeys;
  private readonly ecb: Cipher;
  private readonly hmac: HmacSha1;
  /** The tag a received packet should carry, computed here to be compared with the one it does. */
  private readonly expectedTag: Buffer;
  /**
   * The keystream of SSRC `ssrc`'s packets from index `firstIndex` (index = ROC · 2^16 + SEQ) on,
   * keystreamAheadPackets of them, `blocks` AES blocks each.
   */
  private readonly ahead = { ssrc: -1, firstIndex: -1, blocks: 0, keystream: Buffer.alloc(0) };

  constructor(
    tagBytes: number,
    masterKeySalt: Uint8Array,
    labels: readonly [number, number, number] = srtpLabels,
  ) {
    this.tagBytes = tagBytes;
    this.keys = deriveSrtpKeys(masterKeySalt, labels);
    this.ecb = createCipheriv('aes-128-ecb', this.keys.cipherKey, null).setAutoPadding(false);
    this.hmac = new HmacSha1(this.keys.authKey);
    this.expectedTag = Buffer.alloc(tagBytes);
  }

  /** XORs the keystream of packet (ssrc, roc, seq) over `data[from, to)`: encrypts and decrypts. */
  transform(data: Buffer, from: number, to: number, ssrc: number, roc: number, seq: number): void {
    const length = to - from;
    const index = roc * 65536 + seq;
    const blocks = Math.ceil(length / 16);
    const ahead = this.ahead;
    const fits =
      ahead.ssrc === ssrc &&
      blocks <= ahead.blocks &&
      index >= ahead.firstIndex &&
      index < ahead.firstIndex + keystreamAheadPackets;
    if (!fits) this.makeKeystream(ssrc, index, blocks);
    const keystream = ahead.keystream;
    const at = (index - ahead.firstIndex) * ahead.blocks * 16;
    for (let i = 0; i < length; i++) data[from + i] = data[from + i]! ^ keystream[at + i]!;
  }

  /**
   * RFC 3711 §4.1.1: packet i's IV is salt XOR (SSRC · 2^64) XOR (i · 2^16), and its keystream the
   * AES of IV, IV + 1, …; made here for packets `firstIndex` onwards.
   */
  private makeKeystream(ssrc: number, firstIndex: number, blocks: number): void {
    const counters = Buffer.alloc(keystreamAheadPackets * blocks * 16);
    const salt = this.keys.cipherSalt;
    for (let packet = 0; packet < keystreamAheadPackets; packet++) {
      const index = firstIndex + packet;
      const roc = Math.floor(index / 65536) >>> 0;
      const seq = index % 65536;
      const base = packet * blocks * 16;
      counters.set(salt, base);
      counters.writeUInt32BE((counters.readUInt32BE(base + 4) ^ ssrc) >>> 0, base + 4);
      counters.writeUInt32BE((counters.readUInt32BE(base + 8) ^ roc) >>> 0, base + 8);
      counters.writeUInt16BE(counters.readUInt16BE(base + 12) ^ seq, base + 12);
      writeCounterBlocks(counters, base, blocks);
    }
    const ahead = this.ahead;
    ahead.ssrc = ssrc;
    ahead.firstIndex = firstIndex;
    ahead.blocks = blocks;
    ahead.keystream = this.ecb.update(counters);
  }

  /**
   * HMAC-SHA1(auth key, data[0, length) ‖ ROC) cut to the suite's tag length (RFC 3711 §4.2),
   * written to `data` at `length`: the buffer must have the tag's room after the packet.
   */
  appendTag(data: Buffer, length: number, roc: number | null): void {
    this.hmac.macInto(data, length, roc, data, length, this.tagBytes);
  }

  /** Whether `data[length, length + tag)` is the tag of data[0, length) ‖ ROC (constant time). */
  verifyTag(data: Buffer, length: number, roc: number | null): boolean {
    const expected = this.expectedTag;
    this.hmac.macInto(data, length, roc, expected, 0, this.tagBytes);
    return timingSafeEqual(expected, data.subarray(length, length + this.tagBytes));
  }
}

/** Where the payload of an RTP packet starts (after CSRCs and a header extension), or -1. */
function payloadOffset(data: Uint8Array, length: number): number {
  if (length < 12 || data[0]! >> 6 !== 2) return -1;
  let offset = 12 + (data[0]! & 0x0f) * 4;
  if ((data[0]! & 0x10) !== 0) {
    if (offset + 4 > length) return -1;
    offset += 4 + ((data[offset + 2]! << 8) | data[offset + 3]!) * 4;
  }
  return offset <= length ? offset : -1;
}

/** Protects one outgoing stream: encrypts the payload in place and appends the tag. */
export class SrtpSender {
  private readonly crypto: SrtpCrypto;
  private roc = 0;
  private lastSeq = -1;

  constructor(suite: SrtpSuite, masterKeySalt: Uint8Array) {
    this.crypto = new SrtpCrypto(srtpTagBytes(suite), masterKeySalt);
  }

  get tagBytes(): number {
    return this.crypto.tagBytes;
  }

  /**
   * Protects the RTP packet in `buffer[0, length)`; the buffer must have `tagBytes` of room after
   * it. Returns the SRTP packet's length.
   */
  protect(buffer: Buffer, length: number): number {
    const offset = payloadOffset(buffer, length);
    if (offset < 0) throw new RangeError('not an RTP packet');
    if (buffer.length < length + this.crypto.tagBytes) throw new RangeError('no room for the SRTP tag');
    const seq = buffer.readUInt16BE(2);
    // The sender's index counts on past 65535: ROC goes up when the sequence number wraps.
    if (this.lastSeq >= 0 && seq < this.lastSeq && this.lastSeq - seq > 0x8000)
      this.roc = (this.roc + 1) >>> 0;
    this.lastSeq = seq;
    this.crypto.transform(buffer, offset, length, buffer.readUInt32BE(8), this.roc, seq);
    this.crypto.appendTag(buffer, length, this.roc);
    return length + this.crypto.tagBytes;
  }
}

/**
 * The replay protection of one stream (RFC 3711 §3.3.2): the highest index received, and which of
 * the 64 before it were — slot (index mod 64) holds the last index received there.
 */
class ReplayWindow {
  highest = -1;
  private readonly seen = new Float64Array(replayWindow).fill(-1);

  /** Whether `index` was neither received before nor is older than the window. */
  isFresh(index: number): boolean {
    if (index > this.highest) return true;
    return this.highest - index < replayWindow && this.seen[index % replayWindow] !== index;
  }

  /** Records an authenticated index (call only after its tag verified). */
  record(index: number): void {
    this.seen[index % replayWindow] = index;
    if (index > this.highest) this.highest = index;
  }
}

export type UnprotectResult = { length: number } | { refused: 'malformed' | 'authentication' | 'replay' };

/**
 * Checks and decrypts one incoming stream (any number of SSRCs under one master key): a packet is
 * used only if its tag verifies (compared in constant time) and its index was not seen in the last
 * 64 (replay protection); only then are the rollover counter and window moved on.
 */
export class SrtpReceiver {
  private readonly crypto: SrtpCrypto;
  /** Per SSRC: its highest index (and so its rollover counter) and replay window. */
  private readonly windows = new Map<number, ReplayWindow>();

  constructor(suite: SrtpSuite, masterKeySalt: Uint8Array) {
    this.crypto = new SrtpCrypto(srtpTagBytes(suite), masterKeySalt);
  }

  /** Decrypts `packet` in place; on success the RTP packet is `packet[0, length)`. */
  unprotect(packet: Buffer): UnprotectResult {
    const tagBytes = this.crypto.tagBytes;
    const length = packet.length - tagBytes;
    const offset = payloadOffset(packet, length);
    if (offset < 0) return { refused: 'malformed' };
    const seq = packet.readUInt16BE(2);
    const ssrc = packet.readUInt32BE(8);
    const window = this.windows.get(ssrc);
    const roc = window ? estimateRoc(window.highest, seq) : 0;
    if (!this.crypto.verifyTag(packet, length, roc)) return { refused: 'authentication' };
    const index = roc * 65536 + seq;
    if (window && !window.isFresh(index)) return { refused: 'replay' };
    if (window) window.record(index);
    else {
      if (this.windows.size >= 16) this.windows.clear();
      const fresh = new ReplayWindow();
      fresh.record(index);
      this.windows.set(ssrc, fresh);
    }
    this.crypto.transform(packet, offset, length, ssrc, roc, seq);
    return { length };
  }
}

/**
 * RFC 3711 Appendix A: the rollover counter a sequence number most likely belongs to, given the
 * highest index received so far (its ROC and sequence number s_l).
 */
function estimateRoc(highestIndex: number, seq: number): number {
  const roc = Math.floor(highestIndex / 65536);
  const highestSeq = highestIndex % 65536;
  if (highestSeq < 0x8000) return seq - highestSeq > 0x8000 && roc > 0 ? roc - 1 : roc;
  return highestSeq - 0x8000 > seq ? (roc + 1) >>> 0 : roc;
}

/**
 * SRTCP (RFC 3711 §3.4) for one direction: everything after the first 8 bytes (header and sender
 * SSRC) encrypted, then E-flag ‖ 31-bit index, then an 80-bit tag over all of it. The sender counts
 * its index from 0; the receiver checks the tag (constant time) and refuses an index it has seen.
 */
export class SrtcpSender {
  private readonly crypto: SrtpCrypto;
  private index = 0;

  constructor(masterKeySalt: Uint8Array) {
    this.crypto = new SrtpCrypto(srtcpTagBytes, masterKeySalt, srtcpLabels);
  }

  /** The SRTCP packet of the compound RTCP packet `packet`. */
  protect(packet: Buffer): Buffer {
    if (packet.length < 8) throw new RangeError('not an RTCP packet');
    const index = this.index;
    this.index = (this.index + 1) & 0x7fffffff;
    const out = Buffer.alloc(packet.length + 4 + srtcpTagBytes);
    packet.copy(out);
    this.crypto.transform(out, 8, packet.length, out.readUInt32BE(4), index >>> 16, index & 0xffff);
    out.writeUInt32BE((0x80000000 | index) >>> 0, packet.length);
    this.crypto.appendTag(out, packet.length + 4, null);
    return out;
  }
}

export class SrtcpReceiver {
  private readonly crypto: SrtpCrypto;
  private readonly window = new ReplayWindow();

  constructor(masterKeySalt: Uint8Array) {
    this.crypto = new SrtpCrypto(srtcpTagBytes, masterKeySalt, srtcpLabels);
  }

  /** The compound RTCP packet inside `packet`, or null when it fails authentication or replays. */
  unprotect(packet: Buffer): Buffer | null {
    const length = packet.length - 4 - srtcpTagBytes;
    if (length < 8) return null;
    if (!this.crypto.verifyTag(packet, length + 4, null)) return null;
    const word = packet.readUInt32BE(length);
    const index = word & 0x7fffffff;
    if (!this.window.isFresh(index)) return null;
    this.window.record(index);
    const out = Buffer.from(packet.subarray(0, length));
    if ((word & 0x80000000) !== 0)
      this.crypto.transform(out, 8, length, out.readUInt32BE(4), index >>> 16, index & 0xffff);
    return out;
  }
}
