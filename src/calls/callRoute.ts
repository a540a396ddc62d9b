import { isIP } from 'node:net';
import {
  parsedTrunkUri,
  trunkAddress,
  trunkHostGuard,
  trunkNaming,
  trunkNextHopUri,
  trunkSrtpOf,
} from '../admin/trunks.js';
import { AppError } from '../domain/errors.js';
import type { CallRecord, TrunkRecord } from '../domain/records.js';
import type { SrtpPolicy } from '../domain/trunkSettings.js';
import { type HostnameLookup, isAllowedAddress, resolveVettedHost } from '../net/hostGuard.js';
import type { SecretBox } from '../secrets/secretBox.js';
import type { Store } from '../store/types.js';
import { sandboxCallIdHeader, sandboxVariablesHeader } from '../telephony/sandbox/index.js';
import { type InviteOptions, type NetworkTarget, parseSipUri } from '../telephony/sip/index.js';
import { type TrunkDns, trunkServers } from './trunkServers.js';

/** Where sandbox calls go: the in-process sandbox carrier's SIP address. */
export interface SandboxAddress {
  host: string;
  port: number;
}

export interface CallRouteOptions {
  sandbox: SandboxAddress | null;
  secretBox: SecretBox;
  ringTimeoutMs: number;
  /** CALLWRIGHT_TRUNK_ALLOW_PRIVATE: trunks may reach private, loopback and other internal addresses. */
  trunkAllowPrivate: boolean;
  /** The address SIP and RTP are bound to (CALLWRIGHT_SIP_BIND): a trunk of the other IP family is refused. */
  sipBindAddress?: string;
  /** The resolver of trunk names (the system's by default; injectable for tests). */
  lookup?: HostnameLookup;
  /** The NAPTR and SRV resolver of trunk domains (the system's by default). */
  dns?: TrunkDns;
  /**
   * An agent-test call (and any transfer it makes): it goes to the sandbox carrier whatever its
   * caller ID is routed to now, and never through a trunk (issue 34). Its route was fixed when it
   * was queued: a test run only takes a sandbox caller ID.
   */
  sandboxOnly?: boolean;
}

export interface CallRoute {
  inviteOptions: Omit<InviteOptions, 'sdpOffer'>;
  /** The trunk the call leaves through; null for the sandbox. */
  trunkId: string | null;
  /** Whose RTP is taken (RtpSession latching): the SDP's address, or anyone's first (symmetric RTP). */
  latching: 'sdp-address' | 'any';
  /** Whether the call's media is SRTP: the trunk's policy (the in-process sandbox: off). */
  srtp: SrtpPolicy;
  /** The address the call's SDP advertises, when the trunk has its own (else the service's). */
  mediaPublicAddress: string | null;
}

/**
 * Turns a call into the INVITE that places it: through the SIP trunk its caller ID is bound to,
 * or to the sandbox carrier. A trunk's host is resolved here, once per call, and vetted like a
 * webhook's (no internal address unless the operator allows it); the INVITE goes to that pinned
 * address and the far end may steer in-dialog requests only to addresses the same rule allows.
 * Trunk passwords are decrypted here and nowhere else.
 */
