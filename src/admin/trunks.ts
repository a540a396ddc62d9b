import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { AppError } from '../domain/errors.js';
import type { TrunkRecord } from '../domain/records.js';
import {
  checkInboundSource,
  checkTrunkSettings,
  parseTrunkUri,
  type SrtpPolicy,
  srtpPolicies,
  type TrunkSettings,
  type TrunkTransport,
  type TrunkUri,
  trunkPort,
  trunkSrtpPolicy,
} from '../domain/trunkSettings.js';
import { checkHost, type HostGuardOptions } from '../net/hostGuard.js';
import type { SecretBox } from '../secrets/secretBox.js';
import type { Store } from '../store/types.js';

/** The operator setting that lets trunks name private, loopback and other internal addresses. */
export const trunkAllowPrivateSettingName = 'CALLWRIGHT_TRUNK_ALLOW_PRIVATE';

/** How trunk hosts are vetted: the webhook guard, with the trunks' own setting. */
export function trunkHostGuard(allowPrivate: boolean): HostGuardOptions {
  return { allowPrivate, subject: 'trunk URI', allowPrivateSetting: trunkAllowPrivateSettingName };
}

/** The host (IPv6 in brackets), port and transport of a trunk URI; null when it cannot be honoured. */
export function trunkAddress(uri: string): { host: string; port: number; transport: TrunkTransport } | null {
  try {
    const parsed = parseTrunkUri(uri);
    return { host: parsed.host, port: trunkPort(parsed), transport: parsed.transport };
  } catch {
    return null;
  }
}

/** A trunk URI taken apart, or null when it cannot be honoured (a row stored before a check). */
export function parsedTrunkUri(uri: string): TrunkUri | null {
  try {
    return parseTrunkUri(uri);
  } catch {
    return null;
  }
}

/**
 * How a trunk names itself in requests: its URI's scheme, the URI after the scheme (port and
 * parameters kept, for the Request-URI), and the domain of From, To and the address of record
 * (the from-domain, else the trunk's host). Null when the URI cannot be honoured.
 */
export function trunkNaming(
  trunk: Pick<TrunkRecord, 'uri' | 'fromDomain'>,
): { scheme: 'sip' | 'sips'; hostPart: string; domain: string } | null {
  try {
    const parsed = parseTrunkUri(trunk.uri);
    const hostPart = trunk.uri.slice(parsed.scheme.length + 1);
    return { scheme: parsed.scheme, hostPart, domain: trunk.fromDomain ?? parsed.host };
  } catch {
    return null;
  }
}

/** The SRTP policy a trunk's calls use: its setting, or the default of its transport. */
export function trunkSrtpOf(trunk: Pick<TrunkRecord, 'uri' | 'settings'>): SrtpPolicy {
  try {
    return trunkSrtpPolicy(trunk.settings, parseTrunkUri(trunk.uri));
  } catch {
    return trunk.settings.srtp ?? 'off';
  }
}

/** The URI a trunk's requests are sent to: its outbound proxy when it has one, else the trunk. */
export function trunkNextHopUri(trunk: Pick<TrunkRecord, 'uri' | 'settings'>): string {
  return trunk.settings.outboundProxy ?? trunk.uri;
}

/**
 * The host as the resolver will read it: IPv4 in the shorthand, decimal, octal or hex forms that
 * getaddrinfo accepts (`127.1`, `2130706433`, `0x7f.1`) becomes its dotted quad, so the check
 * judges the address the INVITE would really go to.
 */
function canonicalHost(host: string): string {
  if (host.startsWith('[')) return host;
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    return host;
  }
}

/** A trunk to add: its address and credentials, and its settings (see TrunkSettings). */
export interface TrunkInput extends Omit<TrunkSettings, 'srtp'> {
  name: string;
  /** off, optional or required (checked here: it comes from a form or the command line). */
  srtp?: string;
  uri: string;
  username?: string;
  password?: string;
  fromDomain?: string;
}

/** A trunk's public address is an IP literal: a name would be resolved by the carrier, not us. */
function checkPublicAddress(value: string): string {
  const address = value.trim().replace(/^\[|\]$/g, '');
  if (isIP(address) === 0 || address === '0.0.0.0' || address === '::')
    throw new AppError(
      'validation_error',
      'the public address must be an IP address (the one the carrier sees)',
    );
  return address;
}

/** A trunk's inbound allow-list (issue 40): IPs and CIDR blocks, at most 100. */
function checkInboundSources(entries: readonly string[]): string[] {
  if (entries.length > 100) throw new AppError('validation_error', 'at most 100 inbound sources');
  return entries.map((entry) => {
    try {
      checkInboundSource(entry);
      return entry.trim();
    } catch (error) {
      throw new AppError('validation_error', error instanceof Error ? error.message : 'bad inbound source');
    }
  });
}

function checkSrtpPolicy(value: string): SrtpPolicy {
  const policy = srtpPolicies.find((p) => p === value);
  if (!policy) throw new AppError('validation_error', 'srtp must be off, optional or required');
  return policy;
}

/** A CA given for a TLS trunk must hold at least one certificate, and only certificates. */
function checkCaPem(pem: string): void {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0 || pem.length > 100_000)
    throw new AppError('validation_error', 'the TLS CA must be PEM certificates (BEGIN CERTIFICATE)');
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch {
      throw new AppError('validation_error', 'the TLS CA holds a certificate that cannot be read');
    }
  }
}

