import { trunkAddress, trunkNextHopUri } from '../admin/trunks.js';
import type { CallRecord, SipDialogRecord } from '../domain/records.js';
import type { Logger } from '../logger.js';
import { isAllowedAddress } from '../net/hostGuard.js';
import type { SecretBox } from '../secrets/secretBox.js';
import type { Store } from '../store/types.js';
import type {
  DialogInit,
  NetworkTarget,
  SipUserAgent,
  StoredDialogByeResult,
} from '../telephony/sip/index.js';
import { type CallRoute, trunkTarget } from './callRoute.js';

/**
 * The SIP dialog of an answered trunk call as the store keeps it, so that if this process dies
 * with the call up, the one that recovers the call can still send its BYE. Sandbox calls have
 * none: the sandbox carrier dies with the process that holds them.
 */
export function sipDialogRecordOf(state: DialogInit, route: CallRoute): SipDialogRecord | null {
  const destination = route.inviteOptions.destination;
  if (route.trunkId === null || destination === undefined) return null;
  return {
    callId: state.callId,
    localTag: state.localTag,
    remoteTag: state.remoteTag,
    localAddress: state.localAddress,
    remoteAddress: state.remoteAddress,
    remoteTarget: state.remoteTarget,
    routeSet: [...state.routeSet],
    localSeq: state.localSeq,
    destination: {
      host: destination.host,
      port: destination.port,
      ...(destination.transport ? { transport: destination.transport } : {}),
    },
    trunkId: route.trunkId,
  };
}

export interface OrphanedDialogContext {
  store: Store;
  ua: SipUserAgent;
  secretBox: SecretBox;
  logger: Logger;
  /** CALLWRIGHT_TRUNK_ALLOW_PRIVATE, as for dialling. */
  trunkAllowPrivate: boolean;
}

/**
 * Sends BYE for the stored dialog of a call whose worker died, so the carrier's leg does not stay
 * up until its own timers fire. Call it only after winning the call's `finish` (at most once per
 * call). The BYE carries the trunk's credentials if it is challenged, and goes where the call's
 * requests went, re-vetted under today's setting. Resolves null when there was nothing to end.
 */
export async function hangUpOrphanedDialog(
  context: OrphanedDialogContext,
  call: CallRecord,
): Promise<StoredDialogByeResult | null> {
  const dialog = await context.store.calls.getSipDialog(call.id);
  if (!dialog) return null;
  const log = context.logger.child({ callId: call.id });
  const allowPrivate = context.trunkAllowPrivate;
  if (!isAllowedAddress(dialog.destination.host, allowPrivate)) {
    log.warn(
      { destination: dialog.destination.host },
      'stored SIP dialog points at a refused address: no BYE',
    );
    return null;
  }
  const trunk = await context.store.trunks.get(call.accountId, dialog.trunkId);
  const credentials =
    trunk?.username && trunk.passwordCiphertext
      ? { username: trunk.username, password: context.secretBox.open(trunk.passwordCiphertext) }
      : undefined;
  // Over TLS the certificate is checked as at the dial, against the trunk's settings; with the
  // trunk gone there is nothing to check it against, and no BYE.
  const trunkStillTls = trunk !== null && trunkAddress(trunkNextHopUri(trunk))?.transport === 'tls';
  let destination: NetworkTarget | null = dialog.destination;
  if (dialog.destination.transport === 'tls')
    destination =
      trunk && trunkStillTls ? trunkTarget(trunk, dialog.destination.host, dialog.destination.port) : null;
  if (destination === null) {
    log.warn('stored SIP dialog over TLS without its trunk: no BYE');
    return null;
  }
  const result = await context.ua.byeStoredDialog({
    dialog: { ...dialog, remoteSeq: null },
    destination,
    ...(credentials ? { credentials } : {}),
    allowsRemoteAddress: (address) => isAllowedAddress(address, allowPrivate),
  });
  log.info(
    { result: result.kind, status: result.kind === 'answered' ? result.status : null },
    'BYE sent for the call of a dead worker',
  );
  return result;
}
