import type { Logger } from '../../logger.js';
import {
  type ClientTransactionContext,
  type ClientTransactionEvents,
  clientTransactionKey,
  InviteClientTransaction,
  NonInviteClientTransaction,
} from './clientTransactions.js';
import { paramValue } from './grammar.js';
import {
  type ParsedSipRequest,
  type ParsedSipResponse,
  parseSipMessage,
  reasonPhrase,
  type SipMessage,
  type SipRequest,
  serializeSipMessage,
} from './message.js';
import {
  type AnyServerTransaction,
  InviteServerTransaction,
  NonInviteServerTransaction,
  responseTarget,
  type ServerTransactionContext,
  serverTransactionKey,
} from './serverTransactions.js';
import type { SipClock } from './timers.js';
import type { NetworkTarget, SipTransportName } from './transport.js';

/** What the layer sends through and hears from: UDP, TCP and TLS behind one face. */
export interface MessageTransport {
  send(data: Buffer, target: NetworkTarget): Promise<void>;
  onMessage(handler: (data: Buffer, source: NetworkTarget) => void): void;
}

/** The layer above transactions: the user agent core. */
export interface TransactionUser {
  /** A new request (not a retransmission, not an ACK) with the server transaction created for it. */
  onRequest(request: ParsedSipRequest, transaction: AnyServerTransaction): void;
  /** An ACK that matched no server transaction: the ACK of a 2xx, for a dialog. */
  onAck(request: ParsedSipRequest, source: NetworkTarget): void;
  /** A response that matched no client transaction (a late 2xx retransmission, say). */
  onStrayResponse(response: ParsedSipResponse, source: NetworkTarget): void;
}

/** Builds a response to a request, copying Via, From, To, Call-ID and CSeq (RFC 3261 §8.2.6). */
export function buildResponse(
  request: SipRequest,
  status: number,
  options: { reason?: string; toTag?: string; headers?: SipMessage['headers']; body?: string } = {},
): SipMessage & { kind: 'response' } {
  const copied = request.headers.filter((header) =>
    ['Via', 'From', 'Call-ID', 'CSeq', 'Record-Route'].includes(header.name),
  );
  const headers = copied.filter((header) => header.name !== 'Record-Route' || (status > 100 && status < 300));
  const toHeader = request.headers.find((header) => header.name === 'To');
  let toValue = toHeader?.value ?? '';
  if (options.toTag !== undefined && status > 100 && !/;\s*tag=/i.test(toValue)) {
    toValue = `${toValue};tag=${options.toTag}`;
  }
  const cseqIndex = headers.findIndex((header) => header.name === 'CSeq');
  headers.splice(cseqIndex < 0 ? headers.length : cseqIndex, 0, { name: 'To', value: toValue });
  return {
    kind: 'response',
    status,
    reason: options.reason ?? reasonPhrase(status),
    headers: [...headers, ...(options.headers ?? [])],
    body: options.body ?? '',
  };
}

/**
 * A request as it leaves over `transport` (RFC 3261 §18.1.1): the top Via names the transport,
 * with `alias` on a stream so the peer may reuse the connection for requests to us (RFC 5923),
 * and our own Contact carries `transport=`. Over UDP the request is unchanged.
 */
export function stampTransport(request: SipRequest, transport: SipTransportName | undefined): SipRequest {
  if (transport === undefined || transport === 'udp') return request;
  let viaDone = false;
  const headers = request.headers.map((header) => {
    if (header.name === 'Via' && !viaDone) {
      viaDone = true;
      const value = header.value.replace(/^SIP\/2\.0\/UDP /, `SIP/2.0/${transport.toUpperCase()} `);
      return {
        name: 'Via',
        value: /;alias\b/.test(value) ? value : value.replace(/;branch=/, ';alias;branch='),
      };
    }
    if (header.name === 'Contact' && /^<sip:callwright@[^;>]+>$/.test(header.value))
      return { name: 'Contact', value: `${header.value.slice(0, -1)};transport=${transport}>` };
    return header;
  });
  return { ...request, headers };
}

/** Owns every transaction of one user agent and routes datagrams to them. */
export class TransactionLayer {
  private readonly clientTransactions = new Map<
    string,
    InviteClientTransaction | NonInviteClientTransaction
  >();
  private readonly serverTransactions = new Map<string, AnyServerTransaction>();
  private readonly transport: MessageTransport;
  private readonly logger: Logger;
  private readonly clientContext: ClientTransactionContext;
  private readonly serverContext: ServerTransactionContext;
  private user: TransactionUser | null = null;

