import { AppError } from './errors.js';

/** How a trunk's SIP travels: a datagram, a clear stream, or a stream under TLS. */
export type TrunkTransport = 'udp' | 'tcp' | 'tls';

/** A trunk's media encryption: plain RTP only, SRTP when the far end takes it, or SRTP or no call. */
export type SrtpPolicy = 'off' | 'optional' | 'required';
export const srtpPolicies: readonly SrtpPolicy[] = ['off', 'optional', 'required'];

/**
 * A trunk's settings beyond its URI and credentials, stored as one JSON document so that later
 * settings need no schema change. Every field a trunk is saved with is honoured when it dials.
 */
export interface TrunkSettings {
  /** Extra CA certificates (PEM) a TLS trunk's certificate may chain to (a private PBX's CA). */
  tlsCaPem?: string;
  /** False accepts any certificate from a TLS trunk (an explicit choice); default true. */
  tlsVerify?: boolean;
  /**
   * Symmetric RTP for a far end behind NAT: send to wherever its first RTP packet came from, on
   * any address, instead of only the SDP's address (anyone who reaches the port first is heard).
   */
  symmetricRtp?: boolean;
  /** Send `P-Asserted-Identity` with the caller ID (RFC 3325), for carriers that bill or screen on it. */
  assertedIdentity?: boolean;
  /** Send `Privacy: id`: the carrier withholds the caller ID from the callee (RFC 3323). */
  privacy?: boolean;
  /**
   * Inbound calls (issue 40): the addresses (IPs or CIDR blocks) the carrier sends INVITEs from.
   * INVITEs arriving over the trunk's own registration are accepted too; anything else is refused.
   */
  inboundSources?: string[];
  /** Challenge the trunk's INVITEs with digest (its username and password) before answering. */
  inboundChallenge?: boolean;
  /** Keep a registration (REGISTER with the trunk's credentials) at the trunk; needs a username. */
  register?: boolean;
  /**
   * A SIP URI every request of the trunk's calls (and its REGISTERs) is sent to instead of the
   * trunk's own address, over the proxy's transport; the Request-URI still names the trunk.
   */
  outboundProxy?: string;
  /**
   * SRTP (SDES keys in the SDP) for the trunk's calls; unset: required on a TLS trunk (keys are
   * only private when the signalling is), off otherwise.
   */
  srtp?: SrtpPolicy;
  /**
   * The address this trunk's calls advertise for callwright — in Via, Contact and the SDP — when
   * the carrier reaches callwright through a NAT the other trunks do not (an IP address; default
   * CALLWRIGHT_PUBLIC_IP for SIP and media).
   */
  publicAddress?: string;
}

/** A trunk URI taken apart: `sip:` or `sips:`, host (IPv6 in brackets), port and transport. */
export interface TrunkUri {
  scheme: 'sip' | 'sips';
  host: string;
  /** As written; null: the transport's default (5060, or 5061 for TLS). */
  port: number | null;
  transport: TrunkTransport;
}