export async function inviteForCall(
  store: Store,
  call: CallRecord,
  options: CallRouteOptions,
): Promise<CallRoute> {
  const number = options.sandboxOnly ? null : await store.numbers.get(call.accountId, call.fromNumber);
  if (!number && !options.sandboxOnly)
    throw new AppError('validation_error', 'the caller ID was removed from the account before dialling');
  if (options.sandboxOnly || number?.route === 'sandbox') {
    const sandbox = options.sandbox;
    if (!sandbox) throw new AppError('unavailable', 'the sandbox carrier is not running');
    const hostPort = `${sandbox.host}:${sandbox.port}`;
    const invite: Omit<InviteOptions, 'sdpOffer'> = {
      requestUri: `sip:${call.toNumber}@${hostPort}`,
      from: { uri: `sip:${call.fromNumber}@${hostPort}` },
      to: { uri: `sip:${call.toNumber}@${hostPort}` },
      ringTimeoutMs: options.ringTimeoutMs,
      destination: { host: sandbox.host, port: sandbox.port },
      // The sandbox is in this process on loopback: nothing it says may point elsewhere.
      allowsRemoteAddress: (address) => address === sandbox.host,
      // The sandbox's personas may react to the call's variables; a real trunk never sees them.
      extraHeaders: [
        {
          name: sandboxVariablesHeader,
          value: Buffer.from(JSON.stringify(call.variables ?? {})).toString('base64url'),
        },
        // A test call's scenario plays its callee (src/agentTests/calleeScripts.ts).
        { name: sandboxCallIdHeader, value: call.id },
      ],
    };
    return {
      inviteOptions: invite,
      trunkId: null,
      latching: 'sdp-address',
      srtp: 'off',
      mediaPublicAddress: null,
    };
  }
  const route = number?.route ?? 'sandbox';
  const trunk = await store.trunks.get(call.accountId, route);
  if (!trunk) throw new AppError('validation_error', `the trunk ${route} of the caller ID no longer exists`);
  // The first hop is the outbound proxy when the trunk has one; it is resolved and vetted alike.
  const naming = trunkNaming(trunk);
  const servers = naming
    ? await trunkServerTargets(trunk, options, (address) =>
        checkAddressFamily(trunk.name, address, options.sipBindAddress),
      )
    : null;
  if (!naming || !servers)
    throw new AppError('validation_error', `the trunk ${trunk.name} has a URI that cannot be honoured`);
  if (servers.length === 0)
    throw new AppError(
      'unavailable',
      `the trunk ${trunk.name}'s domain says it offers no SIP service (SRV ".")`,
    );
  const { scheme, hostPart, domain: fromDomain } = naming;
  const allowPrivate = options.trunkAllowPrivate;
  const [firstHop, ...otherHops] = servers;
  const invite: Omit<InviteOptions, 'sdpOffer'> = {
    requestUri: `${scheme}:${call.toNumber}@${hostPart}`,
    from: { uri: `${scheme}:${call.fromNumber}@${fromDomain}` },
    to: { uri: `${scheme}:${call.toNumber}@${fromDomain}` },
    ringTimeoutMs: options.ringTimeoutMs,
    destination: firstHop!,
    ...(otherHops.length > 0 ? { alternateDestinations: otherHops } : {}),
    ...(trunk.settings.publicAddress ? { advertisedHost: trunk.settings.publicAddress } : {}),
    ...(trunk.settings.outboundProxy ? { outboundProxy: firstHop! } : {}),
    allowsRemoteAddress: (remote) => isAllowedAddress(remote, allowPrivate),
    ...identityHeaders(trunk, `${scheme}:${call.fromNumber}@${fromDomain}`),
    ...(trunk.username && trunk.passwordCiphertext
      ? {
          credentials: {
            username: trunk.username,
            password: options.secretBox.open(trunk.passwordCiphertext),
          },
        }
      : {}),
  };
  return {
    inviteOptions: invite,
    trunkId: trunk.id,
    latching: trunk.settings.symmetricRtp ? 'any' : 'sdp-address',
    srtp: trunkSrtpOf(trunk),
    mediaPublicAddress: trunk.settings.publicAddress ?? null,
  };
}

/**
 * A trunk reachable only over IPv6 from a process bound to IPv4 (or the reverse, from a specific
 * IPv6 address) would fail at the first send with a socket error; say what to change instead.
 */
