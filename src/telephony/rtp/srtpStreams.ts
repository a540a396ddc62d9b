import type { SrtpKeying } from './sdes.js';
import { SrtcpReceiver, SrtcpSender, SrtpReceiver, SrtpSender } from './srtp.js';

/**
 * The SRTP and SRTCP of one RTP session, both directions, as last negotiated: new senders only
 * when our key changes (the rollover counter and SRTCP index run on otherwise), new receivers only
 * when the far end's key changes; everything passes through untouched while the stream is plain.
 */
export class SrtpStreams {
  private keying: SrtpKeying | null = null;
  private sender: SrtpSender | null = null;
  private receiver: SrtpReceiver | null = null;
  private rtcpSender: SrtcpSender | null = null;
  private rtcpReceiver: SrtcpReceiver | null = null;
  /** Packets whose tag did not verify, or replays. */
  refused = 0;

  apply(keying: SrtpKeying | null): void {
    const previous = this.keying;
    this.keying = keying;
    if (!keying) {
      this.sender = null;
      this.receiver = null;
      this.rtcpSender = null;
      this.rtcpReceiver = null;
      return;
    }
    const sameSuite = previous?.suite === keying.suite;
    if (!sameSuite || !previous.localKey.equals(keying.localKey)) {
      this.sender = new SrtpSender(keying.suite, keying.localKey);
      this.rtcpSender = new SrtcpSender(keying.localKey);
    }
    if (!sameSuite || !previous.remoteKey.equals(keying.remoteKey)) {
      this.receiver = new SrtpReceiver(keying.suite, keying.remoteKey);
      this.rtcpReceiver = new SrtcpReceiver(keying.remoteKey);
    }
  }

  get secure(): boolean {
    return this.keying !== null;
  }

  /** The length to send of the packet in `buffer[0, length)`, protected in place when SRTP. */
  protect(buffer: Buffer, length: number): number {
    return this.sender ? this.sender.protect(buffer, length) : length;
  }

  /** The compound RTCP packet to send: SRTCP when the session is SRTP. */
  protectRtcp(packet: Buffer): Buffer {
    return this.rtcpSender ? this.rtcpSender.protect(packet) : packet;
  }

  /** The compound RTCP packet received, or null when it fails SRTCP's tag or replay check. */
  unprotectRtcp(packet: Buffer): Buffer | null {
    return this.rtcpReceiver ? this.rtcpReceiver.unprotect(packet) : packet;
  }

  /**
   * The RTP packet to use, decrypted in place, or null when its tag does not verify or it is a
   * replay: nothing about such a packet — its source, SSRC or sequence number — is used.
   */
  unprotect(packet: Buffer): Buffer | null {
    if (!this.receiver) return packet;
    const payloadType = packet.length > 1 ? packet[1]! & 0x7f : 0;
    // SRTCP multiplexed on the RTP port (RFC 5761): not media, left to the RTP reader to ignore.
    if (payloadType >= 72 && payloadType <= 76) return packet;
    const result = this.receiver.unprotect(packet);
    if ('refused' in result) {
      this.refused++;
      return null;
    }
    return packet.subarray(0, result.length);
  }
}
