import type { Logger } from '../../logger.js';
import { allowedMethods, contactHeader, type Dialog, type LocalEndpoint } from './dialog.js';
import {
  headerValue,
  headerValues,
  type ParsedSipRequest,
  type ParsedSipResponse,
  type SipHeader,
} from './message.js';
import type { AnyServerTransaction, InviteServerTransaction } from './serverTransactions.js';
import { listsToken, type SessionExpires, sessionExpiresOf } from './sessionTimer.js';
import type { SipClock } from './timers.js';
import { buildResponse, type TransactionLayer } from './transactionLayer.js';
import type { NetworkTarget, SipTransportName } from './transport.js';

/** A call (outgoing or incoming) that owns a dialog. */
export interface DialogOwner {
  /**
   * Whether a request naming this dialog came from the peer it is bound to (its transport and
   * address); the user agent refuses any other with 403 and drops such an ACK.
   */
  acceptsSource(source: NetworkTarget): boolean;
  handleInDialogRequest(request: ParsedSipRequest, transaction: AnyServerTransaction): void;
  /** The ACK of a 2xx we sent in this dialog. */
  handleAck(request: ParsedSipRequest): void;
  /** A 2xx retransmission that outlived its transaction. */
  handleStrayResponse(response: ParsedSipResponse): void;
}

/** What the user agent lends each call. */
export interface CallServices {
  readonly logger: Logger;
  readonly clock: SipClock;
  readonly layer: TransactionLayer;
  readonly local: LocalEndpoint;
  registerDialog(dialog: Dialog, owner: DialogOwner): void;
  unregisterDialog(dialog: Dialog): void;
}

/** The connection and media lines of an SDP body, the part a re-INVITE could change. */
function mediaSignature(sdp: string): string {
  return sdp
    .split(/\r?\n/)
    .filter((line) => line.startsWith('c=') || line.startsWith('m=') || line.startsWith('a=rtpmap'))
    .map((line) => line.trim())
    .join('\n');
}

/** What answering a new offer from the far end gives: our SDP answer, or a refusal. */
export type OfferAnswer = { readonly sdp: string } | { readonly status: 488; readonly reason: string };

export interface InDialogSession {
  readonly dialog: Dialog;
  /** The SDP we last sent (offer or answer). */
  readonly localSdp: string;
  /** The SDP the peer last sent. */
  readonly remoteSdp: string;
  onBye(): void;
  /**
   * Answers an offer in a re-INVITE or UPDATE and applies it to the media (hold, a new address,
   * another codec); absent: only an offer that leaves the media as it is is accepted.
   */
  answerOffer?: ((offerSdp: string) => OfferAnswer) | undefined;
  /** A refresh by the far end named this session interval and refresher (RFC 4028). */
  onSessionRefresh?: ((expires: SessionExpires) => void) | undefined;
  /** A NOTIFY of a transfer we asked for (Event: refer); absent: no transfer runs (481). */
  onReferNotify?: ((request: ParsedSipRequest) => void) | undefined;
  /** A REFER from the peer: the status to answer (202 accepts it); absent: 501. */
  onRefer?: ((request: ParsedSipRequest) => number) | undefined;
}

/** The option tags we support in a Require header (RFC 3261 §8.2.2.3). */
const supportedExtensions = new Set(['timer']);

/**
 * Answers a re-INVITE or UPDATE: an offer gets a real answer through `answerOffer` (or, without
 * one, our SDP when the media is unchanged, 488 otherwise); a request without SDP gets our SDP
 * in a 2xx to INVITE (an offer, answered in the ACK) and nothing in a 2xx to UPDATE. A session
 * timer in the request is echoed with `Require: timer` and reported.
 */