function checkAddressFamily(trunkName: string, address: string, bindAddress: string | undefined): void {
  if (bindAddress === undefined) return;
  const bindFamily = isIP(bindAddress);
  const family = isIP(address);
  const dualStack = bindAddress === '::';
  if (family === 6 && bindFamily === 4) {
    throw new AppError(
      'validation_error',
      `the trunk ${trunkName} is at an IPv6 address (${address}) but SIP is bound to IPv4 (CALLWRIGHT_SIP_BIND=${bindAddress}): bind to :: or give the trunk an IPv4 address`,
    );
  }
  if (family === 4 && bindFamily === 6 && !dualStack) {
    throw new AppError(
      'validation_error',
      `the trunk ${trunkName} is at an IPv4 address (${address}) but SIP is bound to IPv6 ${bindAddress}: bind to :: or 0.0.0.0`,
    );
  }
}

/** P-Asserted-Identity and Privacy as the trunk asks (RFC 3325, RFC 3323). */
function identityHeaders(trunk: TrunkRecord, callerUri: string): Pick<InviteOptions, 'extraHeaders'> {
  const headers = [
    ...(trunk.settings.assertedIdentity ? [{ name: 'P-Asserted-Identity', value: `<${callerUri}>` }] : []),
    ...(trunk.settings.privacy ? [{ name: 'Privacy', value: 'id' }] : []),
  ];
  return headers.length === 0 ? {} : { extraHeaders: headers };
}

/**
 * The servers a trunk's requests go to, in the order to try them: its outbound proxy's or its
 * own, through NAPTR/SRV (trunkServers), each resolved and vetted like the trunk's name and then
 * passed to `check`; null when the stored URI cannot be honoured, [] when its domain says it
 * offers no SIP service.
 */
export async function trunkServerTargets(
  trunk: TrunkRecord,
  options: Pick<CallRouteOptions, 'trunkAllowPrivate' | 'lookup' | 'dns'>,
  check: (address: string) => void = () => {},
): Promise<NetworkTarget[] | null> {
  const nextHop = parsedTrunkUri(trunkNextHopUri(trunk));
  if (!nextHop) return null;
  const servers = await trunkServers(nextHop, {
    vet: async (host) => {
      const vetted = await resolveVettedHost(host, {
        ...trunkHostGuard(options.trunkAllowPrivate),
        ...(options.lookup ? { lookup: options.lookup } : {}),
      });
      check(vetted.address);
      return vetted.address;
    },
    ...(options.dns ? { dns: options.dns } : {}),
  });
  return servers.map((server) => trunkTarget(trunk, server.address, server.port));
}

/**
 * Where a trunk's requests go (its outbound proxy when it has one): the vetted address, over that
 * hop's transport; over TLS the certificate must name the host that hop was configured with (not
 * the address it resolved to) and chain to a public CA or the trunk's own, unless the trunk turned
 * verification off.
 */
export function trunkTarget(trunk: TrunkRecord, vettedAddress: string, port?: number): NetworkTarget {
  const address = trunkAddress(trunkNextHopUri(trunk));
  if (!address)
    throw new AppError('validation_error', `the trunk ${trunk.name} has a URI that cannot be honoured`);
  const target = { host: vettedAddress, port: port ?? address.port, transport: address.transport };
  if (address.transport !== 'tls') return target;
  const { tlsCaPem, tlsVerify } = trunk.settings;
  const serverName = address.host.replace(/^\[|\]$/g, '');
  return {
    ...target,
    tls: {
      serverName,
      ...(tlsCaPem ? { caPem: tlsCaPem } : {}),
      ...(tlsVerify === false ? { verify: false } : {}),
    },
  };
}

/**
 * The Refer-To URI of a transfer target: a SIP URI as configured, or an E.164 number at the host
 * the call itself went to (the trunk or the sandbox), so the carrier that holds the callee dials it.
 */
export function referToUri(destination: string, callRequestUri: string): string {
  if (/^sips?:/.test(destination)) return destination;
  const uri = parseSipUri(callRequestUri);
  const host = uri ? `${uri.host}${uri.port ? `:${uri.port}` : ''}` : 'invalid';
  return `${uri?.scheme ?? 'sip'}:${destination}@${host}`;
}
