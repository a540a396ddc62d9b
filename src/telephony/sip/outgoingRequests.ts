import { type InviteOptions, protectedHeaderNames, type SipAddressInput } from './callTypes.js';
import { allowedMethods, contactHeader, type Dialog, type LocalEndpoint, viaHeader } from './dialog.js';
import { formatNameAddr, isToken, parseSipUri, type SipUri } from './grammar.js';
import type { CallServices } from './inDialog.js';
import type { SipHeader, SipRequest } from './message.js';
import { sessionTimerRequestHeaders } from './sessionTimer.js';
import type { NetworkTarget } from './transport.js';

/** The requests an outgoing call builds outside its dialog: the INVITE's headers and its CANCEL. */

export interface InviteHeaderInput {
  readonly local: LocalEndpoint;
  readonly branch: string;
  readonly from: SipAddressInput;
  readonly to: SipAddressInput;
  readonly localTag: string;
  readonly callId: string;
  readonly seq: number;
  readonly authHeaders: readonly SipHeader[];
  /** 0: no session timer asked for. */
  readonly sessionExpiresS: number;
  readonly extraHeaders: readonly SipHeader[];
}

/** Throws a TypeError for a malformed URI, Call-ID or a forbidden extra header; returns the Request-URI. */
export function checkInviteOptions(options: InviteOptions): SipUri {
  const requestUri = parseSipUri(options.requestUri);
  if (requestUri === null) throw new TypeError('requestUri is not a SIP URI');
  if (options.callId !== undefined && !/^[A-Za-z0-9.!%*_+`'~-]{16,128}$/.test(options.callId)) {
    throw new TypeError('callId must be 16 to 128 token characters');
  }
  if (parseSipUri(options.from.uri) === null || parseSipUri(options.to.uri) === null) {
    throw new TypeError('from.uri and to.uri must be SIP URIs');
  }
  for (const header of options.extraHeaders ?? []) {
    if (!isToken(header.name) || protectedHeaderNames.has(header.name.toLowerCase())) {
      throw new TypeError(`extra header ${header.name} is not allowed`);
    }
  }
  return requestUri;
}

/** The INVITE's headers (the URIs were checked when the call was created). */
export function buildInviteHeaders(input: InviteHeaderInput): SipHeader[] {
  const address = (given: SipAddressInput, params: [string, string][]) =>
    formatNameAddr({
      displayName: given.displayName ?? null,
      uri: parseSipUri(given.uri)!,
      params,
    });
  return [
    viaHeader(input.local, input.branch),
    { name: 'Max-Forwards', value: '70' },
    { name: 'From', value: address(input.from, [['tag', input.localTag]]) },
    { name: 'To', value: address(input.to, []) },
    { name: 'Call-ID', value: input.callId },
    { name: 'CSeq', value: `${input.seq} INVITE` },
    contactHeader(input.local),
    ...input.authHeaders,
    { name: 'Allow', value: allowedMethods },
    ...(input.sessionExpiresS > 0 ? sessionTimerRequestHeaders(input.sessionExpiresS) : []),
    { name: 'User-Agent', value: input.local.userAgentName },
    ...input.extraHeaders,
    { name: 'Content-Type', value: 'application/sdp' },
  ];
}

/** RFC 3261 §9.1: the INVITE's Request-URI, Call-ID, From, To, Route, top Via and CSeq number. */
export function buildCancel(invite: SipRequest, inviteSeq: number, userAgentName: string): SipRequest {
  const copied = invite.headers.filter((header) =>
    ['From', 'To', 'Call-ID', 'Route', 'Max-Forwards'].includes(header.name),
  );
  const topVia = invite.headers.find((header) => header.name === 'Via');
  return {
    kind: 'request',
    method: 'CANCEL',
    requestUri: invite.requestUri,
    headers: [
      ...(topVia === undefined ? [] : [topVia]),
      ...copied,
      { name: 'CSeq', value: `${inviteSeq} CANCEL` },
      { name: 'User-Agent', value: userAgentName },
    ],
    body: '',
  };
}

/** A second 2xx from another fork: ACK it, then BYE it (RFC 3261 §13.2.2.4). */
export function releaseFork(
  services: CallServices,
  fork: Dialog,
  target: NetworkTarget,
  inviteSeq: number,
): void {
  const ack = fork.createRequest('ACK', services.local, { seq: inviteSeq });
  services.layer.sendStateless(ack, target).catch(() => {});
  const bye = fork.createRequest('BYE', services.local);
  services.layer.sendRequest(bye, target, {
    onResponse: () => {},
    onTimeout: () => {},
    onTransportError: () => {},
  });
}

/** The call's services with Via and Contact naming `advertisedHost` (a trunk's own public address). */
export function servicesAdvertising(
  services: CallServices,
  advertisedHost: string | undefined,
): CallServices {
  if (advertisedHost === undefined) return services;
  const host = advertisedHost.includes(':') ? `[${advertisedHost}]` : advertisedHost;
  return { ...services, local: { ...services.local, host } };
}
