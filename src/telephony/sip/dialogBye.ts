import { allowedNextHop, Dialog, type DialogInit, overCallTransport } from './dialog.js';
import { answerDigestChallenge, type DigestCredentials } from './digest.js';
import type { CallServices } from './inDialog.js';
import type { SipHeader } from './message.js';
import type { NetworkTarget } from './transport.js';

export interface StoredDialogByeOptions {
  /** The dialog as another process stored it when the call was answered. */
  readonly dialog: DialogInit;
  /** Where the call's requests went (the trunk's vetted address); used when the far end's next hop is refused. */
  readonly destination: NetworkTarget;
  /** Answers one 401/407 digest challenge to the BYE. */
  readonly credentials?: DigestCredentials;
  /** Whether the dialog's next hop (Contact, Record-Route) may be sent to; as in InviteOptions. */
  readonly allowsRemoteAddress?: (address: string) => boolean;
}

export type StoredDialogByeResult =
  | { readonly kind: 'answered'; readonly status: number }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'transport_error'; readonly reason: string };

/**
 * Ends a dialog this user agent did not hold (its process died): a BYE with the next CSeq, sent
 * where the dialog's requests went, retried once with credentials when challenged. Resolves when
 * a final response came, or after the non-INVITE transaction timeout (64 × T1).
 */
export function sendByeForStoredDialog(
  services: CallServices,
  options: StoredDialogByeOptions,
): Promise<StoredDialogByeResult> {
  const dialog = new Dialog(options.dialog);
  const nextHop = allowedNextHop(dialog, options.allowsRemoteAddress);
  const target = nextHop === null ? options.destination : overCallTransport(nextHop, options.destination);
  const send = (authorization: SipHeader | null): Promise<StoredDialogByeResult> =>
    new Promise((resolve) => {
      const bye = dialog.createRequest('BYE', services.local, {
        headers: authorization === null ? [] : [authorization],
      });
      services.layer.sendRequest(bye, target, {
        onResponse: (response) => {
          if (response.status < 200) return;
          const retry =
            authorization === null && options.credentials !== undefined
              ? answerDigestChallenge(response, options.credentials, {
                  method: 'BYE',
                  uri: dialog.remoteTarget,
                })
              : null;
          if (retry !== null) {
            void send(retry).then(resolve);
            return;
          }
          resolve({ kind: 'answered', status: response.status });
        },
        onTimeout: () => resolve({ kind: 'timeout' }),
        onTransportError: (error) => resolve({ kind: 'transport_error', reason: error.message }),
      });
    });
  services.logger.debug({ callId: dialog.callId }, 'SIP BYE for a stored dialog');
  return send(null);
}
