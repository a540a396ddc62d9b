import type { DigestCredentials } from './digest.js';
import type { SipHeader } from './message.js';
import type { NetworkTarget } from './transport.js';

/** The types of the outbound call API (what the dispatcher programs against). */

export interface SipAddressInput {
  /** A `sip:` or `sips:` URI. */
  readonly uri: string;
  readonly displayName?: string;
}

export interface InviteOptions {
  /** Where the call goes, e.g. `sip:+15550100001@trunk.example.com`. */
  readonly requestUri: string;
  readonly from: SipAddressInput;
  readonly to: SipAddressInput;
  readonly sdpOffer: string;
  /** Answers 401/407 digest challenges on the INVITE and the BYE. */
  readonly credentials?: DigestCredentials;
  /** Sends every request of the call to this address instead of the Request-URI's host. */
  readonly outboundProxy?: NetworkTarget;
  /**
   * Where the INVITE and CANCEL go, already resolved and vetted (a trunk's pinned address) while
   * the Request-URI keeps its host name; default: the Request-URI's host and port. In-dialog
   * requests fall back to it when the far end's next hop is refused.
   */
  readonly destination?: NetworkTarget;
  /**
   * Further servers of the same trunk (DNS SRV targets after `destination`), tried in order when
   * one answers 503 or 408, cannot be reached, or says nothing for `failoverAfterMs`.
   */
  readonly alternateDestinations?: readonly NetworkTarget[];
  /**
   * The address to advertise in Via and Contact for this call instead of the user agent's (a trunk
   * reached through its own NAT); an IP address.
   */
  readonly advertisedHost?: string;
  /** How long a server may stay silent before the next is tried (when there is one). Default 4 s. */
  readonly failoverAfterMs?: number;
  /**
   * Whether an address the far end chose (the next hop its 2xx names through Contact or
   * Record-Route) may be sent to. Host names from messages are never resolved: a next hop that is
   * not an IP literal, or that this refuses, is replaced by `destination`. Default: any IP literal.
   */
  readonly allowsRemoteAddress?: (address: string) => boolean;
  /**
   * The session interval asked for (RFC 4028, `Supported: timer`); the far end's 2xx decides who
   * refreshes. Default 1,800 s; 0 asks for none.
   */
  readonly sessionExpiresS?: number;
  /** CANCEL when no final response came this long after the INVITE was sent. Default 30 s. */
  readonly ringTimeoutMs?: number;
  /** Extra INVITE headers (not Via, From, To, Call-ID, CSeq, Contact, Route, Content-*, auth). */
  readonly extraHeaders?: readonly SipHeader[];
  /**
   * The Call-ID to use (a word of 16 to 128 token characters), so a caller can record it before
   * the INVITE leaves; a random one by default.
   */
  readonly callId?: string;
}

/** How long an INVITE waits for any response before the trunk's next server is tried. */
export const defaultFailoverAfterMs = 4_000;

export type CallFailureCause =
  /** A final 3xx–6xx from the far end; `status` says which (408 included). */
  | 'rejected'
  /** Our ring timeout fired and the call was cancelled; `status` is usually 487. */
  | 'ring_timeout'
  /** `cancel()` or `hangUp()` before the answer. */
  | 'canceled'
  /** Nothing answered the INVITE at all (timer B): no response was received. */
  | 'transport_timeout'
  /** The datagram could not be sent. */
  | 'transport_error'
  /** Our credentials were challenged again. */
  | 'auth_failed'
  /** A 2xx without an SDP answer; the call was hung up at once. */
  | 'bad_answer';

export interface CallFailure {
  readonly cause: CallFailureCause;
  /** The final status received, or null when none was. */
  readonly status: number | null;
  readonly reason: string;
  /** True only when no response at all came back (timer B). */
  readonly timedOut: boolean;
}

export interface ProvisionalInfo {
  readonly status: number;
  readonly reason: string;
  /** Early media SDP (183), or null. */
  readonly sdp: string | null;
}

export interface AnsweredInfo {
  readonly status: number;
  readonly sdpAnswer: string;
}

export interface CallEnded {
  readonly by: 'remote' | 'local';
  readonly reason: string;
}

export type CallOutcome =
  | { readonly kind: 'failed'; readonly failure: CallFailure }
  | { readonly kind: 'ended'; readonly answered: AnsweredInfo; readonly ended: CallEnded };

export interface OutgoingCallEvents {
  provisional: ProvisionalInfo;
  answered: AnsweredInfo;
  failed: CallFailure;
  ended: CallEnded;
}

export type OutgoingCallState = 'calling' | 'ringing' | 'answered' | 'ending' | 'ended' | 'failed';

/** Headers the stack writes itself; extraHeaders may not set them. */
export const protectedHeaderNames: ReadonlySet<string> = new Set([
  'via',
  'from',
  'to',
  'call-id',
  'cseq',
  'contact',
  'route',
  'record-route',
  'max-forwards',
  'content-length',
  'content-type',
  'authorization',
  'proxy-authorization',
]);

export const defaultRingTimeoutMs = 30_000;
