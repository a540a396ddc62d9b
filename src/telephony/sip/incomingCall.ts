import { isIP } from 'node:net';
import { addressUriText, comesFromDialogPeer, contactHeader, Dialog, newTag } from './dialog.js';
import { TypedEvents } from './events.js';
import { type NameAddr, paramValue } from './grammar.js';
import { answerInDialogRequest, type CallServices, type DialogOwner } from './inDialog.js';
import { headerValue, headerValues, type ParsedSipRequest, type SipHeader } from './message.js';
import type { AnyServerTransaction, InviteServerTransaction } from './serverTransactions.js';
import { DialogRefresher } from './sessionTimer.js';
import { buildResponse } from './transactionLayer.js';
import { type NetworkTarget, socketHost, uriHost } from './transport.js';

export interface IncomingCallEnded {
  readonly by: 'remote' | 'local';
  readonly reason: string;
}

export interface IncomingCallEvents {
  /** The caller sent CANCEL before we answered; 487 has already gone out. */
  canceled: { readonly reason: string };
  /** Our 200 was acknowledged: media may flow. */
  acknowledged: { readonly callId: string };
  /** The answered call is over (BYE either way, or the ACK never came). */
  ended: IncomingCallEnded;
}

export type IncomingCallState =
  | 'offered'
  | 'ringing'
  | 'answered'
  | 'confirmed'
  | 'ending'
  | 'ended'
  | 'rejected'
  | 'canceled';

/** An INVITE received out of dialog, for the UAS side (the sandbox carrier). */
export class IncomingCall extends TypedEvents<IncomingCallEvents> implements DialogOwner {
  readonly request: ParsedSipRequest;
  readonly callId: string;
  readonly from: NameAddr;
  readonly to: NameAddr;
  readonly requestUri: string;
  /** The SDP offer, or null when the INVITE carried none. */
  readonly sdpOffer: string | null;
  private readonly services: CallServices;
  private readonly transaction: InviteServerTransaction;
  private readonly localTag = newTag();
  private currentState: IncomingCallState = 'offered';
  private dialog: Dialog | null = null;
  private localSdp = '';
  private acknowledged: Promise<boolean> | null = null;
  private resolveAcknowledged: (acknowledged: boolean) => void = () => {};
  private pendingReinvite: InviteServerTransaction | null = null;
  private byeDone: Promise<void> | null = null;
  /** Decides a REFER from the caller (the status to answer, 202 to accept); null: 501. */
  referHandler: ((referTo: string) => number) | null = null;
  /** Session timers (RFC 4028) as the INVITE asked, started by our 200. */
  private readonly refresher: DialogRefresher;

  constructor(services: CallServices, request: ParsedSipRequest, transaction: InviteServerTransaction) {
    super(services.logger);
    this.services = services;
    this.request = request;
    this.transaction = transaction;
    this.callId = request.callId;
    this.from = request.from;
    this.to = request.to;
    this.requestUri = request.requestUri;
    const contentType = headerValue(request, 'Content-Type') ?? '';
    this.sdpOffer = request.body !== '' && /application\/sdp/i.test(contentType) ? request.body : null;
    transaction.onAckTimeout = () => this.ackTimedOut();
    this.refresher = new DialogRefresher({
      services,
      timers: services.clock.group(),
      dialog: () =>
        this.dialog === null ? null : { dialog: this.dialog, target: this.requestTarget(this.dialog) },
      localSdp: () => this.localSdp,
      expired: (reason) => {
        if (this.currentState === 'answered' || this.currentState === 'confirmed')
          this.byeDone = this.sendBye(reason);
      },
    });
  }

  /** Where the INVITE came from (address, port, transport). */
  get source(): NetworkTarget {
    return this.transaction.source;
  }

  get state(): IncomingCallState {
    return this.currentState;
  }

  private respond(
    status: number,
    options: { reason?: string; headers?: readonly SipHeader[]; body?: string } = {},
  ) {
    const headers: SipHeader[] = [...(options.headers ?? [])];
    if (status < 300 && status > 100) headers.unshift(contactHeader(this.services.local));
    if (options.body !== undefined && options.body !== '') {
      headers.push({ name: 'Content-Type', value: 'application/sdp' });
    }
    headers.push({ name: 'User-Agent', value: this.services.local.userAgentName });
    this.transaction.respond(
      buildResponse(this.request, status, {
        toTag: this.localTag,
        headers,
        ...(options.reason === undefined ? {} : { reason: options.reason }),
        ...(options.body === undefined ? {} : { body: options.body }),
      }),
    );
  }

