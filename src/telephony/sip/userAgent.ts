import type { Logger } from '../../logger.js';
import type { InviteOptions } from './callTypes.js';
import { allowedMethods, type Dialog, dialogId, type LocalEndpoint, newTag } from './dialog.js';
import {
  type StoredDialogByeOptions,
  type StoredDialogByeResult,
  sendByeForStoredDialog,
} from './dialogBye.js';
import { paramValue } from './grammar.js';
import { IncomingCall } from './incomingCall.js';
import type { CallServices, DialogOwner } from './inDialog.js';
import { headerValues, type ParsedSipRequest, type ParsedSipResponse } from './message.js';
import { OutgoingCall } from './outgoingCall.js';
import { servicesAdvertising } from './outgoingRequests.js';
import { type RegistrationOptions, SipRegistration } from './registration.js';
import type { AnyServerTransaction, InviteServerTransaction } from './serverTransactions.js';
import type { StreamTransportOptions } from './streamTransport.js';
import { resolveTimerSettings, SipClock, type SipTimerSettings, type TimerScheduler } from './timers.js';
import { buildResponse, TransactionLayer, type TransactionUser } from './transactionLayer.js';
import type { NetworkTarget } from './transport.js';
import { SipTransports } from './transports.js';

export interface SipUserAgentOptions {
  /** Address to bind, e.g. `127.0.0.1`. */
  readonly bindAddress: string;
  /** UDP port; 0 picks a free one (read it back from `localEndpoint.port`). */
  readonly port: number;
  /** Address advertised in Via and Contact (NAT, containers); defaults to the bound one. */
  readonly publicAddress?: string;
  readonly publicPort?: number;
  readonly logger: Logger;
  /** RFC 3261 timers; pass `{ t1Ms: 20 }` in tests and the others scale with it. */
  readonly timers?: Partial<SipTimerSettings>;
  readonly timerScheduler?: TimerScheduler;
  /** Larger datagrams are dropped on receipt and refused on send. Default 65,507. */
  readonly maxDatagramBytes?: number;
  /** The User-Agent header. Default `callwright`. */
  readonly userAgentName?: string;
  /** Accept TCP connections on the SIP port's number; default true. */
  readonly listenTcp?: boolean;
  /** TCP and TLS connection settings (connect timeout, keep-alive, idle close). */
  readonly stream?: Omit<StreamTransportOptions, 'logger'>;
}

export type IncomingCallHandler = (call: IncomingCall) => void;

/**
 * A SIP user agent over UDP, TCP and TLS: places calls (UAC), receives them (UAS, for the sandbox
 * carrier), answers OPTIONS, and owns every transaction, dialog and timer it starts.
 */
export class SipUserAgent implements TransactionUser {
  readonly localEndpoint: LocalEndpoint;
  private readonly logger: Logger;
  private readonly transport: SipTransports;
  private readonly clock: SipClock;
  private readonly layer: TransactionLayer;
  private readonly services: CallServices;
  private readonly dialogs = new Map<string, DialogOwner>();
  private readonly incomingByTransaction = new WeakMap<InviteServerTransaction, IncomingCall>();
  private readonly outgoingCalls = new Set<OutgoingCall>();
  private incomingHandler: IncomingCallHandler | null = null;
  private outsidersRefused = 0;
  private outsiderReportedAtMs = 0;
  private closed = false;

  private constructor(options: SipUserAgentOptions, transport: SipTransports) {
    this.logger = options.logger;
    this.transport = transport;
    this.clock = new SipClock(resolveTimerSettings(options.timers), options.timerScheduler);
    this.layer = new TransactionLayer(transport, this.clock, this.logger);
    this.localEndpoint = {
      host: transport.udp.advertisedHost,
      port: transport.udp.advertisedPort,
      userAgentName: options.userAgentName ?? 'callwright',
    };
    this.services = {
      logger: this.logger,
      clock: this.clock,
      layer: this.layer,
      local: this.localEndpoint,
      registerDialog: (dialog, owner) => this.dialogs.set(dialog.id, owner),
      unregisterDialog: (dialog: Dialog) => this.dialogs.delete(dialog.id),
    };
    this.layer.setUser(this);
  }

