/**
 * Keeps webhooks away from the service's own network (SSRF): a check of the URL when it is
 * configured, and a DNS resolution at delivery time whose vetted address is the one connected to,
 * so a hostname cannot resolve to a public address for the check and a private one for the request.
 */
import { isIP } from 'node:net';
import { AppError } from '../domain/errors.js';
import {
  checkHost,
  type HostGuardOptions,
  type HostnameLookup,
  resolveVettedHost,
} from '../net/hostGuard.js';
import { unbracketed } from '../net/ipRanges.js';

export type { HostnameLookup, ResolvedAddress } from '../net/hostGuard.js';

export const allowPrivateSettingName = 'CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE';
export const maximumWebhookUrlLength = 2048;

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

function hostGuardOptions(options: UrlGuardOptions): HostGuardOptions {
  return {
    allowPrivate: options.allowPrivate,
    subject: 'webhook URL',
    allowPrivateSetting: allowPrivateSettingName,
  };
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
  checkHost(parsed.hostname, hostGuardOptions(options));
  return parsed;
}

function defaultPort(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
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
  const vetted = await resolveVettedHost(hostname, {
    ...hostGuardOptions(options),
    ...(options.lookup ? { lookup: options.lookup } : {}),
  });
  return {
    url: parsed,
    hostHeader: parsed.host,
    port: defaultPort(parsed),
    tlsServerName: isIP(hostname) === 0 ? hostname : undefined,
    address: vetted.address,
    family: vetted.family,
  };
}
