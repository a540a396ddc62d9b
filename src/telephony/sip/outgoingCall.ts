import {
  type AnsweredInfo,
  type CallEnded,
  type CallFailure,
  type CallOutcome,
  defaultRingTimeoutMs,
  type InviteOptions,
  type OutgoingCallEvents,
  type OutgoingCallState,
} from './callTypes.js';
import type { InviteClientTransaction } from './clientTransactions.js';
import { newBranch } from './clientTransactions.js';
import {
  allowedNextHop,
  Dialog,
  type DialogInit,
  fallbackDialog,
  newCallId,
  newTag,
  overCallTransport,
  uacDialogFromResponse,
  uriTarget,
} from './dialog.js';
import { answerDigestChallenge, buildDigestAuthorization, selectDigestChallenge } from './digest.js';
import { TypedEvents } from './events.js';
import { paramValue } from './grammar.js';
import { answerInDialogRequest, type CallServices, type DialogOwner, type OfferAnswer } from './inDialog.js';
import {
  headerValues,
  type ParsedSipRequest,
  type ParsedSipResponse,
  type SipHeader,
  type SipRequest,
} from './message.js';
import { buildCancel, buildInviteHeaders, checkInviteOptions, releaseFork } from './outgoingRequests.js';
import { ReferTransfer, type TransferResult } from './referTransfer.js';
import type { AnyServerTransaction, InviteServerTransaction } from './serverTransactions.js';
import { DialogRefresher, defaultSessionExpiresS, longerSessionAsked } from './sessionTimer.js';
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
  private readonly target: NetworkTarget;
  private resolveOutcome: (outcome: CallOutcome) => void = () => {};
  private currentState: OutgoingCallState = 'calling';
  private inviteSeq = 1;
  private invite: SipRequest | null = null;
  private transaction: InviteClientTransaction | null = null;
  private provisionalReceived = false;
  private cancelCause: 'ring_timeout' | 'canceled' | null = null;
  private cancelSent = false;
  private readonly authHeaders = new Map<string, SipHeader>();
  private inviteAuthAttempts = 0;
  private dialog: Dialog | null = null;
  private ack: SipRequest | null = null;
  private answered: AnsweredInfo | null = null;
  private pendingReinvite: InviteServerTransaction | null = null;
  private byeDone: Promise<void> | null = null;
  private referral: ReferTransfer | null = null;
  private sessionExpiresS: number;
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
    this.target = options.outboundProxy ?? options.destination ?? uriTarget(requestUri);
    this.localSdp = options.sdpOffer;
    this.sessionExpiresS = options.sessionExpiresS ?? defaultSessionExpiresS;
    this.refresher = new DialogRefresher({
      services,
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
      seq: this.inviteSeq,
      authHeaders: [...this.authHeaders.values()],
      sessionExpiresS: this.sessionExpiresS,
      extraHeaders: this.options.extraHeaders ?? [],
    });
  }

  private sendInvite(): void {
    const invite: SipRequest = {
      kind: 'request',
      method: 'INVITE',
      requestUri: this.options.requestUri,
      headers: this.inviteHeaders(newBranch()),
      body: this.options.sdpOffer,
    };
    this.invite = invite;
    this.provisionalReceived = false;
    this.log.debug({ callId: this.callId, cseq: this.inviteSeq }, 'SIP INVITE sent');
    this.transaction = this.services.layer.sendRequest(invite, this.target, {
      onResponse: (response) => this.receiveInviteResponse(response),
      onTimeout: () =>
        this.fail({
          cause: 'transport_timeout',
          status: null,
          reason: 'no response to INVITE',
          timedOut: true,
        }),
      onTransportError: (error) =>
        this.fail({ cause: 'transport_error', status: null, reason: error.message, timedOut: false }),
    }) as InviteClientTransaction;
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
    const cancel = buildCancel(invite, this.inviteSeq, this.services.local.userAgentName);
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
    if ((response.status === 401 || response.status === 407) && this.retryWithCredentials(response)) return;
    if (response.status === 422 && this.retryWithLongerSession(response)) return;
    const challenged = response.status === 401 || response.status === 407;
    const cause = challenged && this.inviteAuthAttempts > 0 ? 'auth_failed' : 'rejected';
    this.fail({ cause, status: response.status, reason: response.reason, timedOut: false });
  }

  /** Re-sends the INVITE with credentials: CSeq + 1, same Call-ID and tag, new branch. */
  private retryWithCredentials(response: ParsedSipResponse): boolean {
    const credentials = this.options.credentials;
    if (credentials === undefined || this.cancelCause !== null) return false;
    const proxy = response.status === 407;
    const challenge = selectDigestChallenge(
      headerValues(response, proxy ? 'Proxy-Authenticate' : 'WWW-Authenticate'),
    );
    if (challenge === null) return false;
    const headerName = proxy ? 'Proxy-Authorization' : 'Authorization';
    const key = `${headerName}|${challenge.realm}`;
    if (this.inviteAuthAttempts >= 3 || (this.authHeaders.has(key) && !challenge.stale)) return false;
    this.inviteAuthAttempts++;
    const value = buildDigestAuthorization(challenge, credentials, {
      method: 'INVITE',
      uri: this.options.requestUri,
    });
    this.authHeaders.set(key, { name: headerName, value });
    this.inviteSeq++;
    this.log.debug({ callId: this.callId, status: response.status }, 'SIP INVITE challenged, retrying');
    this.sendInvite();
    return true;
  }

  /** 422 (RFC 4028 §6): ask again once with the interval the far end's Min-SE names. */
  private retryWithLongerSession(response: ParsedSipResponse): boolean {
    const minimumS = longerSessionAsked(response, this.sessionExpiresS);
    if (minimumS === null || this.cancelCause !== null) return false;
    this.sessionExpiresS = minimumS;
    this.inviteSeq++;
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
      this.inviteSeq,
    );
    const dialog = new Dialog(
      init ?? { ...fallbackDialog(invite, response, this.localTag, remoteTag), localSeq: this.inviteSeq },
    );
    this.dialog = dialog;
    this.services.registerDialog(dialog, this);
    this.ack = dialog.createRequest('ACK', this.services.local, {
      seq: this.inviteSeq,
      headers: [...this.authHeaders.values()],
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
      this.inviteSeq,
    );
    if (init === null) return;
    const fork = new Dialog(init);
    releaseFork(this.services, fork, this.dialogTarget(fork), this.inviteSeq);
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
          this.end('local', `BYE answered ${response.status}`);
          resolve();
        },
        onTimeout: () => {
          this.end('local', 'no response to BYE');
          resolve();
        },
        onTransportError: (error) => {
          this.end('local', error.message);
          resolve();
        },
      });
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
