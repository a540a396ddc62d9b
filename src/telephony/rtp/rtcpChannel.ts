import type { Socket } from 'node:dgram';
import type { Logger } from '../../logger.js';
import type { ReceiveStats } from './receiveStats.js';
import { buildRtcpReport, ntpMiddle, ntpTime, parseRtcpReports, type ReportBlock } from './rtcp.js';
import type { SrtpStreams } from './srtpStreams.js';
import { bindUdpSocket, sameAddress } from './udpSockets.js';

/** What the session tells its RTCP about itself when a report is due. */
export interface RtcpSource {
  ssrc: number;
  packetsSent: number;
  octetsSent: number;
  rtpTimestamp: number;
  remoteSsrc: number | null;
  receive: ReceiveStats;
}

/** What the far end's last report said about our stream. */
export interface RemoteReport {
  /** Share of our packets it lost in its last interval, 0–1. */
  fractionLost: number;
  cumulativeLost: number;
  jitterMs: number;
  /** From its LSR/DLSR against our last SR; null until it has echoed one. */
  roundTripMs: number | null;
}

/** RFC 3550 §6.2's minimum interval; each report is sent 0.5–1.5 times it apart. */
const defaultReportIntervalMs = 5_000;

/**
 * The RTCP of one RTP session, on the port above it — or, when both ends agreed to `a=rtcp-mux`
 * (RFC 5761), on the RTP port itself, sent through `muxSend` and handed in by the session with
 * `receive`: a report every ~5 s (SR while we send, with one block on the far end's stream), the
 * far end's reports read for what it heard of us, both SRTCP when the session is SRTP. Reports are
 * taken only from the far end's media address, and our reports go to where its RTCP comes from
 * once it has sent any (symmetric RTCP).
 */
export class RtcpChannel {
  private remote: { address: string; port: number } | null = null;
  private latched = false;
  /** Multiplexed with RTP on the RTP port (RFC 5761). */
  private muxed = false;
  private timer: NodeJS.Timeout | null = null;
  private lastSrMiddle = 0;
  private lastSrArrivedMs = 0;
  private report: RemoteReport | null = null;
  /** Our stream's SSRC, which the far end's report blocks about us carry. */
  private readonly ssrc: number;
  reportsSent = 0;
  reportsReceived = 0;

  private constructor(
    private readonly socket: Socket,
    private readonly source: () => RtcpSource,
    private readonly srtp: SrtpStreams,
    private readonly logger: Logger,
    private readonly intervalMs: number,
    private readonly muxSend: (packet: Buffer, port: number, address: string) => void,
  ) {
    this.ssrc = source().ssrc;
    socket.on('message', (message, remote) => this.onMessage(message, remote.address, remote.port));
    socket.on('error', (error) => logger.debug({ err: error }, 'RTCP socket error'));
  }

  /**
   * Binds `port`; null (and the call goes on without RTCP) when it is taken. `source` is asked
   * for the session's figures when a report is due; `srtp` protects reports as it does the media.
   */
  static async open(
    bindAddress: string,
    port: number,
    session: {
      source: () => RtcpSource;
      srtp: SrtpStreams;
      logger: Logger;
      intervalMs?: number;
      /** Sends on the RTP socket, for rtcp-mux. */
      muxSend: (packet: Buffer, port: number, address: string) => void;
    },
  ): Promise<RtcpChannel | null> {
    try {
      const socket = await bindUdpSocket(bindAddress, port);
      return new RtcpChannel(
        socket,
        session.source,
        session.srtp,
        session.logger,
        session.intervalMs ?? defaultReportIntervalMs,
        session.muxSend,
      );
    } catch {
      return null;
    }
  }

  get remoteReport(): RemoteReport | null {
    return this.report;
  }

