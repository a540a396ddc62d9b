import type { FastifyReply, FastifyRequest } from 'fastify';
import { hashApiKey, hasValidKeyShape, safeEqual } from '../domain/apiKeys.js';
import { AppError, invalidApiKeyMessage } from '../domain/errors.js';
import type { RateDecision, RatePolicy } from '../domain/rateLimit.js';
import type { AccountRecord } from '../domain/records.js';
import { type AttemptReservation, reserveAttempt } from '../limits/attemptReservation.js';
import { addressLimitKey } from '../limits/clientAddress.js';
import type { RateLimiter } from '../limits/rateLimiter.js';
import type { Store } from '../store/types.js';
import { rateLimitHeaders } from './rateLimitHeaders.js';

export interface AuthContext {
  account: AccountRecord;
  apiKeyId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
  }
}

/** The account a route runs for: the hook authenticated the request before it (401 otherwise). */
export function authOf(request: { auth: AuthContext | null }): AuthContext {
  if (!request.auth) throw new AppError('unauthorized', 'invalid or missing API key');
  return request.auth;
}

export const apiKeyHeaderName = 'X-API-Key';

/**
 * The values of headers whose name, as sent on the wire, is exactly `name`. Node lower-cases
 * `req.headers`, so the spec's case-sensitive rule can only be kept on `rawHeaders`.
 */
export function rawHeaderValues(rawHeaders: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i] === name) values.push(rawHeaders[i + 1] as string);
  }
  return values;
}

/**
 * The 401's message: the specification's "invalid or missing API key", and, when the request sent
 * the header under another casing (Python's urllib sends `X-api-key`, Go's `X-Api-Key`), why it
 * did not count. The rule stays; the message says what to change.
 */
export function unauthorizedMessage(rawHeaders: readonly string[]): string {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    if (name !== apiKeyHeaderName && name.toLowerCase() === apiKeyHeaderName.toLowerCase()) {
      return `${invalidApiKeyMessage}: the header name is case-sensitive, send exactly ${apiKeyHeaderName} (this request sent ${name.slice(0, 40)})`;
    }
  }
  return invalidApiKeyMessage;
}

/** The bucket of failed authentications a request counts against: its client address's. */
export function authFailureBucketKey(request: FastifyRequest): string {
  return `auth-failure:${addressLimitKey(request.ip)}`;
}

/** The SHA-256 of the request's key: null unless exactly one `X-API-Key` of the right shape was sent. */
export function presentedKeyHash(request: FastifyRequest): string | null {
  const values = rawHeaderValues(request.raw.rawHeaders, apiKeyHeaderName);
  const presented = values.length === 1 ? (values[0] as string) : '';
  return hasValidKeyShape(presented) ? hashApiKey(presented) : null;
}

/** The 429 for an address held off after too many failed authentications. */
export function authFailuresHeldOff(policy: RatePolicy, decision: RateDecision): AppError {
  return new AppError('rate_limited', 'too many failed authentications from this address; retry later', {
    headers: {
      ...rateLimitHeaders('auth_failures', policy, decision),
      'Retry-After': String(decision.retryAfterS),
    },
  });
}

/** Fastify onRequest hook: sets `request.auth` or answers 401/429. */
export type Authenticator = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

export interface AuthenticatorOptions {
  store: Store;
  limiter: RateLimiter;
  authFailurePolicy: RatePolicy;
  /** Minimum time between two writes of a key's last_used_at. */
  lastUsedWriteIntervalMs?: number;
}

/** How many keys a process remembers as having authenticated (the fast path below). */
const knownKeysMax = 10_000;

/**
 * DESIGN §1 step 1: only a header named exactly `X-API-Key`, a key of the right shape whose SHA-256
 * is stored and not revoked. No cache: a revocation counts from the very next request. Clients
 * that fail too often from one address are held off with 429 before their key is even looked at.
 *
 * A key this process has never seen authenticate reserves a failure from its address's bucket
 * BEFORE the lookup, atomically, and gives it back when the key turns out valid: a burst of
 * guesses, however many API processes share it, gets as many lookups as the limit allows. A key
 * that has authenticated here before is no guess: it only checks that its address is not held
 * off, then is looked up as always, so a client's concurrent requests never compete for the
 * failure budget (and the hot path costs one read, not two writes).
 */
export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const { store, limiter, authFailurePolicy } = options;
  const writeIntervalMs = options.lastUsedWriteIntervalMs ?? 60_000;
  /** Key hash → when this process last wrote that key's last_used_at (0: not yet). */
  const knownKeys = new Map<string, number>();

  return async function authenticate(request, reply) {
    const bucketKey = authFailureBucketKey(request);
    const keyHash = presentedKeyHash(request);
    const known = keyHash !== null && knownKeys.has(keyHash);
    let reservation: AttemptReservation | null = null;
    if (known) {
      const failures = await limiter.peek(bucketKey, authFailurePolicy);
      if (!failures.allowed) throw authFailuresHeldOff(authFailurePolicy, failures);
    } else {
      reservation = await reserveAttempt(limiter, [{ key: bucketKey, policy: authFailurePolicy }]);
      if (!reservation.allowed) throw authFailuresHeldOff(authFailurePolicy, reservation.decision);
    }
    const found = keyHash === null ? null : await store.apiKeys.findByHash(keyHash);
    if (!found || found.key.revokedAt !== null || !safeEqual(found.keyHash, keyHash as string)) {
      // A key that authenticated here before was revoked since: from now on it is a guess.
      if (known) knownKeys.delete(keyHash as string);
      const failure = reservation?.decision ?? (await limiter.take(bucketKey, authFailurePolicy));
      for (const [name, value] of Object.entries(
        rateLimitHeaders('auth_failures', authFailurePolicy, failure),
      )) {
        reply.header(name, value);
      }
      throw new AppError('unauthorized', unauthorizedMessage(request.raw.rawHeaders));
    }
    await reservation?.giveBack();
    request.auth = { account: found.account, apiKeyId: found.key.id };

    if (!known && knownKeys.size >= knownKeysMax) {
      const oldest = knownKeys.keys().next();
      if (!oldest.done) knownKeys.delete(oldest.value);
    }
    const nowMs = Date.now();
    const writtenAtMs = knownKeys.get(found.keyHash) ?? 0;
    const writeDue = nowMs - writtenAtMs >= writeIntervalMs;
    knownKeys.set(found.keyHash, writeDue ? nowMs : writtenAtMs);
    if (writeDue) await store.apiKeys.touchLastUsed(found.key.id, new Date(nowMs).toISOString());
  };
}
