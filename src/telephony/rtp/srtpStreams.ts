import type { SrtpKeying } from './sdes.js';
import { SrtpReceiver, SrtpSender } from './srtp.js';

/**
 * The SRTP of one RTP session, both directions, as last negotiated: a new sender only when our
 * key changes (its rollover counter runs on otherwise), a new receiver only when the far end's
 * key changes; everything passes through untouched while the stream is plain RTP.
 */
export class SrtpStreams {
  private keying: SrtpKeying | null = null;
  private sender: SrtpSender | null = null;
  private receiver: SrtpReceiver | null = null;
  /** Packets whose tag did not verify, or replays. */
  refused = 0;

  apply(keying: SrtpKeying | null): void {
    const previous = this.keying;
    this.keying = keying;
    if (!keying) {
      this.sender = null;
      this.receiver = null;
      return;
    }
    const sameSuite = previous?.suite === keying.suite;
    if (!sameSuite || !previous.localKey.equals(keying.localKey))
      this.sender = new SrtpSender(keying.suite, keying.localKey);
    if (!sameSuite || !previous.remoteKey.equals(keying.remoteKey))
      this.receiver = new SrtpReceiver(keying.suite, keying.remoteKey);
  }

  get secure(): boolean {
    return this.keying !== null;
  }

  /** The length to send of the packet in `buffer[0, length)`, protected in place when SRTP. */
  protect(buffer: Buffer, length: number): number {
    return this.sender ? this.sender.protect(buffer, length) : length;
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