const trunkUriPattern = /^(sips?):([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::([0-9]{1,5}))?((?:;[^;]*)*)$/i;

/**
 * Reads a trunk URI, refusing what could not be honoured: a parameter other than `transport`,
 * a transport other than udp/tcp/tls, or `sips:` over UDP (RFC 3261 §26.2.2: sips means TLS on
 * every hop). `sips:` and `transport=tls` select TLS, `transport=tcp` TCP, nothing UDP.
 */
export function parseTrunkUri(uri: string): TrunkUri {
  const match = trunkUriPattern.exec(uri);
  if (!match)
    throw new AppError(
      'validation_error',
      'the trunk URI must look like sip:HOST[:PORT][;transport=udp|tcp|tls]',
    );
  const scheme = (match[1] as string).toLowerCase() as 'sip' | 'sips';
  let transport: TrunkTransport | null = null;
  for (const parameter of (match[4] as string).split(';').slice(1)) {
    const [name = '', value = ''] = parameter.split('=');
    if (name.toLowerCase() !== 'transport' || transport !== null) {
      throw new AppError(
        'validation_error',
        `the trunk URI parameter ;${parameter.slice(0, 32)} is not supported`,
      );
    }
    const lowered = value.toLowerCase();
    if (lowered !== 'udp' && lowered !== 'tcp' && lowered !== 'tls') {
      throw new AppError(
        'validation_error',
        `transport=${value.slice(0, 16)} is not supported: use udp, tcp or tls`,
      );
    }
    transport = lowered;
  }
  if (scheme === 'sips' && transport === 'udp') {
    throw new AppError('validation_error', 'a sips: trunk runs over TLS; transport=udp cannot be honoured');
  }
  const port = match[3] === undefined ? null : Number(match[3]);
  if (port !== null && (port < 1 || port > 65535))
    throw new AppError('validation_error', 'the trunk port must be from 1 to 65535');
  const resolved: TrunkTransport = scheme === 'sips' || transport === 'tls' ? 'tls' : (transport ?? 'udp');
  return { scheme, host: match[2] as string, port, transport: resolved };
}

/** The port a trunk's SIP goes to: as written, else 5061 for TLS and 5060 otherwise. */
export function trunkPort(uri: TrunkUri): number {
  return uri.port ?? (uri.transport === 'tls' ? 5061 : 5060);
}

/** Checks settings against the trunk's transport: TLS settings on a trunk without TLS are refused. */
export function checkTrunkSettings(settings: TrunkSettings, uri: TrunkUri): void {
  const tlsOnly = settings.tlsCaPem !== undefined || settings.tlsVerify !== undefined;
  const firstHop = settings.outboundProxy === undefined ? uri : parseTrunkUri(settings.outboundProxy);
  if (uri.transport === 'tls' && firstHop.transport !== 'tls') {
    throw new AppError(
      'validation_error',
      'a TLS trunk needs a TLS outbound proxy (sips: or ;transport=tls)',
    );
  }
  if (tlsOnly && firstHop.transport !== 'tls') {
    throw new AppError(
      'validation_error',
      'TLS settings (CA, verification) apply only to a sips: or transport=tls trunk',
    );
  }
}

/** The SRTP policy a trunk's calls use: its setting, else required over TLS and off otherwise. */
export function trunkSrtpPolicy(settings: TrunkSettings, uri: TrunkUri): SrtpPolicy {
  return settings.srtp ?? (uri.transport === 'tls' ? 'required' : 'off');
}

/** Reads the stored JSON; fields of another shape are dropped (the store wrote them checked). */
export function trunkSettingsFromJson(json: string): TrunkSettings {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return {};
  }
  if (typeof value !== 'object' || value === null) return {};
  const record = value as Record<string, unknown>;
  return {
    ...(typeof record.tlsCaPem === 'string' ? { tlsCaPem: record.tlsCaPem } : {}),
    ...(typeof record.tlsVerify === 'boolean' ? { tlsVerify: record.tlsVerify } : {}),
    ...(record.symmetricRtp === true ? { symmetricRtp: true } : {}),
    ...(record.assertedIdentity === true ? { assertedIdentity: true } : {}),
    ...(record.privacy === true ? { privacy: true } : {}),
    ...(record.register === true ? { register: true } : {}),
    ...(typeof record.outboundProxy === 'string' ? { outboundProxy: record.outboundProxy } : {}),
    ...(srtpPolicies.includes(record.srtp as SrtpPolicy) ? { srtp: record.srtp as SrtpPolicy } : {}),
    ...(typeof record.publicAddress === 'string' ? { publicAddress: record.publicAddress } : {}),
    ...(Array.isArray(record.inboundSources)
      ? {
          inboundSources: record.inboundSources.filter((entry): entry is string => typeof entry === 'string'),
        }
      : {}),
    ...(record.inboundChallenge === true ? { inboundChallenge: true } : {}),
  };
}

const ipv4Pattern = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** 4 or 6 for an IP address literal, else 0 (the domain core reads no node: module; URL parses IPv6). */
function ipFamily(address: string): 0 | 4 | 6 {
  if (ipv4Pattern.test(address)) return 4;
  if (!address.includes(':')) return 0;
  try {
    new URL(`http://[${address}]/`);
    return 6;
  } catch {
    return 0;
  }
}

/** Checks an IP or CIDR block as written by an operator; throws a TypeError naming it otherwise. */
export function checkInboundSource(entry: string): { address: string; prefix: number | null } {
  const [address = '', prefixText, extra] = entry.trim().split('/');
  const family = ipFamily(address);
  const prefix = prefixText === undefined ? null : Number(prefixText);
  const maxPrefix = family === 6 ? 128 : 32;
  if (
    family === 0 ||
    extra !== undefined ||
    (prefix !== null && (!Number.isInteger(prefix) || prefix < 0 || prefix > maxPrefix))
  )
    throw new TypeError(`"${entry.slice(0, 60)}" is not an IP address or CIDR block`);
  return { address, prefix };
}
