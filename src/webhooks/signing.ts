/**
 * Signing of outgoing webhooks with the Standard Webhooks scheme (see verify.ts for the format).
 * The signature covers the exact bytes that are sent, so callers pass the serialised body.
 */
import { randomBytes } from 'node:crypto';
import { AppError } from '../domain/errors.js';
import { hmacSignatureV1, webhookSecretKey, webhookSecretPrefix } from './verify.js';

export const webhookSecretKeyBytes = 32;
/** Standard Webhooks recommends keys of 24 to 64 bytes. */
const minimumSecretKeyBytes = 24;
const maximumSecretKeyBytes = 64;

export interface SignPayloadInput {
  /** Active secrets (`whsec_…`); more than one while a secret is being rotated. */
  secrets: readonly string[];
  /** The `webhook-id`: the event id, repeated on every retry. */
  id: string;
  /** The `webhook-timestamp` in unix seconds. */
  timestampS: number;
  /** The exact bytes of the request body. */
  body: string | Buffer;
}

/** A type alias rather than an interface so that it fits `Record<string, string>` parameters. */
export type WebhookRequestHeaderValues = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
  'content-type': 'application/json';
};

/** A new secret: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `${webhookSecretPrefix}${randomBytes(webhookSecretKeyBytes).toString('base64')}`;
}

/** Why a secret cannot sign, or null when it is a usable `whsec_` secret. */
export function webhookSecretProblem(secret: string): string | null {
  if (!secret.startsWith(webhookSecretPrefix)) return 'webhook secret must start with "whsec_"';
  let key: Uint8Array;
  try {
    key = webhookSecretKey(secret);
  } catch {
    return 'webhook secret must be "whsec_" followed by base64';
  }
  if (key.length < minimumSecretKeyBytes || key.length > maximumSecretKeyBytes) {
    return `webhook secret key must be ${minimumSecretKeyBytes} to ${maximumSecretKeyBytes} bytes, got ${key.length}`;
  }
  return null;
}

function signingKey(secret: string): Uint8Array {
  const problem = webhookSecretProblem(secret);
  if (problem !== null) throw new AppError('validation_error', problem);
  return webhookSecretKey(secret);
}

function checkSignInput(input: SignPayloadInput): void {
  if (input.secrets.length === 0) {
    throw new AppError('validation_error', 'at least one webhook secret is required to sign');
  }
  if (input.id === '' || /[\s.]/.test(input.id)) {
    throw new AppError('validation_error', 'webhook id must be non-empty without dots or whitespace');
  }
  if (!Number.isSafeInteger(input.timestampS) || input.timestampS < 0) {
    throw new AppError(
      'validation_error',
      `webhook timestamp must be whole unix seconds, got ${input.timestampS}`,
    );
  }
}

/**
 * The `webhook-signature` header value: one `v1,<base64>` per secret, space-separated,
 * in the order the secrets are given.
 */
export function signPayload(input: SignPayloadInput): string {
  checkSignInput(input);
  return input.secrets
    .map((secret) => hmacSignatureV1(signingKey(secret), input.id, input.timestampS, input.body))
    .join(' ');
}

/** All headers that carry a signed webhook (the caller adds nothing else to sign). */
export function webhookHeaders(input: SignPayloadInput): WebhookRequestHeaderValues {
  return {
    'webhook-id': input.id,
    'webhook-timestamp': String(input.timestampS),
    'webhook-signature': signPayload(input),
    'content-type': 'application/json',
  };
}
