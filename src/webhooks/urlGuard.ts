/**
 * Keeps webhooks away from the service's own network (SSRF): a check of the URL when it is
 * configured, and a DNS resolution at delivery time whose vetted address is the one connected to,
 * so a hostname cannot resolve to a public address for the check and a private one for the request.
 */
import { promises as dnsPromises } from 'node:dns';
import { AppError } from '../domain/errors.js';
import { isIpLiteral, type RefusedRangeKind, refusedRangeOf } from './ipRanges.js';

export const allowPrivateSettingName = 'CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE';
export const maximumWebhookUrlLength = 2048;

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** The shape of `dns.promises.lookup(hostname, { all: true })`, injectable for tests. */
export type HostnameLookup = (hostname: string, options: { all: true }) => Promise<ResolvedAddress[]>;

export interface UrlGuardOptions {
  /** Allow private, loopback and other reserved addresses (local development, private networks). */
  allowPrivate: boolean;
}

export interface DeliveryAddressOptions extends UrlGuardOptions {
  lookup?: HostnameLookup;
}

export interface DeliveryTarget {
  url: URL;
  /** Host header value: the URL's host, port included when not the default. */
  hostHeader: string;
  /** TLS server name (SNI and certificate check); undefined when the URL host is an IP literal. */
  tlsServerName: string | undefined;
  /** The vetted address to connect to. */
  address: string;
  family: 4 | 6;
  port: number;
}

function article(kind: RefusedRangeKind): string {
  return kind === 'unspecified' ? 'an' : 'a';
}

function refusal(subject: string, kind: RefusedRangeKind, address: string): AppError {
  return new AppError(
    'validation_error',
    `${subject} ${article(kind)} ${kind} address (${address}); set ${allowPrivateSettingName}=true to allow it`,
  );
}

function unbracketed(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * Configuration-time check of a webhook URL: http or https, no credentials, a host, and — unless
 * `allowPrivate` — a host that is not an IP literal in a refused range nor `localhost`. The WHATWG
 * URL parser has already turned decimal, octal and hex IPv4 forms into dotted quads by then.
 * Returns the parsed URL; throws AppError('validation_error').
 */
export function checkWebhookUrl(url: string | URL, options: UrlGuardOptions): URL {
  const text = typeof url === 'string' ? url.trim() : url.href;
  if (text.length > maximumWebhookUrlLength) {
    throw new AppError(
      'validation_error',
      `webhook URL is longer than ${maximumWebhookUrlLength} characters`,
    );
  }
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw new AppError('validation_error', 'webhook URL is not a valid absolute URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new AppError('validation_error', `webhook URL must use http or https, not ${parsed.protocol}`);
  }
  if (parsed.username !== '' || parsed.password !== '') {
    throw new AppError('validation_error', 'webhook URL must not contain a user name or password');
  }
  if (parsed.hostname === '') throw new AppError('validation_error', 'webhook URL must have a host');
  if (options.allowPrivate) return parsed;

  if (isIpLiteral(parsed.hostname)) {
    const address = unbracketed(parsed.hostname);
    const kind = refusedRangeOf(address);
    if (kind !== null) throw refusal('webhook URL points to', kind, address);
  } else if (isLocalhostName(parsed.hostname)) {
    throw refusal('webhook URL points to', 'loopback', parsed.hostname);
  }
  return parsed;
}

function defaultPort(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

async function lookupAddresses(hostname: string, lookup: HostnameLookup): Promise<ResolvedAddress[]> {
  try {
    return await lookup(hostname, { all: true });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const reason = typeof code === 'string' ? code : error instanceof Error ? error.message : String(error);
    throw new AppError('unavailable', `webhook URL host ${hostname} could not be resolved (${reason})`, {
      cause: error,
    });
  }
}

/**
 * Delivery-time resolution: checks the URL, resolves its host (all addresses), refuses the URL when
 * any address is in a refused range (unless `allowPrivate`), and returns the first address to
 * connect to. Throws AppError('validation_error') for a refused URL and AppError('unavailable')
 * when the name does not resolve.
 */
export async function resolveDeliveryAddress(
  url: string | URL,
  options: DeliveryAddressOptions,
): Promise<DeliveryTarget> {
  const parsed = checkWebhookUrl(url, options);
  const hostname = unbracketed(parsed.hostname);
  const common = { url: parsed, hostHeader: parsed.host, port: defaultPort(parsed) };
  if (isIpLiteral(hostname)) {
    return { ...common, tlsServerName: undefined, address: hostname, family: hostname.includes(':') ? 6 : 4 };
  }

  const lookup = options.lookup ?? ((name, lookupOptions) => dnsPromises.lookup(name, lookupOptions));
  const addresses = await lookupAddresses(hostname, lookup);
  const [first] = addresses;
  if (first === undefined) {
    throw new AppError('unavailable', `webhook URL host ${hostname} resolved to no address`);
  }
  for (const resolved of addresses) {
    if (!isIpLiteral(resolved.address)) {
      throw new AppError(
        'unavailable',
        `webhook URL host ${hostname} resolved to a non-address (${resolved.address})`,
      );
    }
    const kind = options.allowPrivate ? null : refusedRangeOf(resolved.address);
    if (kind !== null) throw refusal(`webhook URL host ${hostname} resolves to`, kind, resolved.address);
  }
  return {
    ...common,
    tlsServerName: hostname,
    address: first.address,
    family: first.address.includes(':') ? 6 : 4,
  };
}
