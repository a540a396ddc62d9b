import { randomInt } from 'node:crypto';
import type { SrtpPolicy } from '../domain/trunkSettings.js';
import type { Logger } from '../logger.js';
import {
  type Answer,
  type CryptoLine,
  canSendTo,
  createAnswer,
  createCryptoLines,
  createOffer,
  parseAnswer,
  type RemoteMedia,
  type RtpSession,
} from '../telephony/rtp/index.js';
import type { InviteOptions, OfferAnswer } from '../telephony/sip/index.js';

/** What the negotiation needs of the call's route. */
export interface MediaRoute {
  /** The far end may name a media address only as its SIP next hops (allowsRemoteAddress). */
  inviteOptions: Pick<InviteOptions, 'allowsRemoteAddress'>;
  srtp: SrtpPolicy;
}

/**
 * One call's side of SDP offer/answer (RFC 3264): our first offer, then a real answer to each new
 * offer the far end makes in a re-INVITE or UPDATE — its direction (hold: we stop sending and
 * stop listening; resume), a new address or port (a media move), another codec — applied to the
 * call's RTP session. Our o= line keeps its session id and counts its version up (§8).
 *
 * SRTP per the route's policy (SDES, RFC 4568): `required` offers RTP/SAVP and refuses an answer
 * without a key; `optional` offers the keys in RTP/AVP (best effort) and takes plain RTP when the
 * far end ignores them; a re-offer keeps our key while its suite stays.
 */
export class MediaRenegotiation {
  private readonly sessionId = String(randomInt(1_000_000_000, 2_000_000_000));
  private version = 1;
  private readonly cryptoLines: CryptoLine[];
  private current: RemoteMedia | null = null;

  constructor(
    private readonly rtp: RtpSession,
    private readonly address: string,
    private readonly route: MediaRoute,
    private readonly log: Logger,
  ) {
    this.cryptoLines = route.srtp === 'off' ? [] : createCryptoLines();
  }

  /** The far end's media as last agreed (an answer to our offer, or our answer to its offer). */
  get remote(): RemoteMedia | null {
    return this.current;
  }

  /** Reads the far end's answer to our first offer; `refused` says why it cannot be used. */
  remoteOfAnswer(sdpAnswer: string): RemoteMedia | { refused: string } {
    let remote: RemoteMedia;
    try {
      remote = parseAnswer(sdpAnswer, { srtp: { offered: this.cryptoLines, policy: this.route.srtp } });
    } catch (error) {
      this.log.warn({ err: error }, 'unusable SDP answer');
      return { refused: 'unusable SDP answer' };
    }
    if (this.refusesAddress(remote)) {
      this.log.warn({ mediaAddress: remote.address }, 'SDP answer names a refused media address');
      return { refused: 'refused media address' };
    }
    this.current = remote;
    if (remote.srtp) this.log.info({ suite: remote.srtp.suite }, 'media is SRTP');
    return remote;
  }

  private refusesAddress(remote: RemoteMedia): boolean {
    const allows = this.route.inviteOptions.allowsRemoteAddress;
    return allows !== undefined && canSendTo(remote) && !allows(remote.address);
  }

  offer(): string {
    return createOffer({
      address: this.address,
      port: this.rtp.localPort,
      sessionId: this.sessionId,
      sessionVersion: this.version,
      ...(this.cryptoLines.length > 0
        ? { crypto: { lines: this.cryptoLines, secureProfile: this.route.srtp === 'required' } }
        : {}),
    });
  }

  answer(offerSdp: string): OfferAnswer {
    let answer: Answer;
    try {
      const current = this.rtp.codec;
      answer = createAnswer(offerSdp, {
        address: this.address,
        port: this.rtp.localPort,
        // Keep the codec in use when the new offer still has it.
        ...(current ? { codecs: current === 'PCMU' ? ['PCMU', 'PCMA'] : ['PCMA', 'PCMU'] } : {}),
        sessionId: this.sessionId,
        sessionVersion: this.version + 1,
        srtp: this.route.srtp,
        currentSrtp: this.current?.srtp ?? null,
      });
    } catch (error) {
      return { status: 488, reason: error instanceof Error ? error.message : 'unusable offer' };
    }
    const remote = answer.remote;
    if (this.refusesAddress(remote)) {
      this.log.warn({ mediaAddress: remote.address }, 'new SDP offer names a refused media address');
      return { status: 488, reason: 'refused media address' };
    }
    this.version++;
    this.current = remote;
    this.rtp.start(remote);
    this.log.info(
      { direction: remote.direction, codec: remote.codec, port: remote.port, srtp: remote.srtp !== null },
      'media renegotiated by the far end',
    );
    return { sdp: answer.sdp };
  }
}
