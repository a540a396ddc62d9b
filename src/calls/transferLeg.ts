import { randomBytes } from 'node:crypto';
import type { Logger } from '../logger.js';
import { type MediaClock, type PortAllocator, RtpSession } from '../telephony/rtp/index.js';
import type { InviteOptions, OutgoingCall, SipUserAgent } from '../telephony/sip/index.js';
import { MediaRenegotiation, type MediaRoute } from './mediaRenegotiation.js';

export interface TransferLegContext {
  ua: SipUserAgent;
  clock: MediaClock;
  ports: PortAllocator;
  mediaBindAddress: string;
  mediaPublicAddress: string;
  logger: Logger;
}

export type TransferLegAnswer =
  | { kind: 'answered' }
  | { kind: 'failed'; status: number | null; reason: string; noAnswer?: boolean };

/**
 * The second leg of a transfer callwright carries out itself: an INVITE to the target over the
 * call's own route (trunk or sandbox), its RTP, and — once the agent has left — both legs' audio
 * relayed frame by frame (each direction adds one 20 ms frame of queue). Used when the line refuses
 * REFER and for warm transfers, where the agent speaks to the target before the callee joins.
 */
export class TransferLeg {
  readonly answer: Promise<TransferLegAnswer>;
  /** Settles when the leg's dialog is over, whoever ended it. */
  readonly ended: Promise<void>;
  private bridgedWith: RtpSession | null = null;
  private readonly relayIn = (samples: Int16Array) => void this.rtp.play(samples.slice()).catch(() => {});
  private readonly relayOut = (samples: Int16Array) =>
    void this.bridgedWith?.play(samples.slice()).catch(() => {});

  private constructor(
    readonly rtp: RtpSession,
    private readonly outgoing: OutgoingCall,
    media: MediaRenegotiation,
    private readonly logger: Logger,
  ) {
    outgoing.answerOffersWith((offer) => media.answer(offer));
    this.answer = new Promise((resolve) => {
      outgoing.on('answered', ({ sdpAnswer }) => {
        const remote = media.remoteOfAnswer(sdpAnswer);
        if ('refused' in remote) {
          logger.warn({ reason: remote.refused }, 'the transfer target answered with unusable media');
          void this.hangUp();
          resolve({ kind: 'failed', status: 200, reason: 'the target answered with unusable media' });
          return;
        }
        rtp.start(remote);
        resolve({ kind: 'answered' });
      });
      void outgoing.outcome.then((outcome) => {
        if (outcome.kind !== 'failed') return;
        const { cause, status } = outcome.failure;
        resolve({
          kind: 'failed',
          status,
          ...(cause === 'ring_timeout' ? { noAnswer: true } : {}),
          reason:
            cause === 'ring_timeout'
              ? 'the target did not answer'
              : status !== null
                ? `the target answered ${status}`
                : `the target could not be reached (${cause})`,
        });
      });
    });
    this.ended = outgoing.outcome.then(() => undefined);
    void this.ended.finally(() => this.close());
  }

  /**
   * Dials the target with the call's route (`requestUri`, `to` already the target's), its media
   * negotiated like the call's own: SRTP by the trunk's policy, re-INVITEs answered.
   */
  static async dial(
    context: TransferLegContext,
    route: MediaRoute & { inviteOptions: Omit<InviteOptions, 'sdpOffer'>; mediaPublicAddress: string | null },
  ): Promise<TransferLeg> {
    const rtp = await RtpSession.open({
      logger: context.logger,
      clock: context.clock,
      ports: context.ports,
      bindAddress: context.mediaBindAddress,
      publicAddress: route.mediaPublicAddress ?? context.mediaPublicAddress,
    });
    const media = new MediaRenegotiation(rtp, rtp.publicAddress, route, context.logger);
    const outgoing = context.ua.invite({
      ...route.inviteOptions,
      callId: randomBytes(16).toString('hex'),
      sdpOffer: media.offer(),
    });
    return new TransferLeg(rtp, outgoing, media, context.logger);
  }

  /** Relays audio both ways between this leg and the callee's; the agent no longer speaks. */
  bridge(callee: RtpSession): void {
    if (this.bridgedWith) return;
    this.bridgedWith = callee;
    callee.clear();
    this.rtp.clear();
    callee.on('audio', this.relayIn);
    this.rtp.on('audio', this.relayOut);
    this.logger.info('transfer: the callee and the target are bridged');
  }

  /** Hangs the leg up (BYE, or CANCEL while it rings). */
  async hangUp(): Promise<void> {
    await this.outgoing
      .hangUp()
      .catch((error: unknown) => this.logger.warn({ err: error }, 'transfer leg hang-up failed'));
  }

  private close(): void {
    this.bridgedWith?.off('audio', this.relayIn);
    this.rtp.off('audio', this.relayOut);
    this.bridgedWith = null;
    void this.rtp.close();
  }
}