  constructor(transport: MessageTransport, clock: SipClock, logger: Logger) {
    this.transport = transport;
    this.logger = logger;
    this.clientContext = {
      clock,
      sendBytes: (data, target) => this.transport.send(data, target),
      removeClient: (key) => this.clientTransactions.delete(key),
    };
    this.serverContext = {
      clock,
      sendBytes: (data, target) => this.transport.send(data, target),
      removeServer: (key) => this.serverTransactions.delete(key),
      reportSendError: (error) =>
        this.logger.warn(
          { err: error instanceof Error ? error.message : String(error) },
          'SIP response send failed',
        ),
    };
    transport.onMessage((data, source) => this.receiveDatagram(data, source));
  }

  setUser(user: TransactionUser): void {
    this.user = user;
  }

  /** Starts a client transaction for a request whose top Via already carries a fresh branch. */
  sendRequest(
    request: SipRequest,
    target: NetworkTarget,
    events: ClientTransactionEvents,
  ): InviteClientTransaction | NonInviteClientTransaction {
    request = stampTransport(request, target.transport);
    const transaction =
      request.method === 'INVITE'
        ? new InviteClientTransaction(this.clientContext, request, target, events)
        : new NonInviteClientTransaction(this.clientContext, request, target, events);
    this.clientTransactions.set(transaction.key, transaction);
    this.logger.debug({ method: request.method }, 'SIP request sent');
    transaction.start();
    return transaction;
  }

  /** Sends a message outside any transaction (the ACK of a 2xx, a stateless reply). */
  sendStateless(message: SipMessage, target: NetworkTarget): Promise<void> {
    const stamped = message.kind === 'request' ? stampTransport(message, target.transport) : message;
    return this.transport.send(serializeSipMessage(stamped), target);
  }

  /** The INVITE server transaction a CANCEL refers to (same branch and sent-by). */
  findInviteServerTransaction(cancel: ParsedSipRequest): InviteServerTransaction | undefined {
    const transaction = this.serverTransactions.get(serverTransactionKey(cancel, 'INVITE'));
    return transaction instanceof InviteServerTransaction ? transaction : undefined;
  }

  get activeTransactionCount(): number {
    return this.clientTransactions.size + this.serverTransactions.size;
  }

  /** Ends every transaction without sending anything more. */
  terminateAll(): void {
    for (const transaction of [...this.clientTransactions.values()]) transaction.terminate();
    for (const transaction of [...this.serverTransactions.values()]) transaction.terminate();
  }

  private receiveDatagram(data: Buffer, source: NetworkTarget): void {
    // Keep-alive pings (CRLF) carry nothing.
    if (data.length <= 4 && data.toString('latin1').trim() === '') return;
    const parsed = parseSipMessage(data);
    if (!parsed.ok) {
      this.logger.debug({ reason: parsed.reason, bytes: data.length }, 'SIP datagram dropped');
      return;
    }
    try {
      const message = parsed.message;
      if (message.kind === 'response') this.receiveResponse(message, source);
      else this.receiveRequest(message, source);
    } catch (error) {
      this.logger.error(
        { err: error instanceof Error ? error.message : String(error) },
        'SIP message handling failed',
      );
    }
  }

  private receiveResponse(response: ParsedSipResponse, source: NetworkTarget): void {
    const branch = paramValue(response.vias[0].params, 'branch') ?? '';
    const transaction = this.clientTransactions.get(clientTransactionKey(branch, response.cseq.method));
    if (transaction !== undefined) transaction.receive(response);
    else this.user?.onStrayResponse(response, source);
  }

  private receiveRequest(request: ParsedSipRequest, source: NetworkTarget): void {
    const key = serverTransactionKey(request);
    const existing = this.serverTransactions.get(key);
    if (request.method === 'ACK') {
      if (existing instanceof InviteServerTransaction && existing.currentState === 'completed') {
        existing.receiveAck();
        return;
      }
      this.user?.onAck(request, source);
      return;
    }
    if (existing !== undefined) {
      existing.receiveRetransmission();
      return;
    }
    if (this.user === null) {
      const response = buildResponse(request, 503);
      void this.transport
        .send(serializeSipMessage(response), responseTarget(request.vias[0], source))
        .catch(() => {});
      return;
    }
    const transaction =
      request.method === 'INVITE'
        ? new InviteServerTransaction(this.serverContext, request, source)
        : new NonInviteServerTransaction(this.serverContext, request, source);
    this.serverTransactions.set(transaction.key, transaction);
    if (transaction instanceof InviteServerTransaction) transaction.respond(buildResponse(request, 100));
    this.user.onRequest(request, transaction);
  }
}
