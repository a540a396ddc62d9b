import { AppError } from '../domain/errors.js';
import type { CallRecord } from '../domain/records.js';
import type { SecretBox } from '../secrets/secretBox.js';
import type { Store } from '../store/types.js';
import { sandboxVariablesHeader } from '../telephony/sandbox/index.js';
import type { InviteOptions } from '../telephony/sip/index.js';

/** Where sandbox calls go: the in-process sandbox carrier's SIP address. */
export interface SandboxAddress {
  host: string;
  port: number;
}

/**
 * Turns a call into the INVITE that places it: through the SIP trunk its caller ID is bound to,
 * or to the sandbox carrier. Trunk passwords are decrypted here and nowhere else.
 */
export async function inviteForCall(
  store: Store,
  call: CallRecord,
  options: { sandbox: SandboxAddress | null; secretBox: SecretBox; ringTimeoutMs: number },
): Promise<Omit<InviteOptions, 'sdpOffer'>> {
  const number = await store.numbers.get(call.accountId, call.fromNumber);
  if (!number)
    throw new AppError('validation_error', 'the caller ID was removed from the account before dialling');
  if (number.route === 'sandbox') {
    if (!options.sandbox) throw new AppError('unavailable', 'the sandbox carrier is not running');
    const hostPort = `${options.sandbox.host}:${options.sandbox.port}`;
    return {
      requestUri: `sip:${call.toNumber}@${hostPort}`,
      from: { uri: `sip:${call.fromNumber}@${hostPort}` },
      to: { uri: `sip:${call.toNumber}@${hostPort}` },
      ringTimeoutMs: options.ringTimeoutMs,
      // The sandbox's personas may react to the call's variables; a real trunk never sees them.
      extraHeaders: [
        {
          name: sandboxVariablesHeader,
          value: Buffer.from(JSON.stringify(call.variables ?? {})).toString('base64url'),
        },
      ],
    };
  }
  const trunk = await store.trunks.get(call.accountId, number.route);
  if (!trunk)
    throw new AppError('validation_error', `the trunk ${number.route} of the caller ID no longer exists`);
  const trunkHost = trunk.uri.replace(/^sips?:/, '');
  const fromDomain = trunk.fromDomain ?? trunkHost.split(';')[0]?.replace(/:\d+$/, '') ?? trunkHost;
  return {
    requestUri: `sip:${call.toNumber}@${trunkHost}`,
    from: { uri: `sip:${call.fromNumber}@${fromDomain}` },
    to: { uri: `sip:${call.toNumber}@${fromDomain}` },
    ringTimeoutMs: options.ringTimeoutMs,
    ...(trunk.username && trunk.passwordCiphertext
      ? {
          credentials: {
            username: trunk.username,
            password: options.secretBox.open(trunk.passwordCiphertext),
          },
        }
      : {}),
  };
}
