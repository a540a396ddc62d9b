import {
  type AnsweredInfo,
  type CallEnded,
  type CallFailure,
  type CallOutcome,
  defaultFailoverAfterMs,
  defaultRingTimeoutMs,
  type InviteOptions,
  type OutgoingCallEvents,
  type OutgoingCallState,
} from './callTypes.js';
import type { InviteClientTransaction } from './clientTransactions.js';
import { newBranch } from './clientTransactions.js';
import {
  allowedNextHop,
  comesFromDialogPeer,
  Dialog,
  type DialogInit,
  fallbackDialog,
  newCallId,
  newTag,
  overCallTransport,
  uacDialogFromResponse,
  uriTarget,
} from './dialog.js';
import { answerDigestChallenge } from './digest.js';
import { TypedEvents } from './events.js';
import { paramValue } from './grammar.js';
import { answerInDialogRequest, type CallServices, type DialogOwner, type OfferAnswer } from './inDialog.js';
import { InviteAttempts } from './inviteAttempts.js';
import type { ParsedSipRequest, ParsedSipResponse, SipHeader, SipRequest } from './message.js';
import { buildCancel, buildInviteHeaders, checkInviteOptions, releaseFork } from './outgoingRequests.js';
import { ReferTransfer, type TransferResult } from './referTransfer.js';
import type { AnyServerTransaction, InviteServerTransaction } from './serverTransactions.js';
import { DialogRefresher } from './sessionTimer.js';
import type { TimerGroup } from './timers.js';
import type { NetworkTarget } from './transport.js';

/** An outbound call: INVITE, provisional responses, answer or failure, then BYE. */
export class OutgoingCall extends TypedEvents<OutgoingCallEvents> implements DialogOwner {
  readonly callId: string;
  /** Settles once the call is over, whether it failed or was answered and then ended. */
  readonly outcome: Promise<CallOutcome>;
  private readonly services: CallServices;
  private readonly options: InviteOptions;
  private readonly localTag = newTag();
  private readonly timers: TimerGroup;
  /** CSeq, digest answers, session interval, server and Request-URI of the INVITE now. */
  private readonly attempts: InviteAttempts;
  private resolveOutcome: (outcome: CallOutcome) => void = () => {};
  private currentState: OutgoingCallState = 'calling';
  private invite: SipRequest | null = null;
  private transaction: InviteClientTransaction | null = null;
  private provisionalReceived = false;
  private cancelCause: 'ring_timeout' | 'canceled' | null = null;
  private cancelSent = false;
  private dialog: Dialog | null = null;
  private ack: SipRequest | null = null;
  private answered: AnsweredInfo | null = null;
  private pendingReinvite: InviteServerTransaction | null = null;
  private byeDone: Promise<void> | null = null;
  private referral: ReferTransfer | null = null;
  private readonly refresher: DialogRefresher;
  private offerAnswerer: ((offerSdp: string) => OfferAnswer) | null = null;
  private localSdp: string;

  constructor(services: CallServices, options: InviteOptions) {
    super(services.logger);
    const requestUri = checkInviteOptions(options);
    this.callId = options.callId ?? newCallId();
    this.services = services;
    this.options = options;
    this.timers = services.clock.group();
    this.attempts = new InviteAttempts(
      options,
      options.outboundProxy ?? options.destination ?? uriTarget(requestUri),
    );
    this.localSdp = options.sdpOffer;
    this.refresher = new DialogRefresher({
      services: this.services,
      timers: this.timers,
      dialog: () =>
        this.dialog === null ? null : { dialog: this.dialog, target: this.dialogTarget(this.dialog) },
      localSdp: () => this.localSdp,
      expired: (reason) => {
        if (this.currentState === 'answered') this.byeDone = this.sendBye(false);
        this.log.info({ callId: this.callId, reason }, 'SIP session ended by its timer');
      },
    });
    this.outcome = new Promise((resolve) => {
      this.resolveOutcome = resolve;
    });
  }

  get state(): OutgoingCallState {
    return this.currentState;
  }

  /** Sends the INVITE and starts the ring timeout. Called by the user agent. */
  start(): void {
    const ringTimeoutMs = this.options.ringTimeoutMs ?? defaultRingTimeoutMs;
    this.timers.start('ring', ringTimeoutMs, () => this.requestCancel('ring_timeout'));
    this.sendInvite();
  }

  /** Cancels a call not yet answered; does nothing once it is answered or over (use hangUp). */
  cancel(): void {
    this.requestCancel('canceled');
  }

  /** Ends the call: BYE once answered, CANCEL before. Resolves when the call is over. */
  async hangUp(): Promise<void> {
    if (this.currentState === 'calling' || this.currentState === 'ringing') {
      this.requestCancel('canceled');
      await this.outcome;
      return;
    }
    if (this.currentState === 'answered') this.byeDone = this.sendBye(false);
    if (this.byeDone !== null) await this.byeDone;
  }

