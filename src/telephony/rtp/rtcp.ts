/**
 * RTCP (RFC 3550 §6): the compound packets a session sends every few seconds — a sender report
 * (or a receiver report while we send nothing) with one report block on the far end's stream, and
 * an SDES CNAME — and what the far end's reports say about our stream: the share of our packets it
 * lost, its jitter, and the round trip.
 */

export interface ReportBlock {
  ssrc: number;
  /** Lost since the previous report, in 1/256ths. */
  fractionLost: number;
  cumulativeLost: number;
  extendedHighestSeq: number;
  /** Interarrival jitter, in RTP timestamp units. */
  jitter: number;
  /** The middle 32 bits of the NTP time of the last SR received from `ssrc` (0: none yet). */
  lastSr: number;
  /** Delay since that SR, in 1/65536 s. */
  delaySinceLastSr: number;
}

export interface SenderInfo {
  ntpMsw: number;
  ntpLsw: number;
  rtpTimestamp: number;
  packetCount: number;
  octetCount: number;
}

export interface RtcpReport {
  /** 200 (SR) or 201 (RR). */
  type: 200 | 201;
  ssrc: number;
  sender: SenderInfo | null;
  blocks: ReportBlock[];
}

const ntpEpochOffsetS = 2_208_988_800;

/** The NTP timestamp (RFC 5905) of a wall-clock time in ms, as two 32-bit words. */
export function ntpTime(epochMs: number): { msw: number; lsw: number } {
  const seconds = Math.floor(epochMs / 1000);
  const fraction = (epochMs - seconds * 1000) / 1000;
  return { msw: (seconds + ntpEpochOffsetS) >>> 0, lsw: Math.floor(fraction * 2 ** 32) >>> 0 };
}

/** The middle 32 bits of an NTP timestamp (what LSR and round-trip sums use). */
export function ntpMiddle(ntp: { msw: number; lsw: number }): number {
  return (((ntp.msw & 0xffff) << 16) | (ntp.lsw >>> 16)) >>> 0;
}

/** A compound RTCP packet: SR (with `sender`) or RR, at most one report block, SDES CNAME. */
export function buildRtcpReport(input: {
  ssrc: number;
  sender: SenderInfo | null;
  block: ReportBlock | null;
  cname: string;
}): Buffer {
  const blocks = input.block ? 1 : 0;
  const reportBytes = 8 + (input.sender ? 20 : 0) + blocks * 24;
  const cname = Buffer.from(input.cname.slice(0, 255), 'utf8');
  // SDES chunk: SSRC, CNAME item (type, length, text), a null item, padded to 32 bits.
  const chunkBytes = Math.ceil((4 + 2 + cname.length + 1) / 4) * 4;
  const packet = Buffer.alloc(reportBytes + 4 + chunkBytes);
  packet[0] = 0x80 | blocks;
  packet[1] = input.sender ? 200 : 201;
  packet.writeUInt16BE(reportBytes / 4 - 1, 2);
  packet.writeUInt32BE(input.ssrc >>> 0, 4);
  let at = 8;
  if (input.sender) {
    packet.writeUInt32BE(input.sender.ntpMsw >>> 0, at);
    packet.writeUInt32BE(input.sender.ntpLsw >>> 0, at + 4);
    packet.writeUInt32BE(input.sender.rtpTimestamp >>> 0, at + 8);
    packet.writeUInt32BE(input.sender.packetCount >>> 0, at + 12);
    packet.writeUInt32BE(input.sender.octetCount >>> 0, at + 16);
    at += 20;
  }
  if (input.block) {
    const block = input.block;
    packet.writeUInt32BE(block.ssrc >>> 0, at);
    packet.writeUInt32BE(
      ((block.fractionLost & 0xff) << 24) | (Math.min(block.cumulativeLost, 0x7fffff) & 0xffffff),
      at + 4,
    );
    packet.writeUInt32BE(block.extendedHighestSeq >>> 0, at + 8);
    packet.writeUInt32BE(block.jitter >>> 0, at + 12);
    packet.writeUInt32BE(block.lastSr >>> 0, at + 16);
    packet.writeUInt32BE(block.delaySinceLastSr >>> 0, at + 20);
    at += 24;
  }
  packet[at] = 0x81;
  packet[at + 1] = 202;
  packet.writeUInt16BE(chunkBytes / 4, at + 2);
  packet.writeUInt32BE(input.ssrc >>> 0, at + 4);
  packet[at + 8] = 1;
  packet[at + 9] = cname.length;
  cname.copy(packet, at + 10);
  return packet;
}

/** The SR and RR packets of a compound RTCP packet; nothing for anything malformed. */
export function parseRtcpReports(data: Buffer): RtcpReport[] {
  const reports: RtcpReport[] = [];
  let at = 0;
  while (at + 4 <= data.length) {
    if (data[at]! >> 6 !== 2) return reports;
    const count = data[at]! & 0x1f;
    const type = data[at + 1]!;
    const end = at + (data.readUInt16BE(at + 2) + 1) * 4;
    if (end > data.length) return reports;
    if ((type === 200 || type === 201) && at + 8 <= end) {
      let offset = at + 8;
      let sender: SenderInfo | null = null;
      if (type === 200) {
        if (offset + 20 > end) return reports;
        sender = {
          ntpMsw: data.readUInt32BE(offset),
          ntpLsw: data.readUInt32BE(offset + 4),
          rtpTimestamp: data.readUInt32BE(offset + 8),
          packetCount: data.readUInt32BE(offset + 12),
          octetCount: data.readUInt32BE(offset + 16),
        };
        offset += 20;
      }
      const blocks: ReportBlock[] = [];
      for (let i = 0; i < count && offset + 24 <= end; i++, offset += 24) {
        const lossWord = data.readUInt32BE(offset + 4);
        const cumulative = lossWord & 0xffffff;
        blocks.push({
          ssrc: data.readUInt32BE(offset),
          fractionLost: lossWord >>> 24,
          // 24-bit signed (duplicates can make it negative).
          cumulativeLost: cumulative & 0x800000 ? cumulative - 0x1000000 : cumulative,
          extendedHighestSeq: data.readUInt32BE(offset + 8),
          jitter: data.readUInt32BE(offset + 12),
          lastSr: data.readUInt32BE(offset + 16),
          delaySinceLastSr: data.readUInt32BE(offset + 20),
        });
      }
      reports.push({ type, ssrc: data.readUInt32BE(at + 4), sender, blocks });
    }
    at = end;
  }
  return reports;
}
