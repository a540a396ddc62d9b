import { isIP } from 'node:net';
import { overCallTransport } from './dialog.js';
import { formatSipUri, paramValue, parseNameAddr, parseSipUri, type SipParams } from './grammar.js';
import { headerValues, type ParsedSipResponse } from './message.js';
import { type NetworkTarget, socketHost } from './transport.js';

/** Redirects followed per call at most (a loop of 3xx ends there). */
export const maxRedirects = 3;

/** Where the INVITE is tried next: another server of the trunk, or a redirect's new target. */
export interface InviteRetarget {
  requestUri: string;
  target: NetworkTarget;
}

export interface RetargetingOptions {
  requestUri: string;
  /** The servers to try, in order (DNS SRV targets of the trunk): the first is tried first. */
  targets: readonly NetworkTarget[];
  /** The outbound proxy: every attempt goes to it; only redirects change the Request-URI. */
  proxied: boolean;
  allowsRemoteAddress?: (address: string) => boolean;
}

/**
 * The INVITE's next attempt after a failure (RFC 3263 §4.3, RFC 3261 §8.1.3.4):
 *
 * - a 503, a 408 or no answer at all from one server → the next of the trunk's servers, same
 *   Request-URI (a carrier with several SBCs behind one SRV name keeps taking calls when one is down);
 * - a 3xx → its Contacts by q-value, as the new Request-URI. A redirect may name the same host
 *   (sent to the server in use), or an IP literal the call's address guard allows; never a host name
 *   (no DNS on the far end's say-so) and never down from sips: to sip:. At most three redirects,
 *   none to a URI already tried.
 */
export class InviteRetargeting {
  private readonly options: RetargetingOptions;
  private serverIndex = 0;
  private redirects = 0;
  private readonly tried = new Set<string>();
  current: InviteRetarget;

  constructor(options: RetargetingOptions) {
    if (options.targets.length === 0) throw new RangeError('at least one target is needed');
    this.options = options;
    this.current = { requestUri: options.requestUri, target: options.targets[0]! };
    this.tried.add(normalised(options.requestUri));
  }

  /** The next server of the trunk for the same Request-URI, or null when none is left. */
  nextServer(): InviteRetarget | null {
    if (!this.hasNextServer) return null;
    this.serverIndex++;
    this.current = { requestUri: this.current.requestUri, target: this.options.targets[this.serverIndex]! };
    return this.current;
  }

  /** Whether another server is left to try. */
  get hasNextServer(): boolean {
    return !this.options.proxied && this.serverIndex + 1 < this.options.targets.length;
  }

  /** The new attempt a 3xx asks for, or null when none of its Contacts may be followed. */
  redirect(response: ParsedSipResponse): InviteRetarget | null {
    if (this.redirects >= maxRedirects) return null;
    const contacts = headerValues(response, 'Contact')
      .flatMap((value) => splitContacts(value))
      .map((value) => parseNameAddr(value))
      .filter((address) => address !== null)
      .map((address) => ({ address, q: qValue(address.params) }))
      .sort((a, b) => b.q - a.q);
    const currentUri = parseSipUri(this.current.requestUri);
    for (const { address } of contacts) {
      const uri = { ...address.uri, headers: null };
      if (currentUri?.scheme === 'sips' && uri.scheme !== 'sips') continue;
      const requestUri = formatSipUri(uri);
      if (this.tried.has(normalised(requestUri))) continue;
      const target = this.targetFor(uri.host, uri.port, currentUri?.host ?? null);
      if (target === null) continue;
      this.redirects++;
      this.tried.add(normalised(requestUri));
      this.current = { requestUri, target };
      return this.current;
    }
    return null;
  }

  private targetFor(host: string, port: number | null, currentHost: string | null): NetworkTarget | null {
    const serving = this.current.target;
    if (this.options.proxied) return serving;
    if (currentHost !== null && host.toLowerCase() === currentHost.toLowerCase() && port === null)
      return serving;
    const address = socketHost(host);
    if (isIP(address) === 0) return null;
    if (!(this.options.allowsRemoteAddress?.(address) ?? true)) return null;
    return overCallTransport(
      { host: address, port: port ?? (serving.transport === 'tls' ? 5061 : 5060) },
      serving,
    );
  }
}

/** A Contact header value may list several addresses, separated by commas outside <> and quotes. */
function splitContacts(value: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < value.length; i++) {
    const char = value[i];
    if (char === '"' && value[i - 1] !== '\\') quoted = !quoted;
    else if (!quoted && char === '<') depth++;
    else if (!quoted && char === '>') depth--;
    else if (!quoted && depth === 0 && char === ',') {
      parts.push(value.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(value.slice(start));
  return parts.map((part) => part.trim()).filter(Boolean);
}

function qValue(params: SipParams): number {
  const q = paramValue(params, 'q');
  const value = q === undefined || q === null ? 1 : Number(q);
  return Number.isFinite(value) ? value : 0;
}

function normalised(uri: string): string {
  return uri.trim().toLowerCase();
}
