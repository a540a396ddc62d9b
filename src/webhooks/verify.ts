/**
 * Verification of callwright webhooks for receivers, published as `@callwright/client/webhooks`
 * and as the server package's `callwright/webhooks`.
 *
 * Webhooks are signed with the Standard Webhooks scheme (https://www.standardwebhooks.com):
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{raw body}">`,
 * keyed with the base64-decoded part of a `whsec_…` secret. Several space-separated signatures
 * appear while a secret is being rotated; one match is enough.
 *
 * This module depends on nothing but `node:crypto`, so receivers pull in nothing else.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Thrown when a webhook is not authentic, is outside the time tolerance or is malformed. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/** Anything with a `get` like the Fetch API `Headers` (names are case-insensitive there). */
export interface HeaderLookup {
  get(name: string): string | null;
}

/** A plain header object (any name casing; Node's `IncomingHttpHeaders` fits) or a `Headers`. */
export type WebhookRequestHeaders =
  | HeaderLookup
  | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifyWebhookOptions {
  /** Largest accepted distance between the `webhook-timestamp` and now, in either direction. */
  toleranceS?: number;
  /** The current time in unix seconds; defaults to the clock. */
  nowS?: number;
}

export const webhookSecretPrefix = 'whsec_';
export const defaultToleranceS = 300;

const strictBase64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const timestampPattern = /^[0-9]{1,15}$/;

/**
 * The HMAC key of a webhook secret: the base64 after an optional `whsec_` prefix.
 * Throws a TypeError for a secret that is empty or not base64 — a configuration mistake on the
 * receiver's side, deliberately not a WebhookVerificationError.
 */
export function webhookSecretKey(secret: string): Uint8Array {
  const encoded = secret.startsWith(webhookSecretPrefix) ? secret.slice(webhookSecretPrefix.length) : secret;
  if (encoded.length === 0 || !strictBase64Pattern.test(encoded)) {
    throw new TypeError('invalid webhook secret: expected "whsec_" followed by base64');
  }
  return Buffer.from(encoded, 'base64');
}

/** The signature `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` over the exact body bytes. */
export function hmacSignatureV1(
  key: Uint8Array,
  id: string,
  timestampS: number | string,
  body: string | Uint8Array,
): string {
  const hmac = createHmac('sha256', key);
  hmac.update(`${id}.${timestampS}.`, 'utf8');
  hmac.update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
  return `v1,${hmac.digest('base64')}`;
}

function isHeaderLookup(headers: WebhookRequestHeaders): headers is HeaderLookup {
  return typeof (headers as { get?: unknown }).get === 'function';
}

/** The single value of a header, or undefined when absent; two different values are refused. */
function headerValue(headers: WebhookRequestHeaders, name: string): string | undefined {
  if (isHeaderLookup(headers)) return headers.get(name) ?? undefined;
  const values = new Set<string>();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    for (const item of typeof value === 'string' ? [value] : value) values.add(item);
  }
  if (values.size > 1) throw new WebhookVerificationError(`more than one ${name} header`);
  const [only] = values;
  return only;
}

function requiredHeader(headers: WebhookRequestHeaders, name: string): string {
  const value = headerValue(headers, name)?.trim();
  if (value === undefined || value === '') throw new WebhookVerificationError(`missing ${name} header`);
  return value;
}

function checkTimestamp(timestampText: string, toleranceS: number, nowS: number): void {
  if (!timestampPattern.test(timestampText)) {
    throw new WebhookVerificationError(
      `invalid webhook-timestamp header: expected unix seconds, got "${timestampText.slice(0, 32)}"`,
    );
  }
  const ageS = nowS - Number(timestampText);
  if (ageS > toleranceS) {
    throw new WebhookVerificationError(
      `webhook timestamp is too old: ${ageS} s before now, tolerance is ${toleranceS} s`,
    );
  }
  if (-ageS > toleranceS) {
    throw new WebhookVerificationError(
      `webhook timestamp is too new: ${-ageS} s after now, tolerance is ${toleranceS} s`,
    );
  }
}

function sameText(left: string, right: string): boolean {
  const leftBytes = Buffer.from(left, 'utf8');
  const rightBytes = Buffer.from(right, 'utf8');
  return leftBytes.length === rightBytes.length && timingSafeEqual(leftBytes, rightBytes);
}

/**
 * Verifies a webhook and returns its parsed JSON payload.
 *
 * `rawBody` must be the body exactly as received (not re-serialised JSON). `secret` may be several
 * secrets while the receiver rotates its own. Throws WebhookVerificationError when a header is
 * missing or malformed, the timestamp is further than `toleranceS` from now (either direction),
 * no `v1` signature matches (other versions are ignored), or the body is not JSON.
 */
export function verifyWebhook(
  secret: string | readonly string[],
  headers: WebhookRequestHeaders,
  rawBody: string | Uint8Array,
  options: VerifyWebhookOptions = {},
): unknown {
  const toleranceS = options.toleranceS ?? defaultToleranceS;
  if (!Number.isFinite(toleranceS) || toleranceS < 0) {
    throw new TypeError(`toleranceS must be a non-negative number, got ${toleranceS}`);
  }
  const keys = (typeof secret === 'string' ? [secret] : secret).map(webhookSecretKey);
  if (keys.length === 0) throw new TypeError('at least one webhook secret is required');

  const id = requiredHeader(headers, 'webhook-id');
  const timestampText = requiredHeader(headers, 'webhook-timestamp');
  const signatureHeader = requiredHeader(headers, 'webhook-signature');
  checkTimestamp(timestampText, toleranceS, options.nowS ?? Math.floor(Date.now() / 1000));

  const offeredV1Signatures = signatureHeader.split(/\s+/).filter((entry) => entry.startsWith('v1,'));
  if (offeredV1Signatures.length === 0) {
    throw new WebhookVerificationError('webhook-signature header has no v1 signature');
  }
  const bodyBytes = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  const matched = keys.some((key) => {
    const expected = hmacSignatureV1(key, id, timestampText, bodyBytes);
    return offeredV1Signatures.some((offered) => sameText(offered, expected));
  });
  if (!matched) throw new WebhookVerificationError('no webhook signature matches');

  try {
    return JSON.parse(
      Buffer.from(bodyBytes.buffer, bodyBytes.byteOffset, bodyBytes.byteLength).toString('utf8'),
    );
  } catch {
    throw new WebhookVerificationError('webhook body is not valid JSON');
  }
}