  /** The user agent is closing: settle the call without sending anything more. */
  abandon(reason: string): void {
    if (this.currentState === 'answered' || this.currentState === 'ending') {
      this.end('local', reason);
      return;
    }
    this.fail({ cause: 'transport_error', status: null, reason, timedOut: false });
  }

  /** Where the INVITE, its CANCEL and (as the fallback) in-dialog requests go. */
  private get target(): NetworkTarget {
    return this.attempts.target;
  }

  private get log() {
    return this.services.logger;
  }

  private inviteHeaders(branch: string): SipHeader[] {
    return buildInviteHeaders({
      local: this.services.local,
      branch,
      from: this.options.from,
      to: this.options.to,
      localTag: this.localTag,
      callId: this.callId,
      seq: this.attempts.seq,
      authHeaders: this.attempts.authorization,
      sessionExpiresS: this.attempts.sessionExpiresS,
      extraHeaders: this.options.extraHeaders ?? [],
    });
  }

  private sendInvite(): void {
    const invite: SipRequest = {
      kind: 'request',
      method: 'INVITE',
      requestUri: this.attempts.requestUri,
      headers: this.inviteHeaders(newBranch()),
      body: this.options.sdpOffer,
    };
    this.invite = invite;
    this.provisionalReceived = false;
    this.log.debug({ callId: this.callId, cseq: this.attempts.seq }, 'SIP INVITE sent');
    const noAnswer = (): void => {
      if (this.transaction !== transaction || this.retryElsewhere(null)) return;
      this.fail({
        cause: 'transport_timeout',
        status: null,
        reason: 'no response to INVITE',
        timedOut: true,
      });
    };
    const transaction = this.services.layer.sendRequest(invite, this.target, {
      onResponse: (response) => {
        if (this.transaction === transaction) this.receiveInviteResponse(response);
      },
      onTimeout: noAnswer,
      onTransportError: (error) => {
        if (this.transaction !== transaction || this.retryElsewhere(null)) return;
        this.fail({ cause: 'transport_error', status: null, reason: error.message, timedOut: false });
      },
    }) as InviteClientTransaction;
    this.transaction = transaction;
    // A server that says nothing at all is skipped after a while when the trunk has another.
    if (this.attempts.hasNextServer) {
      this.timers.start('failover', this.options.failoverAfterMs ?? defaultFailoverAfterMs, () => {
        transaction.terminate();
        noAnswer();
      });
    }
  }

  private requestCancel(cause: 'ring_timeout' | 'canceled'): void {
    if (this.currentState !== 'calling' && this.currentState !== 'ringing') return;
    if (this.cancelCause !== null) return;
    this.cancelCause = cause;
    this.timers.stop('ring');
    this.log.debug({ callId: this.callId, cause }, 'SIP call cancel requested');
    if (this.provisionalReceived) this.sendCancel();
  }

  /** RFC 3261 §9.1: the INVITE's Request-URI, Call-ID, From, To, Route, top Via and CSeq number. */
  private sendCancel(): void {
    const invite = this.invite;
    if (invite === null || this.cancelSent) return;
    this.cancelSent = true;
    const cancel = buildCancel(invite, this.attempts.seq, this.services.local.userAgentName);
    this.services.layer.sendRequest(cancel, this.target, {
      onResponse: () => {},
      onTimeout: () => {},
      onTransportError: () => {},
    });
    // A far end that never sends the final response: give up 64 × T1 after the CANCEL.
    this.timers.start('cancelGuard', this.services.clock.transactionTimeoutMs, () => {
      this.transaction?.terminate();
      this.fail({
        cause: this.cancelCause ?? 'canceled',
        status: null,
        reason: 'no response to CANCEL',
        timedOut: false,
      });
    });
  }

  private receiveInviteResponse(response: ParsedSipResponse): void {
    this.timers.stop('failover');
    if (response.status < 200) {
      this.provisionalReceived = true;
      if (response.status > 100 && this.currentState === 'calling') this.currentState = 'ringing';
      if (this.currentState === 'calling' || this.currentState === 'ringing') {
        const sdp = response.body === '' ? null : response.body;
        this.emit('provisional', { status: response.status, reason: response.reason, sdp });
      }
      if (this.cancelCause !== null) this.sendCancel();
      return;
    }
    if (response.status < 300) {
      this.receive2xx(response);
      return;
    }
    this.timers.stop('ring');
    if (this.cancelSent && this.cancelCause !== null) {
      this.fail({
        cause: this.cancelCause,
        status: response.status,
        reason: response.reason,
        timedOut: false,
      });
      return;
    }
    const challenged = response.status === 401 || response.status === 407;
    if (
      (challenged && this.attempts.answerChallenge(response)) ||
      (response.status === 422 && this.attempts.lengthenSession(response))
    ) {
      this.sendInvite();
      return;
    }
    if (this.retryElsewhere(response)) return;
    const cause = challenged && this.attempts.answeredAChallenge ? 'auth_failed' : 'rejected';
    this.fail({ cause, status: response.status, reason: response.reason, timedOut: false });
  }

