import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { newBranch } from './clientTransactions.js';
import { hasParam, parseNameAddr, parseSipUri, type SipUri } from './grammar.js';
import {
  headerValue,
  headerValues,
  type ParsedSipResponse,
  type SipHeader,
  type SipRequest,
} from './message.js';
import { type NetworkTarget, type SipTransportName, socketHost } from './transport.js';

/** How this user agent appears on the wire. */
export interface LocalEndpoint {
  /** Host for Via and Contact (IPv6 in brackets). */
  readonly host: string;
  readonly port: number;
  readonly userAgentName: string;
}

export const allowedMethods = 'INVITE, ACK, CANCEL, BYE, OPTIONS, UPDATE';

export function newTag(): string {
  return randomBytes(8).toString('hex');
}

export function newCallId(): string {
  return randomBytes(16).toString('hex');
}

export function viaHeader(local: LocalEndpoint, branch: string): SipHeader {
  return { name: 'Via', value: `SIP/2.0/UDP ${local.host}:${local.port};rport;branch=${branch}` };
}

export function contactHeader(local: LocalEndpoint, transport: SipTransportName = 'udp'): SipHeader {
  const parameter = transport === 'udp' ? '' : `;transport=${transport}`;
  return { name: 'Contact', value: `<sip:callwright@${local.host}:${local.port}${parameter}>` };
}

/**
 * A next hop inside a dialog reached the way the call itself was: a call placed over TLS or TCP
 * keeps its transport (and the certificate check) for every later request, never dropping to UDP.
 */
export function overCallTransport(nextHop: NetworkTarget, call: NetworkTarget): NetworkTarget {
  if (call.transport === undefined || call.transport === 'udp') return nextHop;
  return {
    host: nextHop.host,
    port: nextHop.port,
    transport: call.transport,
    ...(call.tls ? { tls: call.tls } : {}),
  };
}

/** Where a request for this URI goes: its host and port (5060 by default). SRV lookups are not done. */
export function uriTarget(uri: SipUri): NetworkTarget {
  return { host: uri.host, port: uri.port ?? 5060 };
}

/** The URI inside a Route, Record-Route or Contact value. */
export function addressUri(value: string): SipUri | null {
  return parseNameAddr(value)?.uri ?? null;
}

/** The URI text of a name-addr or addr-spec value: inside the angle brackets, or before any parameter. */
export function addressUriText(value: string): string {
  const inBrackets = /<([^>]*)>/.exec(value)?.[1];
  if (inBrackets !== undefined) return inBrackets.trim();
  const semicolon = value.indexOf(';');
  return (semicolon < 0 ? value : value.slice(0, semicolon)).trim();
}

export interface DialogInit {
  readonly callId: string;
  readonly localTag: string;
  readonly remoteTag: string;
  /** The From (UAC) or To (UAS) value we send, with our tag. */
  readonly localAddress: string;
  /** The To (UAC) or From (UAS) value we send, with the peer's tag. */
  readonly remoteAddress: string;
  readonly remoteTarget: string;
  readonly routeSet: readonly string[];
  readonly localSeq: number;
  readonly remoteSeq: number | null;
}

export function dialogId(callId: string, localTag: string, remoteTag: string): string {
  return `${callId}|${localTag}|${remoteTag}`;
}

/** The dialog a UAC holds after a 2xx (RFC 3261 §12.1.2): Record-Route reversed, Contact as target. */
export function uacDialogFromResponse(
  invite: SipRequest,
  response: { headers: readonly SipHeader[]; body: string },
  localTag: string,
  remoteTag: string,
  callId: string,
  localSeq: number,
): DialogInit | null {
  const contact = headerValues(response, 'Contact')[0];
  if (contact === undefined || addressUri(contact) === null) return null;
  return {
    callId,
    localTag,
    remoteTag,
    localAddress: headerValue(invite, 'From') ?? '',
    remoteAddress: headerValue(response, 'To') ?? '',
    remoteTarget: addressUriText(contact),
    routeSet: headerValues(response, 'Record-Route').reverse(),
    localSeq,
    remoteSeq: null,
  };
}

/** A dialog's state and the requests made within it (RFC 3261 §12.2.1). */
export class Dialog {
  readonly callId: string;
  readonly localTag: string;
  readonly remoteTag: string;
  readonly localAddress: string;
  readonly remoteAddress: string;
  readonly routeSet: readonly string[];
  remoteTarget: string;
  private localSeq: number;
  private remoteSeq: number | null;

  constructor(init: DialogInit) {
    this.callId = init.callId;
    this.localTag = init.localTag;
    this.remoteTag = init.remoteTag;
    this.localAddress = init.localAddress;
    this.remoteAddress = init.remoteAddress;
    this.remoteTarget = init.remoteTarget;
    this.routeSet = init.routeSet;
    this.localSeq = init.localSeq;
    this.remoteSeq = init.remoteSeq;
  }

  get id(): string {
    return dialogId(this.callId, this.localTag, this.remoteTag);
  }

  /**
   * Records the CSeq of a request from the peer; false when it is lower than one already seen
   * (the caller answers 500, RFC 3261 §12.2.2).
   */
  acceptRemoteSeq(seq: number): boolean {
    if (this.remoteSeq !== null && seq < this.remoteSeq) return false;
    this.remoteSeq = seq;
    return true;
  }