/**
 * Adds a SIP trunk; its password is encrypted before it is stored and is never shown again. A
 * host in an internal range (private, loopback, link-local, …) or named localhost is refused unless
 * `allowPrivate` (CALLWRIGHT_TRUNK_ALLOW_PRIVATE); names are resolved and vetted again at each dial.
 */
export async function addTrunk(
  store: Store,
  secretBox: SecretBox,
  accountId: string,
  input: TrunkInput,
  options: { allowPrivate: boolean },
): Promise<TrunkRecord> {
  const name = input.name.trim();
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name)) {
    throw new AppError(
      'validation_error',
      'trunk names are 1 to 64 letters, digits, dots, dashes or underscores',
    );
  }
  if (name === 'sandbox')
    throw new AppError('validation_error', '"sandbox" is the built-in route, not a trunk name');
  const uri = parseTrunkUri(input.uri);
  checkHost(canonicalHost(uri.host), trunkHostGuard(options.allowPrivate));
  if (input.outboundProxy !== undefined) {
    const proxy = parseTrunkUri(input.outboundProxy);
    checkHost(canonicalHost(proxy.host), {
      ...trunkHostGuard(options.allowPrivate),
      subject: 'outbound proxy',
    });
  }
  const settings: TrunkSettings = {
    ...(input.tlsCaPem === undefined ? {} : { tlsCaPem: input.tlsCaPem.trim() }),
    ...(input.tlsVerify === undefined ? {} : { tlsVerify: input.tlsVerify }),
    ...(input.symmetricRtp ? { symmetricRtp: true } : {}),
    ...(input.assertedIdentity ? { assertedIdentity: true } : {}),
    ...(input.privacy ? { privacy: true } : {}),
    ...(input.register ? { register: true } : {}),
    ...(input.inboundChallenge ? { inboundChallenge: true } : {}),
    ...(input.inboundSources === undefined
      ? {}
      : { inboundSources: checkInboundSources(input.inboundSources) }),
    ...(input.outboundProxy === undefined ? {} : { outboundProxy: input.outboundProxy }),
    ...(input.srtp === undefined ? {} : { srtp: checkSrtpPolicy(input.srtp) }),
    ...(input.publicAddress === undefined ? {} : { publicAddress: checkPublicAddress(input.publicAddress) }),
  };
  if (settings.inboundChallenge && input.username === undefined)
    throw new AppError(
      'validation_error',
      'a trunk that challenges inbound calls needs --username and --password',
    );
  if (settings.register && input.username === undefined)
    throw new AppError('validation_error', 'a trunk that registers needs --username and --password');
  checkTrunkSettings(settings, uri);
  if (settings.tlsCaPem !== undefined) checkCaPem(settings.tlsCaPem);
  if ((input.username === undefined) !== (input.password === undefined)) {
    throw new AppError('validation_error', 'give both --username and --password, or neither');
  }
  if (input.fromDomain !== undefined && !/^[A-Za-z0-9.-]{1,253}$/.test(input.fromDomain)) {
    throw new AppError('validation_error', 'the from-domain must be a host name');
  }
  return store.trunks.create({
    accountId,
    name,
    uri: input.uri,
    username: input.username ?? null,
    passwordCiphertext: input.password === undefined ? null : secretBox.seal(input.password),
    fromDomain: input.fromDomain ?? null,
    settings,
  });
}

export async function removeTrunk(store: Store, accountId: string, idOrName: string): Promise<TrunkRecord> {
  const trunk = await store.trunks.get(accountId, idOrName);
  if (!trunk) throw new AppError('not_found', `no trunk ${idOrName.slice(0, 64)} in this account`);
  await store.trunks.remove(accountId, trunk.id);
  return trunk;
}

/** The latest registration state a worker reported, as stored; null when none was. */
function registrationOf(trunk: TrunkRecord): Record<string, unknown> | null {
  if (trunk.registration === null) return null;
  try {
    const parsed: unknown = JSON.parse(trunk.registration);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A trunk as lists show it: the password only as "set" or not. */
export function describeTrunk(trunk: TrunkRecord) {
  return {
    trunk_id: trunk.id,
    name: trunk.name,
    uri: trunk.uri,
    username: trunk.username,
    password: trunk.passwordCiphertext ? 'set' : null,
    from_domain: trunk.fromDomain,
    transport: trunkAddress(trunkNextHopUri(trunk))?.transport ?? null,
    outbound_proxy: trunk.settings.outboundProxy ?? null,
    tls_ca: trunk.settings.tlsCaPem === undefined ? null : 'set',
    tls_verify: trunk.settings.tlsVerify ?? true,
    symmetric_rtp: trunk.settings.symmetricRtp === true,
    asserted_identity: trunk.settings.assertedIdentity === true,
    privacy: trunk.settings.privacy === true,
    register: trunk.settings.register === true,
    srtp: trunkSrtpOf(trunk),
    public_address: trunk.settings.publicAddress ?? null,
    inbound_sources: trunk.settings.inboundSources ?? [],
    inbound_challenge: trunk.settings.inboundChallenge === true,
    registration: registrationOf(trunk),
    created_at: trunk.createdAt,
  };
}