  /**
   * A new INVITE (CSeq + 1, same Call-ID and tag) after a redirect (3xx), or to the trunk's next
   * server after a 503, a 408 or no answer (`null`); false when there is nowhere else to try.
   */
  private retryElsewhere(response: ParsedSipResponse | null): boolean {
    const pending =
      this.cancelCause === null && (this.currentState === 'calling' || this.currentState === 'ringing');
    const next =
      pending && !(response === null && this.provisionalReceived) ? this.attempts.retarget(response) : null;
    if (next === null) return false;
    this.timers.stop('failover');
    const status = response?.status ?? null;
    this.log.info({ callId: this.callId, status, host: next.target.host }, 'SIP INVITE retried elsewhere');
    this.sendInvite();
    return true;
  }

  private receive2xx(response: ParsedSipResponse): void {
    const invite = this.invite;
    if (invite === null) return;
    const remoteTag = paramValue(response.to.params, 'tag') ?? '';
    if (this.dialog !== null) {
      if (remoteTag === this.dialog.remoteTag) this.sendAck();
      else this.acknowledgeAndReleaseFork(invite, response, remoteTag);
      return;
    }
    this.timers.stop('ring');
    this.timers.stop('cancelGuard');
    const init = uacDialogFromResponse(
      invite,
      response,
      this.localTag,
      remoteTag,
      this.callId,
      this.attempts.seq,
    );
    const dialog = new Dialog(
      init ?? { ...fallbackDialog(invite, response, this.localTag, remoteTag), localSeq: this.attempts.seq },
    );
    this.dialog = dialog;
    this.services.registerDialog(dialog, this);
    this.ack = dialog.createRequest('ACK', this.services.local, {
      seq: this.attempts.seq,
      headers: this.attempts.authorization,
    });
    this.sendAck();
    if (this.cancelCause !== null || response.body === '') {
      const failure: CallFailure =
        this.cancelCause !== null
          ? {
              cause: this.cancelCause,
              status: response.status,
              reason: 'answered after cancel',
              timedOut: false,
            }
          : {
              cause: 'bad_answer',
              status: response.status,
              reason: '2xx without SDP answer',
              timedOut: false,
            };
      this.currentState = 'answered';
      this.byeDone = this.sendBye(false);
      this.fail(failure);
      return;
    }
    this.currentState = 'answered';
    this.answered = { status: response.status, sdpAnswer: response.body };
    this.refresher.answered(response);
    this.log.debug({ callId: this.callId }, 'SIP call answered');
    this.emit('answered', this.answered);
  }

  /**
   * Where requests in a dialog go: the outbound proxy, else the next hop the far end named when it
   * is an IP literal it may name (no DNS on its say-so), else the call's destination.
   */
  private dialogTarget(dialog: Dialog): NetworkTarget {
    if (this.options.outboundProxy) return this.options.outboundProxy;
    const allowed = allowedNextHop(dialog, this.options.allowsRemoteAddress);
    if (allowed !== null) return overCallTransport(allowed, this.target);
    const named = dialog.nextHopTarget();
    if (named !== null && named.host !== this.target.host) {
      this.log.warn(
        { callId: this.callId, nextHop: named.host },
        'SIP next hop named by the far end refused; using the call destination',
      );
    }
    return this.target;
  }

  /** The dialog's state once answered, to store (another process can then send its BYE). */
  get dialogState(): DialogInit | null {
    return this.dialog?.snapshot() ?? null;
  }

  private sendAck(): void {
    if (this.ack === null || this.dialog === null) return;
    this.services.layer.sendStateless(this.ack, this.dialogTarget(this.dialog)).catch(() => {});
  }

  /** A second 2xx from another fork: ACK it, then BYE it (RFC 3261 §13.2.2.4). */
  private acknowledgeAndReleaseFork(
    invite: SipRequest,
    response: ParsedSipResponse,
    remoteTag: string,
  ): void {
    const init = uacDialogFromResponse(
      invite,
      response,
      this.localTag,
      remoteTag,
      this.callId,
      this.attempts.seq,
    );
    if (init === null) return;
    const fork = new Dialog(init);
    releaseFork(this.services, fork, this.dialogTarget(fork), this.attempts.seq);
  }

  /**
   * Answers the far end's new offers (hold, a media move, another codec in a re-INVITE or UPDATE)
   * with `answerer`, which also applies them to the media; without one, only an offer that leaves
   * the media as it is gets 200.
   */
  answerOffersWith(answerer: (offerSdp: string) => OfferAnswer): void {
    this.offerAnswerer = answerer;
  }

