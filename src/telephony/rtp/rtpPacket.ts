/**
 * RTP fixed header (RFC 3550 §5.1): reading never throws, whatever the datagram holds; writing
 * goes into a caller-owned buffer so the send path can reuse memory.
 */

export const rtpHeaderBytes = 12;
export const rtpVersion = 2;

/** The fields of a received RTP packet. Reused between packets by `readRtpHeader`. */
export interface RtpHeader {
  padding: boolean;
  extension: boolean;
  csrcCount: number;
  marker: boolean;
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
  /** Byte offset of the payload, after CSRCs and any header extension. */
  payloadOffset: number;
  /** Payload length, padding removed. */
  payloadLength: number;
}

export function createRtpHeader(): RtpHeader {
  return {
    padding: false,
    extension: false,
    csrcCount: 0,
    marker: false,
    payloadType: 0,
    sequenceNumber: 0,
    timestamp: 0,
    ssrc: 0,
    payloadOffset: 0,
    payloadLength: 0,
  };
}

/**
 * Reads an RTP header into `out`. Returns false (and leaves `out` unspecified) when the datagram is
 * not a well-formed RTP packet: too short, version other than 2, CSRC list / extension / padding
 * running past the end, or an RTCP packet type (200–204, which would read as payload types 72–76).
 */
export function readRtpHeader(data: Uint8Array, out: RtpHeader): boolean {
  const length = data.length;
  if (length < rtpHeaderBytes) return false;
  const b0 = data[0]!;
  if (b0 >> 6 !== rtpVersion) return false;
  const b1 = data[1]!;
  const payloadType = b1 & 0x7f;
  if (payloadType >= 72 && payloadType <= 76) return false;
  const csrcCount = b0 & 0x0f;
  let offset = rtpHeaderBytes + csrcCount * 4;
  if (offset > length) return false;
  const extension = (b0 & 0x10) !== 0;
  if (extension) {
    if (offset + 4 > length) return false;
    const words = (data[offset + 2]! << 8) | data[offset + 3]!;
    offset += 4 + words * 4;
    if (offset > length) return false;
  }
  let end = length;
  const padding = (b0 & 0x20) !== 0;
  if (padding) {
    const padBytes = data[length - 1]!;
    if (padBytes === 0 || offset + padBytes > length) return false;
    end = length - padBytes;
  }
  out.padding = padding;
  out.extension = extension;
  out.csrcCount = csrcCount;
  out.marker = (b1 & 0x80) !== 0;
  out.payloadType = payloadType;
  out.sequenceNumber = (data[2]! << 8) | data[3]!;
  out.timestamp = data[4]! * 0x1000000 + ((data[5]! << 16) | (data[6]! << 8) | data[7]!);
  out.ssrc = data[8]! * 0x1000000 + ((data[9]! << 16) | (data[10]! << 8) | data[11]!);
  out.payloadOffset = offset;
  out.payloadLength = end - offset;
  return true;
}

/** A parsed packet with its payload as a view (no copy) into the datagram. */
export interface RtpPacket extends RtpHeader {
  payload: Uint8Array;
}

/** Allocating convenience over `readRtpHeader`: null when the datagram is not RTP. */
export function parseRtpPacket(data: Uint8Array): RtpPacket | null {
  const header = createRtpHeader();
  if (!readRtpHeader(data, header)) return null;
  return {
    ...header,
    payload: data.subarray(header.payloadOffset, header.payloadOffset + header.payloadLength),
  };
}

export interface RtpHeaderFields {
  marker: boolean;
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
}

/** Writes a 12-byte header (no CSRC, no extension, no padding) at `offset`; returns bytes written. */
export function writeRtpHeader(target: Uint8Array, fields: RtpHeaderFields, offset = 0): number {
  target[offset] = rtpVersion << 6;
  target[offset + 1] = (fields.marker ? 0x80 : 0) | (fields.payloadType & 0x7f);
  const seq = fields.sequenceNumber & 0xffff;
  target[offset + 2] = seq >> 8;
  target[offset + 3] = seq & 0xff;
  writeUint32(target, offset + 4, fields.timestamp);
  writeUint32(target, offset + 8, fields.ssrc);
  return rtpHeaderBytes;
}

function writeUint32(target: Uint8Array, offset: number, value: number): void {
  const v = value >>> 0;
  target[offset] = v >>> 24;
  target[offset + 1] = (v >>> 16) & 0xff;
  target[offset + 2] = (v >>> 8) & 0xff;
  target[offset + 3] = v & 0xff;
}

/** Allocating convenience: a whole packet (header + payload) in a new Buffer. */
export function encodeRtpPacket(fields: RtpHeaderFields & { payload: Uint8Array }): Buffer {
  const packet = Buffer.allocUnsafe(rtpHeaderBytes + fields.payload.length);
  writeRtpHeader(packet, fields);
  packet.set(fields.payload, rtpHeaderBytes);
  return packet;
}

/** Signed distance a − b between two 16-bit sequence numbers, in −32768…32767. */
export function sequenceDelta(a: number, b: number): number {
  return (((a - b) & 0xffff) << 16) >> 16;
}