  /**
   * The far end's media: its RTCP is expected on the port above its RTP, or on its RTP port when
   * `muxed` (both ends said `a=rtcp-mux`). Starts the reports.
   */
  setRemote(address: string, rtpPort: number, muxed = false): void {
    if (!this.remote || this.remote.address !== address || !this.latched || muxed !== this.muxed) {
      this.remote = { address, port: muxed ? rtpPort : rtpPort + 1 };
      this.latched = false;
    }
    this.muxed = muxed;
    if (this.timer === null) this.schedule();
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.socket.close();
  }

  private schedule(): void {
    const delayMs = this.intervalMs * (0.5 + Math.random());
    this.timer = setTimeout(() => {
      this.send(this.source());
      this.schedule();
    }, delayMs);
    this.timer.unref();
  }

  private send(source: RtcpSource): void {
    const remote = this.remote;
    if (!remote) return;
    const now = Date.now();
    const ntp = ntpTime(now);
    const block: ReportBlock | null =
      source.remoteSsrc === null
        ? null
        : {
            ssrc: source.remoteSsrc,
            fractionLost: source.receive.takeFractionLost(),
            cumulativeLost: source.receive.lost,
            extendedHighestSeq: source.receive.extendedHighestSeq,
            jitter: source.receive.jitterUnits,
            lastSr: this.lastSrMiddle,
            delaySinceLastSr:
              this.lastSrMiddle === 0 ? 0 : Math.round(((now - this.lastSrArrivedMs) * 65536) / 1000),
          };
    const packet = buildRtcpReport({
      ssrc: source.ssrc,
      sender:
        source.packetsSent > 0
          ? {
              ntpMsw: ntp.msw,
              ntpLsw: ntp.lsw,
              rtpTimestamp: source.rtpTimestamp,
              packetCount: source.packetsSent,
              octetCount: source.octetsSent,
            }
          : null,
      block,
      cname: `callwright-${source.ssrc.toString(16)}`,
    });
    const protectedPacket = this.srtp.protectRtcp(packet);
    if (this.muxed) {
      this.muxSend(protectedPacket, remote.port, remote.address);
      this.reportsSent++;
      return;
    }
    this.socket.send(protectedPacket, remote.port, remote.address, (error) => {
      if (!error) this.reportsSent++;
    });
  }

  /** An RTCP packet that arrived on the RTP port of a multiplexed session (ignored otherwise). */
  receive(message: Buffer, address: string, port: number): void {
    if (this.muxed) this.onMessage(message, address, port);
  }

  private onMessage(message: Buffer, address: string, port: number): void {
    const remote = this.remote;
    if (!remote || !sameAddress(address, remote.address)) return;
    const packet = this.srtp.unprotectRtcp(message);
    if (packet === null) return;
    const reports = parseRtcpReports(packet);
    if (reports.length === 0) return;
    this.reportsReceived++;
    if (!this.latched) {
      this.remote = { address, port };
      this.latched = true;
    }
    const now = Date.now();
    for (const report of reports) {
      if (report.sender) {
        this.lastSrMiddle = ntpMiddle({ msw: report.sender.ntpMsw, lsw: report.sender.ntpLsw });
        this.lastSrArrivedMs = now;
      }
      for (const block of report.blocks) if (block.ssrc === this.ssrc) this.readBlock(block, now);
    }
  }

  private readBlock(block: ReportBlock, nowMs: number): void {
    let roundTripMs: number | null = null;
    if (block.lastSr !== 0) {
      const sinceSr = (ntpMiddle(ntpTime(nowMs)) - block.lastSr - block.delaySinceLastSr) >>> 0;
      const ms = (sinceSr * 1000) / 65536;
      roundTripMs = ms < 60_000 ? Math.round(ms * 10) / 10 : null;
    }
    this.report = {
      fractionLost: Math.round((block.fractionLost / 256) * 1000) / 1000,
      cumulativeLost: block.cumulativeLost,
      jitterMs: Math.round((block.jitter / 8) * 10) / 10,
      roundTripMs,
    };
    this.logger.debug({ report: this.report }, 'RTCP report from the far end');
  }
}