  /** 180 Ringing, or 183 Session Progress when early-media SDP is given. */
  ring(options: { sdp?: string } = {}): void {
    if (this.currentState !== 'offered' && this.currentState !== 'ringing') return;
    this.currentState = 'ringing';
    if (options.sdp === undefined) this.respond(180);
    else this.respond(183, { body: options.sdp });
  }

  /**
   * 200 OK with the SDP answer, retransmitted (T1 doubling to T2) until the ACK. Resolves true on
   * the ACK, false when it never came (64 × T1; a BYE is then sent).
   */
  answer(sdpAnswer: string): Promise<boolean> {
    if (this.acknowledged !== null) return this.acknowledged;
    if (this.currentState !== 'offered' && this.currentState !== 'ringing') return Promise.resolve(false);
    this.acknowledged = new Promise((resolve) => {
      this.resolveAcknowledged = resolve;
    });
    const contact = headerValues(this.request, 'Contact')[0];
    const toValue = headerValue(this.request, 'To') ?? '';
    this.dialog = new Dialog({
      callId: this.callId,
      localTag: this.localTag,
      remoteTag: paramValue(this.from.params, 'tag') ?? '',
      localAddress: `${toValue};tag=${this.localTag}`,
      remoteAddress: headerValue(this.request, 'From') ?? '',
      remoteTarget:
        contact === undefined
          ? `sip:${uriHost(this.transaction.source.host)}:${this.transaction.source.port}`
          : addressUriText(contact),
      routeSet: headerValues(this.request, 'Record-Route'),
      localSeq: 1,
      remoteSeq: this.request.cseq.seq,
    });
    this.services.registerDialog(this.dialog, this);
    this.localSdp = sdpAnswer;
    this.currentState = 'answered';
    this.respond(200, { body: sdpAnswer, headers: this.refresher.answeringInvite(this.request) });
    return this.acknowledged;
  }

  /** A final error response (486, 404, 603...), optionally with extra headers (a challenge, say). */
  reject(status: number, options: { reason?: string; headers?: readonly SipHeader[] } = {}): void {
    if (status < 300 || status > 699) throw new RangeError('reject needs a 3xx-6xx status');
    if (this.currentState !== 'offered' && this.currentState !== 'ringing') return;
    this.currentState = 'rejected';
    this.respond(status, options);
  }

  /**
   * Forgets the INVITE without any response (a flood from a refused source): its transaction
   * ends now, so retransmissions are new requests that are screened (and dropped) again.
   */
  drop(): void {
    if (this.currentState !== 'offered') return;
    this.currentState = 'rejected';
    this.transaction.terminate();
  }

  /** BYE once answered (after the ACK); 480 before an answer. Resolves when the call is over. */
  async hangUp(): Promise<void> {
    if (this.currentState === 'offered' || this.currentState === 'ringing') {
      this.reject(480);
      return;
    }
    if (this.currentState === 'answered' && this.acknowledged !== null) await this.acknowledged;
    if (this.currentState === 'confirmed') this.byeDone = this.sendBye('hang-up');
    if (this.byeDone !== null) await this.byeDone;
  }

  /** The caller's CANCEL matched our INVITE transaction (the 200 to CANCEL is already sent). */
  receiveCancel(): void {
    if (this.currentState !== 'offered' && this.currentState !== 'ringing') return;
    this.currentState = 'canceled';
    this.respond(487);
    this.emit('canceled', { reason: 'CANCEL received' });
  }

