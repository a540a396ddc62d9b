import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { agentNotFound, newCallFields, numberNotConfigured } from '../calls/createOutboundCall.js';
import { AppError, isAppError } from '../domain/errors.js';
import { parseOutboundCallRequest } from '../domain/outboundCallRequest.js';
import type { RatePolicy } from '../domain/rateLimit.js';
import type { CallRecord } from '../domain/records.js';
import type { Logger } from '../logger.js';
import type { AuthorizedCallAttempt, AuthorizedCaller, AuthorizedCallOutcome } from '../store/types.js';
import { authFailureBucketKey, authFailuresHeldOff, presentedKeyHash, unauthorizedMessage } from './auth.js';
import { readJsonBody } from './jsonBody.js';
import { rateLimitHeaders } from './rateLimitHeaders.js';

/**
 * Whether the request's route authenticates and rate-limits itself (the one-round-trip create,
 * route config `authorizesInStore`): the app's key and rate-limit hooks leave it alone.
 */
export function authorizesInStore(request: FastifyRequest): boolean {
  return (request.routeOptions.config as { authorizesInStore?: boolean }).authorizesInStore === true;
}

export type CreateAuthorized = (attempt: AuthorizedCallAttempt) => Promise<AuthorizedCallOutcome>;

export interface AuthorizedCreateOptions {
  createAuthorized: CreateAuthorized;
  authFailurePolicy: RatePolicy;
  defaultRatePolicy: RatePolicy;
  /** Records when a key was last used; at most once per `lastUsedWriteIntervalMs` per key here. */
  touchLastUsed: (keyId: string, atIso: string) => Promise<void>;
  logger: Logger;
  lastUsedWriteIntervalMs?: number;
}

/** How many keys a process remembers having written last_used_at for. */
const lastUsedKeysMax = 10_000;

/**
 * POST /v1/calls/outbound where the store checks and writes a creation in one round trip
 * (PostgreSQL; issue 12). The pure steps (3–5: Content-Type, JSON, shape, phone format) run here
 * first; then one store call authenticates, rate-limits, checks the agent, the number and the
 * variables and writes the call with its job; the answer keeps DESIGN §1's order exactly: 429 for
 * an address held off, 401, 429 for the account, then the validation error found here, then 404,
 * 400, 400. Nothing is cached: the key and the agent are read in the statement that writes.
 */