  /** Request-URI, Route headers and the next hop, for loose and strict routers alike. */
  private routing(): { requestUri: string; routes: string[]; nextHop: string } {
    const [firstRoute, ...otherRoutes] = this.routeSet;
    if (firstRoute === undefined)
      return { requestUri: this.remoteTarget, routes: [], nextHop: this.remoteTarget };
    const firstUri = addressUri(firstRoute);
    if (firstUri !== null && !hasParam(firstUri.params, 'lr')) {
      // Strict router: it becomes the Request-URI; the remote target goes last in Route.
      const strictUri = addressUriText(firstRoute);
      return {
        requestUri: strictUri,
        routes: [...otherRoutes, `<${this.remoteTarget}>`],
        nextHop: strictUri,
      };
    }
    return { requestUri: this.remoteTarget, routes: [...this.routeSet], nextHop: firstRoute };
  }

  /** The dialog's state, to store and rebuild elsewhere (a BYE from another process). */
  snapshot(): DialogInit {
    return {
      callId: this.callId,
      localTag: this.localTag,
      remoteTag: this.remoteTag,
      localAddress: this.localAddress,
      remoteAddress: this.remoteAddress,
      remoteTarget: this.remoteTarget,
      routeSet: [...this.routeSet],
      localSeq: this.localSeq,
      remoteSeq: this.remoteSeq,
    };
  }

  /** Where requests in this dialog go when no outbound proxy overrides it. */
  nextHopTarget(): NetworkTarget | null {
    const nextHop = this.routing().nextHop;
    const uri = parseSipUri(nextHop) ?? addressUri(nextHop);
    return uri === null ? null : uriTarget(uri);
  }

  /**
   * A new request in this dialog with a fresh branch and the next local CSeq. ACK reuses the
   * INVITE's CSeq number: pass `seq`.
   */
  createRequest(
    method: string,
    local: LocalEndpoint,
    options: { seq?: number; body?: string; contentType?: string; headers?: readonly SipHeader[] } = {},
  ): SipRequest {
    const seq = options.seq ?? ++this.localSeq;
    const { requestUri, routes } = this.routing();
    const headers: SipHeader[] = [
      viaHeader(local, newBranch()),
      { name: 'Max-Forwards', value: '70' },
      { name: 'From', value: this.localAddress },
      { name: 'To', value: this.remoteAddress },
      { name: 'Call-ID', value: this.callId },
      { name: 'CSeq', value: `${seq} ${method}` },
      ...routes.map((route) => ({ name: 'Route', value: route })),
    ];
    if (method === 'INVITE' || method === 'UPDATE') headers.push(contactHeader(local));
    headers.push({ name: 'User-Agent', value: local.userAgentName }, ...(options.headers ?? []));
    if (options.body !== undefined && options.body !== '') {
      headers.push({ name: 'Content-Type', value: options.contentType ?? 'application/sdp' });
    }
    return { kind: 'request', method, requestUri, headers, body: options.body ?? '' };
  }
}

/**
 * The next hop the far end chose for a dialog (its Contact or Record-Route), when it is an IP
 * literal that `allows` accepts; null otherwise, and the caller uses the call's own destination.
 * Host names from messages are never resolved: that would be DNS on the far end's say-so.
 */
export function allowedNextHop(
  dialog: Dialog,
  allows: ((address: string) => boolean) | undefined,
): NetworkTarget | null {
  const nextHop = dialog.nextHopTarget();
  if (nextHop === null) return null;
  const address = socketHost(nextHop.host);
  if (isIP(address) === 0) return null;
  return (allows?.(address) ?? true) ? nextHop : null;
}

/** An address as a socket reports it: no brackets, lower case, an IPv4-mapped IPv6 address as IPv4. */
function comparableAddress(host: string): string {
  const address = socketHost(host).toLowerCase();
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/**
 * Whether a request that names a dialog came from the peer the dialog is bound to (RFC 3261
 * §12.2.2): over the dialog's transport, from the address of one of `peers` (the server the call
 * went to, its outbound proxy, the next hop its answer named). Ports are not compared: a carrier
 * may send from another port than it listens on, and a stream's source port is ephemeral. A peer
 * named by a host name matches no source (sources are addresses; names are never resolved here).
 */
export function comesFromDialogPeer(source: NetworkTarget, peers: readonly NetworkTarget[]): boolean {
  const transport = source.transport ?? 'udp';
  const address = comparableAddress(source.host);
  return peers.some(
    (peer) => (peer.transport ?? 'udp') === transport && comparableAddress(peer.host) === address,
  );
}

/** A dialog for a 2xx without Contact: the Request-URI stands in as remote target. */
export function fallbackDialog(
  invite: SipRequest,
  response: ParsedSipResponse,
  localTag: string,
  remoteTag: string,
) {
  return {
    callId: response.callId,
    localTag,
    remoteTag,
    localAddress: invite.headers.find((header) => header.name === 'From')?.value ?? '',
    remoteAddress: response.headers.find((header) => header.name === 'To')?.value ?? '',
    remoteTarget: invite.requestUri,
    routeSet: headerValues(response, 'Record-Route').reverse(),
    remoteSeq: null,
  };
}
