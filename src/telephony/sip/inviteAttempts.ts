import type { InviteOptions } from './callTypes.js';
import { buildDigestAuthorization, digestStrength, selectDigestChallenge } from './digest.js';
import { type InviteRetarget, InviteRetargeting } from './inviteRetargeting.js';
import { headerValues, type ParsedSipResponse, type SipHeader } from './message.js';
import { defaultSessionExpiresS, longerSessionAsked } from './sessionTimer.js';
import type { NetworkTarget } from './transport.js';

/**
 * What changes from one INVITE of a call to the next (each a new transaction, CSeq + 1, same
 * Call-ID and tag): the digest answers to challenges, the session interval after a 422, and the
 * server and Request-URI after a 503 or a redirect. The call asks; this says whether to retry.
 */
export class InviteAttempts {
  /** The CSeq number of the INVITE now (and of its ACK and CANCEL). */
  seq = 1;
  sessionExpiresS: number;
  private readonly authHeaders = new Map<string, SipHeader>();
  private authAttempts = 0;
  /** The strongest digest algorithm this server has challenged with: no re-challenge may go below it. */
  private challengeStrength = 0;
  private readonly retargeting: InviteRetargeting;

  constructor(
    private readonly options: InviteOptions,
    first: NetworkTarget,
  ) {
    this.sessionExpiresS = options.sessionExpiresS ?? defaultSessionExpiresS;
    this.retargeting = new InviteRetargeting({
      requestUri: options.requestUri,
      targets: [first, ...(options.outboundProxy ? [] : (options.alternateDestinations ?? []))],
      proxied: options.outboundProxy !== undefined,
      ...(options.allowsRemoteAddress ? { allowsRemoteAddress: options.allowsRemoteAddress } : {}),
    });
  }

  get target(): NetworkTarget {
    return this.retargeting.current.target;
  }

  get requestUri(): string {
    return this.retargeting.current.requestUri;
  }

  /** The Authorization / Proxy-Authorization headers the next request carries. */
  get authorization(): SipHeader[] {
    return [...this.authHeaders.values()];
  }

  /** Whether the credentials were already sent once (a second challenge means they failed). */
  get answeredAChallenge(): boolean {
    return this.authAttempts > 0;
  }

  get hasNextServer(): boolean {
    return this.retargeting.hasNextServer;
  }

  /** 401/407: answers the digest challenge; false when there are no credentials or they failed. */
  answerChallenge(response: ParsedSipResponse): boolean {
    const credentials = this.options.credentials;
    if (credentials === undefined) return false;
    const proxy = response.status === 407;
    const challenge = selectDigestChallenge(
      headerValues(response, proxy ? 'Proxy-Authenticate' : 'WWW-Authenticate'),
      this.challengeStrength,
    );
    if (challenge === null) return false;
    this.challengeStrength = Math.max(this.challengeStrength, digestStrength(challenge.algorithm));
    const headerName = proxy ? 'Proxy-Authorization' : 'Authorization';
    const key = `${headerName}|${challenge.realm}`;
    if (this.authAttempts >= 3 || (this.authHeaders.has(key) && !challenge.stale)) return false;
    this.authAttempts++;
    const value = buildDigestAuthorization(challenge, credentials, {
      method: 'INVITE',
      uri: this.requestUri,
    });
    this.authHeaders.set(key, { name: headerName, value });
    this.seq++;
    return true;
  }

  /** 422 (RFC 4028 §6): ask again once with the interval the far end's Min-SE names. */
  lengthenSession(response: ParsedSipResponse): boolean {
    const minimumS = longerSessionAsked(response, this.sessionExpiresS);
    if (minimumS === null) return false;
    this.sessionExpiresS = minimumS;
    this.seq++;
    return true;
  }

  /**
   * After a 3xx (its Contacts), or a 503, a 408 or no answer at all (`null`: the next server):
   * where to try next, or null when there is nowhere else. A new server starts without the old
   * one's digest answers.
   */
  retarget(response: ParsedSipResponse | null): InviteRetarget | null {
    const status = response?.status ?? null;
    const previous = this.retargeting.current.target;
    let next: InviteRetarget | null = null;
    if (response !== null && response.status >= 300 && response.status < 400)
      next = this.retargeting.redirect(response);
    else if (status === null || status === 503 || status === 408) next = this.retargeting.nextServer();
    if (next === null) return null;
    this.seq++;
    if (next.target.host !== previous.host || next.target.port !== previous.port) {
      this.authHeaders.clear();
      this.authAttempts = 0;
      this.challengeStrength = 0;
    }
    return next;
  }
}
