import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import type { RatePolicy } from '../domain/rateLimit.js';
import type { RateLimiter } from '../limits/rateLimiter.js';
import { rateLimitHeaders } from './rateLimitHeaders.js';

/**
 * DESIGN §1 step 2 and §5: one token bucket per account (the account's own policy or the
 * service default). Every authenticated response carries the headers; a 429 adds Retry-After.
 */
export function createAccountRateLimit(limiter: RateLimiter, defaultPolicy: RatePolicy) {
  return async function limitAccount(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const account = request.auth?.account;
    if (!account) throw new AppError('server_error', 'rate limit applied before authentication');
    const policy = account.ratePolicy ?? defaultPolicy;
    const decision = await limiter.take(`account:${account.id}`, policy);
    const headers = rateLimitHeaders('account', policy, decision);
    if (!decision.allowed) {
      throw new AppError('rate_limited', 'too many requests; retry with exponential backoff', {
        headers: { ...headers, 'Retry-After': String(decision.retryAfterS) },
      });
    }
    for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  };
}