  static async start(options: SipUserAgentOptions): Promise<SipUserAgent> {
    const transport = await SipTransports.open({
      logger: options.logger,
      ...(options.listenTcp === undefined ? {} : { listenTcp: options.listenTcp }),
      ...(options.stream === undefined ? {} : { stream: options.stream }),
      bindAddress: options.bindAddress,
      port: options.port,
      ...(options.publicAddress === undefined ? {} : { publicAddress: options.publicAddress }),
      ...(options.publicPort === undefined ? {} : { publicPort: options.publicPort }),
      ...(options.maxDatagramBytes === undefined ? {} : { maxDatagramBytes: options.maxDatagramBytes }),
    });
    const userAgent = new SipUserAgent(options, transport);
    options.logger.debug(
      { port: transport.udp.boundPort, tcpPort: transport.tcpPort },
      'SIP user agent listening',
    );
    return userAgent;
  }

  /** The port actually bound (differs from the advertised one behind NAT). */
  get boundPort(): number {
    return this.transport.udp.boundPort;
  }

  /** The TCP port accepting connections (the UDP one's number), or null when it was taken. */
  get tcpPort(): number | null {
    return this.transport.tcpPort;
  }

  /** TCP and TLS connections open now. */
  get streamConnectionCount(): number {
    return this.transport.streams.connectionCount;
  }

  /** Timers running now; 0 after close(). */
  get liveTimerCount(): number {
    return this.clock.liveTimerCount;
  }

  /** Places a call. Throws a TypeError for a malformed URI or a forbidden extra header. */
  invite(options: InviteOptions): OutgoingCall {
    if (this.closed) throw new Error('SIP user agent is closed');
    const call = new OutgoingCall(servicesAdvertising(this.services, options.advertisedHost), options);
    this.outgoingCalls.add(call);
    void call.outcome.then(() => this.outgoingCalls.delete(call));
    call.start();
    return call;
  }

  /**
   * Sends BYE for a dialog another process held (it died with the call up), from the dialog
   * state it stored; see sendByeForStoredDialog.
   */
  byeStoredDialog(options: StoredDialogByeOptions): Promise<StoredDialogByeResult> {
    if (this.closed) return Promise.resolve({ kind: 'transport_error', reason: 'SIP user agent is closed' });
    return sendByeForStoredDialog(this.services, options);
  }

  /** Registers our contact at a registrar and keeps it registered; `start()` it, `stop()` to remove it. */
  register(options: RegistrationOptions): SipRegistration {
    if (this.closed) throw new Error('SIP user agent is closed');
    return new SipRegistration(this.services, this.clock.group(), options);
  }

  /** Receives calls; without a handler INVITEs get 480. */
  onInvite(handler: IncomingCallHandler): void {
    this.incomingHandler = handler;
  }