  /** A cold transfer of the answered call by REFER; resolves with how it went (the call stays up). */
  transfer(referTo: string, timeoutMs = 30_000): Promise<TransferResult> {
    const dialog = this.dialog;
    if (dialog === null || this.currentState !== 'answered')
      return Promise.resolve({ kind: 'failed', status: null, reason: 'the call is not up' });
    const { credentials } = this.options;
    this.referral = new ReferTransfer(this.services, dialog, this.dialogTarget(dialog), referTo, {
      timeoutMs,
      ...(credentials ? { credentials } : {}),
    });
    return this.referral.result;
  }

  private sendBye(authenticated: boolean, authHeader?: SipHeader): Promise<void> {
    const dialog = this.dialog;
    if (dialog === null) return Promise.resolve();
    if (this.currentState === 'answered') this.currentState = 'ending';
    const bye = dialog.createRequest('BYE', this.services.local, { headers: authHeader ? [authHeader] : [] });
    return new Promise((resolve) => {
      this.services.layer.sendRequest(bye, this.dialogTarget(dialog), {
        onResponse: (response) => {
          if (response.status < 200) return;
          const retry = !authenticated ? this.byeAuthorization(response) : null;
          if (retry !== null) {
            void this.sendBye(true, retry).then(resolve);
            return;
          }
          resolve();
        },
        onTimeout: () => {
          this.log.debug({ callId: this.callId }, 'no response to BYE');
          resolve();
        },
        onTransportError: (error) => {
          this.log.debug({ callId: this.callId, err: error }, 'the BYE could not be sent');
          resolve();
        },
      });
      // The session is over once its BYE is handed to the transaction (RFC 3261 §15.1.1), not when
      // (or whether) the far end answers it: the transaction's retransmissions go on alone, and a
      // challenge to the BYE is still answered above.
      this.end('local', 'BYE sent');
    });
  }

  private byeAuthorization(response: ParsedSipResponse): SipHeader | null {
    const credentials = this.options.credentials;
    if (credentials === undefined || this.dialog === null) return null;
    return answerDigestChallenge(response, credentials, { method: 'BYE', uri: this.dialog.remoteTarget });
  }

  private fail(failure: CallFailure): void {
    if (this.currentState === 'failed' || this.currentState === 'ended') return;
    const hangingUp = this.currentState === 'ending';
    this.currentState = 'failed';
    this.timers.stopAll();
    this.log.debug({ callId: this.callId, cause: failure.cause, status: failure.status }, 'SIP call failed');
    this.emit('failed', failure);
    this.resolveOutcome({ kind: 'failed', failure });
    if (!hangingUp && this.dialog !== null) this.services.unregisterDialog(this.dialog);
  }

  private end(by: 'remote' | 'local', reason: string): void {
    if (this.dialog !== null) this.services.unregisterDialog(this.dialog);
    if (this.currentState !== 'answered' && this.currentState !== 'ending') return;
    this.currentState = 'ended';
    this.timers.stopAll();
    const ended: CallEnded = { by, reason };
    this.log.debug({ callId: this.callId, by }, 'SIP call ended');
    this.emit('ended', ended);
    if (this.answered !== null) this.resolveOutcome({ kind: 'ended', answered: this.answered, ended });
  }

  /** Requests in the call come from its server, outbound proxy or allowed next hop, over its transport. */
  acceptsSource(source: NetworkTarget): boolean {
    const nextHop = this.dialog && allowedNextHop(this.dialog, this.options.allowsRemoteAddress);
    const peers = [this.target, ...(nextHop ? [overCallTransport(nextHop, this.target)] : [])];
    return this.dialog !== null && comesFromDialogPeer(source, peers);
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
        remoteSdp: this.answered?.sdpAnswer ?? '',
        onBye: () => this.end('remote', 'BYE received'),
        answerOffer: this.offerAnswerer
          ? (offer) => {
              const answer = (this.offerAnswerer as (offerSdp: string) => OfferAnswer)(offer);
              if ('sdp' in answer) this.localSdp = answer.sdp;
              return answer;
            }
          : undefined,
        onSessionRefresh: (expires) => this.refresher.refreshedByFarEnd(expires),
        onReferNotify: this.referral ? (notify) => this.referral?.notify(notify) : undefined,
      },
      this.services,
    );
    if (pending !== null) this.pendingReinvite = pending;
  }

  handleAck(_request: ParsedSipRequest): void {
    this.pendingReinvite?.acknowledge2xx();
    this.pendingReinvite = null;
  }

  handleStrayResponse(response: ParsedSipResponse): void {
    if (response.cseq.method === 'INVITE' && response.status >= 200 && response.status < 300)
      this.receive2xx(response);
  }
}
