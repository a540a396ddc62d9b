import type { FastifyReply, FastifyRequest } from 'fastify';
import { hashApiKey, hasValidKeyShape, safeEqual } from '../domain/apiKeys.js';
import { AppError, invalidApiKeyMessage } from '../domain/errors.js';
import type { RatePolicy } from '../domain/rateLimit.js';
import type { AccountRecord } from '../domain/records.js';
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

/** Fastify onRequest hook: sets `request.auth` or answers 401/429. */
export type Authenticator = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

export interface AuthenticatorOptions {
  store: Store;
  limiter: RateLimiter;
  authFailurePolicy: RatePolicy;
  /** Minimum time between two writes of a key's last_used_at. */
  lastUsedWriteIntervalMs?: number;
}

/**
 * DESIGN §1 step 1: only a header named exactly `X-API-Key`, a key of the right shape whose SHA-256
 * is stored and not revoked. No cache: a revocation counts from the very next request. Clients
 * that fail too often from one address are held off with 429 before their key is even looked at.
 */
export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const { store, limiter, authFailurePolicy } = options;
  const writeIntervalMs = options.lastUsedWriteIntervalMs ?? 60_000;
  const lastUsedWrittenAtMs = new Map<string, number>();

  async function reject(request: FastifyRequest, reply: FastifyReply): Promise<never> {
    const decision = await limiter.take(`auth-failure:${request.ip}`, authFailurePolicy);
    for (const [name, value] of Object.entries(
      rateLimitHeaders('auth_failures', authFailurePolicy, decision),
    )) {
      reply.header(name, value);
    }
    throw new AppError('unauthorized', invalidApiKeyMessage);
  }

  return async function authenticate(request, reply) {
    const failures = await limiter.peek(`auth-failure:${request.ip}`, authFailurePolicy);
    if (!failures.allowed) {
      throw new AppError('rate_limited', 'too many failed authentications from this address; retry later', {
        headers: {
          ...rateLimitHeaders('auth_failures', authFailurePolicy, failures),
          'Retry-After': String(failures.retryAfterS),
        },
      });
    }
    const values = rawHeaderValues(request.raw.rawHeaders, apiKeyHeaderName);
    const presented = values.length === 1 ? (values[0] as string) : '';
    if (!hasValidKeyShape(presented)) return reject(request, reply);
    const keyHash = hashApiKey(presented);
    const found = await store.apiKeys.findByHash(keyHash);
    if (!found || found.key.revokedAt !== null || !safeEqual(found.keyHash, keyHash)) {
      return reject(request, reply);
    }
    request.auth = { account: found.account, apiKeyId: found.key.id };

    const nowMs = Date.now();
    const writtenAtMs = lastUsedWrittenAtMs.get(found.key.id) ?? 0;
    if (nowMs - writtenAtMs >= writeIntervalMs) {
      lastUsedWrittenAtMs.set(found.key.id, nowMs);
      await store.apiKeys.touchLastUsed(found.key.id, new Date(nowMs).toISOString());
    }
  };
}
