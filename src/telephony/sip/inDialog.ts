import type { Logger } from '../../logger.js';
import { allowedMethods, contactHeader, type Dialog, type LocalEndpoint } from './dialog.js';
import { headerValue, type ParsedSipRequest, type ParsedSipResponse } from './message.js';
import type { AnyServerTransaction, InviteServerTransaction } from './serverTransactions.js';
import type { SipClock } from './timers.js';
import { buildResponse, type TransactionLayer } from './transactionLayer.js';

/** A call (outgoing or incoming) that owns a dialog. */
export interface DialogOwner {
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

export interface InDialogSession {
  readonly dialog: Dialog;
  /** The SDP we last sent (offer or answer). */
  readonly localSdp: string;
  /** The SDP the peer last sent. */
  readonly remoteSdp: string;
  onBye(): void;
  /** A NOTIFY of a transfer we asked for (Event: refer); absent: no transfer runs (481). */
  onReferNotify?: ((request: ParsedSipRequest) => void) | undefined;
  /** A REFER from the peer: the status to answer (202 accepts it); absent: 501. */
  onRefer?: ((request: ParsedSipRequest) => number) | undefined;
}

/**
 * Answers a request inside an established dialog. BYE ends the call; OPTIONS gets 200; a
 * re-INVITE that leaves the media as it is (a session refresh) or carries no offer gets 200 with
 * our current SDP, one that changes the media 488; anything else 501. Returns the INVITE
 * transaction of an accepted re-INVITE, which waits for its ACK.
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
  switch (request.method) {
    case 'BYE':
      respond(200);
      session.onBye();
      return null;
    case 'OPTIONS':
      respond(200, { headers: [{ name: 'Allow', value: allowedMethods }] });
      return null;
    case 'INVITE': {
      const offer = request.body;
      if (offer !== '' && mediaSignature(offer) !== mediaSignature(session.remoteSdp)) {
        respond(488);
        return null;
      }
      respond(200, {
        headers: [
          contactHeader(services.local, transaction.source.transport),
          { name: 'Content-Type', value: 'application/sdp' },
        ],
        body: session.localSdp,
      });
      return transaction.request.method === 'INVITE' && 'acknowledge2xx' in transaction ? transaction : null;
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
