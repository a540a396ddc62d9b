/**
 * Keeps outbound traffic chosen by account holders (webhook URLs, SIP trunks) away from the
 * service's own network (SSRF): a check of the host when it is configured, and a DNS resolution
 * at use time whose vetted address is the one used, so a name cannot resolve to a public address
 * for the check and a private one for the traffic.
 */
import { promises as dnsPromises } from 'node:dns';
import { AppError } from '../domain/errors.js';
import { isIpLiteral, type RefusedRangeKind, refusedRangeOf, unbracketed } from './ipRanges.js';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** The shape of `dns.promises.lookup(hostname, { all: true })`, injectable for tests. */
export type HostnameLookup = (hostname: string, options: { all: true }) => Promise<ResolvedAddress[]>;

export interface HostGuardOptions {
  /** Allow private, loopback and other reserved addresses (local development, private networks). */
  allowPrivate: boolean;
  /** What the host belongs to, for messages: "webhook URL", "trunk URI". */
  subject: string;
  /** The operator setting that lifts the refusal, named in the message. */
  allowPrivateSetting: string;
}

export interface VettedAddress {
  /** The address to send to (IPv6 without brackets). */
  address: string;
  family: 4 | 6;
}

function article(kind: RefusedRangeKind): string {
  return kind === 'unspecified' ? 'an' : 'a';
}

function refusal(subject: string, kind: RefusedRangeKind, address: string, setting: string): AppError {
  return new AppError(
    'validation_error',
    `${subject} ${article(kind)} ${kind} address (${address}); set ${setting}=true to allow it`,
  );
}

function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * Configuration-time check of a host (no DNS): unless `allowPrivate`, an IP literal in a refused
 * range or a `localhost` name is refused. IPv4 hosts must already be in canonical dotted form (the
 * WHATWG URL parser makes them so). Throws AppError('validation_error').
 */
export function checkHost(hostname: string, options: HostGuardOptions): void {
  if (options.allowPrivate) return;
  if (isIpLiteral(hostname)) {
    const address = unbracketed(hostname);
    const kind = refusedRangeOf(address);
    if (kind !== null)
      throw refusal(`${options.subject} points to`, kind, address, options.allowPrivateSetting);
  } else if (isLocalhostName(hostname)) {
    throw refusal(`${options.subject} points to`, 'loopback', hostname, options.allowPrivateSetting);
  }
}

/** True when traffic may go to this host: an IP literal outside the refused ranges (or any literal with `allowPrivate`). Names are never allowed: they are resolved with resolveVettedHost. */
export function isAllowedAddress(host: string, allowPrivate: boolean): boolean {
  if (!isIpLiteral(host)) return false;
  return allowPrivate || refusedRangeOf(unbracketed(host)) === null;
}

async function lookupAddresses(
  hostname: string,
  lookup: HostnameLookup,
  subject: string,
): Promise<ResolvedAddress[]> {
  try {
    return await lookup(hostname, { all: true });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const reason = typeof code === 'string' ? code : error instanceof Error ? error.message : String(error);
    throw new AppError('unavailable', `${subject} host ${hostname} could not be resolved (${reason})`, {
      cause: error,
    });
  }
}

/**
 * Use-time resolution: an IP literal is checked as it is; a name is resolved (all its addresses)
 * and refused when any address is in a refused range (unless `allowPrivate`). Returns the first
 * address: the one to use, pinned. Throws AppError('validation_error') for a refused host and
 * AppError('unavailable') when the name does not resolve.
 */
export async function resolveVettedHost(
  hostname: string,
  options: HostGuardOptions & { lookup?: HostnameLookup },
): Promise<VettedAddress> {
  const host = unbracketed(hostname);
  checkHost(hostname, options);
  if (isIpLiteral(host)) return { address: host, family: host.includes(':') ? 6 : 4 };

  const lookup = options.lookup ?? ((name, lookupOptions) => dnsPromises.lookup(name, lookupOptions));
  const addresses = await lookupAddresses(host, lookup, options.subject);
  const [first] = addresses;
  if (first === undefined) {
    throw new AppError('unavailable', `${options.subject} host ${host} resolved to no address`);
  }
  for (const resolved of addresses) {
    if (!isIpLiteral(resolved.address)) {
      throw new AppError(
        'unavailable',
        `${options.subject} host ${host} resolved to a non-address (${resolved.address})`,
      );
    }
    const kind = options.allowPrivate ? null : refusedRangeOf(resolved.address);
    if (kind !== null)
      throw refusal(
        `${options.subject} host ${host} resolves to`,
        kind,
        resolved.address,
        options.allowPrivateSetting,
      );
  }
  return { address: first.address, family: first.address.includes(':') ? 6 : 4 };
}