  /**
   * Stops everything: pending outgoing calls fail (`transport_error`), answered ones end
   * locally without a BYE, every timer is cleared and the socket closed. Hang calls up first.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const call of this.outgoingCalls) call.abandon('user agent closed');
    this.outgoingCalls.clear();
    this.layer.terminateAll();
    this.clock.cancelAll();
    this.dialogs.clear();
    await this.transport.close();
  }

  private respond(transaction: AnyServerTransaction, status: number, extra: { reason?: string } = {}): void {
    const headers = [{ name: 'Allow', value: allowedMethods }];
    if (status === 200) headers.push({ name: 'Accept', value: 'application/sdp' });
    transaction.respond(buildResponse(transaction.request, status, { headers, toTag: newTag(), ...extra }));
  }

  onRequest(request: ParsedSipRequest, transaction: AnyServerTransaction): void {
    if (this.closed) return;
    const toTag = paramValue(request.to.params, 'tag');
    if (request.method === 'CANCEL') {
      this.receiveCancel(request, transaction);
      return;
    }
    if (typeof toTag === 'string' && toTag !== '') {
      const owner = this.dialogs.get(
        dialogId(request.callId, toTag, paramValue(request.from.params, 'tag') ?? ''),
      );
      if (owner === undefined) this.respond(transaction, 481);
      else if (!owner.acceptsSource(transaction.source)) this.refuseOutsider(request, transaction);
      else owner.handleInDialogRequest(request, transaction);
      return;
    }
    switch (request.method) {
      case 'INVITE':
        this.receiveInvite(request, transaction as InviteServerTransaction);
        return;
      case 'OPTIONS':
        this.respond(transaction, 200);
        return;
      case 'BYE':
        this.respond(transaction, 481);
        return;
      default:
        this.respond(transaction, 501);
    }
  }

  /**
   * A request carrying a live dialog's Call-ID and tags from somewhere else than the dialog's peer
   * (another address, or another transport than the call's): whoever sent it learned the
   * identifiers, and must not move the media, end the call or transfer it.
   */
  private refuseOutsider(request: ParsedSipRequest, transaction: AnyServerTransaction): void {
    this.outsidersRefused++;
    // One line a minute at most: whoever sends these may send many.
    const nowMs = Date.now();
    if (nowMs - this.outsiderReportedAtMs >= 60_000) {
      this.logger.warn(
        {
          method: request.method,
          source: transaction.source.host,
          transport: transaction.source.transport ?? 'udp',
          refused: this.outsidersRefused,
        },
        'SIP in-dialog request from outside the dialog refused',
      );
      this.outsiderReportedAtMs = nowMs;
      this.outsidersRefused = 0;
    }
    transaction.respond(buildResponse(request, 403, { reason: 'Not From The Dialog Peer' }));
  }

  private receiveCancel(request: ParsedSipRequest, transaction: AnyServerTransaction): void {
    const invite = this.layer.findInviteServerTransaction(request);
    if (invite === undefined) {
      this.respond(transaction, 481);
      return;
    }
    transaction.respond(buildResponse(request, 200));
    this.incomingByTransaction.get(invite)?.receiveCancel();
  }

  private receiveInvite(request: ParsedSipRequest, transaction: InviteServerTransaction): void {
    if (headerValues(request, 'Require').length > 0) {
      const unsupported = headerValues(request, 'Require').join(', ');
      transaction.respond(
        buildResponse(request, 420, {
          toTag: newTag(),
          headers: [{ name: 'Unsupported', value: unsupported }],
        }),
      );
      return;
    }
    const handler = this.incomingHandler;
    if (handler === null) {
      this.respond(transaction, 480);
      return;
    }
    const call = new IncomingCall(this.services, request, transaction);
    this.incomingByTransaction.set(transaction, call);
    try {
      handler(call);
    } catch (error) {
      this.logger.error(
        { err: error instanceof Error ? error.message : String(error) },
        'SIP invite handler failed',
      );
      if (call.state === 'offered' || call.state === 'ringing') call.reject(500);
    }
  }

  onAck(request: ParsedSipRequest, source: NetworkTarget): void {
    const toTag = paramValue(request.to.params, 'tag') ?? '';
    const owner = this.dialogs.get(
      dialogId(request.callId, toTag, paramValue(request.from.params, 'tag') ?? ''),
    );
    if (owner?.acceptsSource(source)) owner.handleAck(request);
  }

  onStrayResponse(response: ParsedSipResponse, _source: NetworkTarget): void {
    const fromTag = paramValue(response.from.params, 'tag') ?? '';
    const toTag = paramValue(response.to.params, 'tag') ?? '';
    this.dialogs.get(dialogId(response.callId, fromTag, toTag))?.handleStrayResponse(response);
  }
}