export function createAuthorizedHandler(options: AuthorizedCreateOptions) {
  const writeIntervalMs = options.lastUsedWriteIntervalMs ?? 60_000;
  const lastUsedWrittenAtMs = new Map<string, number>();

  function noteUse(keyId: string): void {
    const nowMs = Date.now();
    if (nowMs - (lastUsedWrittenAtMs.get(keyId) ?? 0) < writeIntervalMs) return;
    if (!lastUsedWrittenAtMs.has(keyId) && lastUsedWrittenAtMs.size >= lastUsedKeysMax) {
      const oldest = lastUsedWrittenAtMs.keys().next();
      if (!oldest.done) lastUsedWrittenAtMs.delete(oldest.value);
    }
    lastUsedWrittenAtMs.set(keyId, nowMs);
    // Bookkeeping off the request's path (and not the common case: once a minute per key).
    options
      .touchLastUsed(keyId, new Date(nowMs).toISOString())
      .catch((error: unknown) => options.logger.warn({ err: error }, 'could not record a key use'));
  }

  /**
   * Runs the store's statement for this request (with the call to write, or none) and settles
   * steps 1 and 2: throws the 429 or 401 DESIGN §1 puts first, else sets `request.auth` and the
   * rate-limit headers and hands back what the statement found about the rest.
   */
  async function check(
    request: FastifyRequest,
    reply: FastifyReply,
    call: AuthorizedCallAttempt['call'],
  ): Promise<Exclude<AuthorizedCallOutcome, { kind: 'held_off' | 'unauthorized' | 'rate_limited' }>> {
    const outcome = await options.createAuthorized({
      keyHash: presentedKeyHash(request),
      authFailureBucket: authFailureBucketKey(request),
      authFailurePolicy: options.authFailurePolicy,
      defaultRatePolicy: options.defaultRatePolicy,
      call,
    });
    if (outcome.kind === 'held_off')
      throw authFailuresHeldOff(options.authFailurePolicy, outcome.authFailures);
    if (outcome.kind === 'unauthorized') {
      throw new AppError('unauthorized', unauthorizedMessage(request.raw.rawHeaders), {
        headers: rateLimitHeaders('auth_failures', options.authFailurePolicy, outcome.authFailures),
      });
    }
    const { caller } = outcome;
    request.auth = { account: caller.account, apiKeyId: caller.apiKeyId };
    noteUse(caller.apiKeyId);
    const headers = accountRateHeaders(caller, options.defaultRatePolicy);
    if (outcome.kind === 'rate_limited') {
      throw new AppError('rate_limited', 'too many requests; retry with exponential backoff', {
        headers: { ...headers, 'Retry-After': String(caller.rate.retryAfterS) },
      });
    }
    for (const [name, value] of Object.entries(headers)) reply.header(name, value);
    return outcome;
  }

  /** The create: the store's checks, then the error DESIGN §1 puts first, or the call. */
  async function create(
    request: FastifyRequest,
    reply: FastifyReply,
    validated: AppError | ReturnType<typeof parseOutboundCallRequest>,
  ): Promise<CallRecord> {
    const outcome = await check(request, reply, isAppError(validated) ? null : newCallFields(validated));
    switch (outcome.kind) {
      case 'request_refused':
        throw isAppError(validated) ? validated : new AppError('server_error', 'internal server error');
      case 'agent_not_found':
        throw agentNotFound(isAppError(validated) ? '' : validated.agent_id);
      case 'number_not_configured':
        throw numberNotConfigured();
      case 'variables_refused':
        throw outcome.problem;
      case 'created':
        return outcome.call;
    }
  }

  return {
    /**
     * The onRequest hook of every other /v1 route on such a store: the key, the address's failure
     * limit and the account's rate limit in one round trip (the same statement, nothing to write),
     * where the authenticator and the account limit made three or four.
     */
    async authorize(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      await check(request, reply, null);
    },

    /** The create route's handler: the pure checks, then the store's. */
    async handle(request: FastifyRequest, reply: FastifyReply): Promise<CallRecord> {
      let validated: AppError | ReturnType<typeof parseOutboundCallRequest>;
      try {
        validated = parseOutboundCallRequest(readJsonBody(request));
      } catch (error) {
        if (!isAppError(error)) throw error;
        validated = error;
      }
      return create(request, reply, validated);
    },

    /**
     * The route's error handler. A body Fastify refused while reading it (over 64 KiB, a length
     * that does not match) never reaches the handler, yet DESIGN §1 puts 401 and 429 before that
     * 400: the store's checks run for it first (no call to write), then the app's handler answers.
     */
    async handleError(
      app: FastifyInstance,
      error: FastifyError | AppError,
      request: FastifyRequest,
      reply: FastifyReply,
    ): Promise<unknown> {
      const refusedBody =
        !isAppError(error) && typeof error.code === 'string' && error.code.startsWith('FST_ERR_CTP_');
      if (refusedBody && request.auth === null) {
        try {
          await create(request, reply, new AppError('validation_error', 'request body refused'));
        } catch (checked) {
          if (!isAppError(checked) || checked.code !== 'validation_error') {
            return app.errorHandler(checked as AppError, request, reply);
          }
        }
      }
      return app.errorHandler(error, request, reply);
    },
  };
}

function accountRateHeaders(caller: AuthorizedCaller, defaultPolicy: RatePolicy): Record<string, string> {
  return rateLimitHeaders('account', caller.account.ratePolicy ?? defaultPolicy, caller.rate);
}

/** The one-round-trip handlers: the create route's, and the hook of every other /v1 route. */
export type StoreAuthorizedRequests = ReturnType<typeof createAuthorizedHandler>;
