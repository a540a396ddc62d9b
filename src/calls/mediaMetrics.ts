import type { RtpSession } from '../telephony/rtp/index.js';

/**
 * What a call's media was like, for its metrics: SRTP or not, what we received (RFC 3550 loss and
 * jitter, packets refused by SRTP) and what the far end's RTCP said it received of ours.
 */
export function mediaMetrics(rtp: RtpSession): Record<string, unknown> {
  const stats = rtp.stats();
  const report = stats.remoteReport;
  return {
    srtp: rtp.secure,
    codec: rtp.codec,
    packets_sent: stats.packetsSent,
    packets_received: stats.packetsReceived,
    packets_lost: stats.packetsLost,
    jitter_ms: Math.round(stats.jitterMs * 10) / 10,
    packets_unauthenticated: stats.packetsUnauthenticated,
    rtcp_reports_received: stats.rtcpReportsReceived,
    rtcp_mux: stats.rtcpMux,
    remote_report: report
      ? {
          fraction_lost: report.fractionLost,
          packets_lost: report.cumulativeLost,
          jitter_ms: report.jitterMs,
          round_trip_ms: report.roundTripMs,
        }
      : null,
  };
}