  /**
   * Reports an accepted REFER's progress to the caller: a NOTIFY whose sipfrag is `statusLine`
   * (`SIP/2.0 200 OK`), the subscription terminated when `final`. Resolves on its response.
   */
  notifyTransfer(statusLine: string, final: boolean): Promise<void> {
    const dialog = this.dialog;
    if (dialog === null || this.currentState !== 'confirmed') return Promise.resolve();
    const notify = dialog.createRequest('NOTIFY', this.services.local, {
      headers: [
        { name: 'Event', value: 'refer' },
        { name: 'Subscription-State', value: final ? 'terminated;reason=noresource' : 'active;expires=60' },
        contactHeader(this.services.local),
      ],
      body: `${statusLine}\r\n`,
      contentType: 'message/sipfrag;version=2.0',
    });
    return new Promise((resolve) => {
      this.services.layer.sendRequest(notify, this.requestTarget(dialog), {
        onResponse: (response) => {
          if (response.status >= 200) resolve();
        },
        onTimeout: () => resolve(),
        onTransportError: () => resolve(),
      });
    });
  }

  /** The caller's Contact or Record-Route, when it names an IP literal: no DNS on its say-so. */
  private requestTarget(dialog: Dialog) {
    const nextHop = dialog.nextHopTarget();
    return nextHop !== null && isIP(socketHost(nextHop.host)) !== 0 ? nextHop : this.transaction.source;
  }

  private sendBye(reason: string): Promise<void> {
    const dialog = this.dialog;
    if (dialog === null) return Promise.resolve();
    this.currentState = 'ending';
    const bye = dialog.createRequest('BYE', this.services.local);
    const target = this.requestTarget(dialog);
    return new Promise((resolve) => {
      const finish = (detail: string) => {
        this.services.logger.debug({ detail }, 'BYE transaction over');
        resolve();
      };
      this.services.layer.sendRequest(bye, target, {
        onResponse: (response) => {
          if (response.status >= 200) finish(`BYE answered ${response.status}`);
        },
        onTimeout: () => finish('no response to BYE'),
        onTransportError: (error) => finish(error.message),
      });
      // The session is over once its BYE is handed to the transaction (RFC 3261 §15.1.1), not when
      // (or whether) the far end answers it: the transaction's retransmissions go on alone.
      this.end('local', `${reason}: BYE sent`);
    });
  }

  private ackTimedOut(): void {
    if (this.currentState !== 'answered') return;
    this.resolveAcknowledged(false);
    this.byeDone = this.sendBye('no ACK');
  }

  private end(by: 'remote' | 'local', reason: string): void {
    this.refresher.stop();
    if (this.dialog !== null) this.services.unregisterDialog(this.dialog);
    if (this.currentState === 'ended') return;
    const wasAnswered = this.currentState === 'answered';
    this.currentState = 'ended';
    if (wasAnswered) this.resolveAcknowledged(false);
    this.emit('ended', { by, reason });
  }

  handleAck(_request: ParsedSipRequest): void {
    if (this.pendingReinvite !== null) {
      this.pendingReinvite.acknowledge2xx();
      this.pendingReinvite = null;
    }
    if (this.currentState !== 'answered') return;
    this.transaction.acknowledge2xx();
    this.currentState = 'confirmed';
    this.resolveAcknowledged(true);
    this.emit('acknowledged', { callId: this.callId });
  }

  /** In-dialog requests come from where the INVITE came from, or the next hop the caller named. */
  acceptsSource(source: NetworkTarget): boolean {
    const dialog = this.dialog;
    if (dialog === null) return false;
    const named = this.requestTarget(dialog);
    const invite = this.transaction.source;
    return comesFromDialogPeer(source, [invite, { ...named, transport: invite.transport ?? 'udp' }]);
  }

  handleInDialogRequest(request: ParsedSipRequest, transaction: AnyServerTransaction): void {
    const dialog = this.dialog;
    if (dialog === null) return;
    const pending = answerInDialogRequest(
      request,
      transaction,
      {
        dialog,
        localSdp: this.localSdp,
        remoteSdp: this.sdpOffer ?? '',
        onBye: () => this.end('remote', 'BYE received'),
        onSessionRefresh: (expires) => this.refresher.refreshedByFarEnd(expires),
        onRefer: this.referHandler
          ? (refer) =>
              (this.referHandler as (referTo: string) => number)(headerValue(refer, 'Refer-To') ?? '')
          : undefined,
      },
      this.services,
    );
    if (pending !== null) this.pendingReinvite = pending;
  }

  handleStrayResponse(): void {}
}