function answerSessionRequest(
  request: ParsedSipRequest,
  session: InDialogSession,
  transport: SipTransportName | undefined,
  services: CallServices,
): { status: number; options: Parameters<typeof buildResponse>[2] } {
  const offer = request.body;
  let sdp = request.method === 'INVITE' ? session.localSdp : '';
  if (offer !== '') {
    if (session.answerOffer) {
      const answer = session.answerOffer(offer);
      if ('status' in answer) return { status: 488, options: { reason: answer.reason.slice(0, 80) } };
      sdp = answer.sdp;
    } else if (mediaSignature(offer) !== mediaSignature(session.remoteSdp)) {
      return { status: 488, options: {} };
    }
  }
  const headers: SipHeader[] = [contactHeader(services.local, transport)];
  const expires = sessionExpiresOf(request);
  if (expires !== null) {
    // The refresher is whoever the request names, else the side that sent it (the dialog's UAC here).
    const refresher = expires.refresher ?? 'uac';
    headers.push({ name: 'Session-Expires', value: `${expires.intervalS};refresher=${refresher}` });
    if (listsToken(request, 'Supported', 'timer')) headers.push({ name: 'Require', value: 'timer' });
    session.onSessionRefresh?.({ intervalS: expires.intervalS, refresher });
  }
  if (sdp !== '') headers.push({ name: 'Content-Type', value: 'application/sdp' });
  return { status: 200, options: { headers, body: sdp } };
}

/**
 * Answers a request inside an established dialog. BYE ends the call; OPTIONS gets 200; a
 * re-INVITE or UPDATE is answered from its offer (see answerSessionRequest), after a Require
 * naming an extension we lack gets 420; anything else 501. Returns the INVITE transaction of an
 * accepted re-INVITE, which waits for its ACK.
 */
export function answerInDialogRequest(
  request: ParsedSipRequest,
  transaction: AnyServerTransaction,
  session: InDialogSession,
  services: CallServices,
): InviteServerTransaction | null {
  const respond = (status: number, options: Parameters<typeof buildResponse>[2] = {}) => {
    transaction.respond(buildResponse(request, status, options));
  };
  if (!session.dialog.acceptRemoteSeq(request.cseq.seq)) {
    respond(500, { reason: 'CSeq Out Of Order' });
    return null;
  }
  const unsupported = headerValues(request, 'Require')
    .flatMap((value) => value.split(','))
    .map((option) => option.trim())
    .filter((option) => option !== '' && !supportedExtensions.has(option.toLowerCase()));
  if (unsupported.length > 0 && request.method !== 'BYE' && request.method !== 'ACK') {
    respond(420, { headers: [{ name: 'Unsupported', value: unsupported.join(', ') }] });
    return null;
  }
  switch (request.method) {
    case 'BYE':
      respond(200);
      session.onBye();
      return null;
    case 'OPTIONS':
      respond(200, { headers: [{ name: 'Allow', value: allowedMethods }] });
      return null;
    case 'INVITE':
    case 'UPDATE': {
      const { status, options } = answerSessionRequest(
        request,
        session,
        transaction.source.transport,
        services,
      );
      respond(status, options);
      if (status >= 300 || request.method !== 'INVITE') return null;
      return 'acknowledge2xx' in transaction ? transaction : null;
    }
    case 'NOTIFY': {
      if (!/^refer\b/i.test(headerValue(request, 'Event') ?? '')) {
        respond(489, { reason: 'Bad Event' });
        return null;
      }
      if (!session.onReferNotify) {
        respond(481);
        return null;
      }
      respond(200);
      session.onReferNotify(request);
      return null;
    }
    case 'REFER':
      if (session.onRefer && headerValue(request, 'Refer-To')) {
        const status = session.onRefer(request);
        respond(status, status === 405 ? { headers: [{ name: 'Allow', value: allowedMethods }] } : {});
        return null;
      }
      respond(501, { headers: [{ name: 'Allow', value: allowedMethods }] });
      return null;
    default:
      respond(501, { headers: [{ name: 'Allow', value: allowedMethods }] });
      return null;
  }
}
