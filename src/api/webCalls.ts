import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { variablesProblem } from '../domain/agentVariables.js';
import { AppError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import type { RatePolicy } from '../domain/rateLimit.js';
import {
  newWebCallToken,
  parseWebCallConnectRequest,
  parseWebCallOrigins,
  parseWebCallRequest,
  type WebIceServer,
  webCallOriginAllowed,
  webCallTokenHash,
  webCallTokenTtlMs,
} from '../domain/webCalls.js';
import { addressLimitKey } from '../limits/clientAddress.js';
import type { RateLimiter } from '../limits/rateLimiter.js';
import type { Store } from '../store/types.js';
import { authOf } from './auth.js';
import { readJsonBody } from './jsonBody.js';
import { errorResponses } from './schemas.js';

/** What starts a web call once its browser is connected: the call workers of this process. */
export interface WebCallStarter {
  /** Claims the call, answers the offer and runs the call; resolves to the SDP answer. */
  startWebCall(callId: string, offerSdp: string): Promise<{ callId: string; answerSdp: string }>;
}

const refusedToken = () => new AppError('unauthorized', 'the web call token is unknown, used or expired');

/**
 * `POST /v1/web-calls` (API key, the customer's server): a call record with channel 'web' and a
 * one-use connection token for it, valid for two minutes; only the token's hash is stored.
 */
export function registerWebCallRoutes(
  api: FastifyInstance,
  store: Store,
  iceServers: readonly WebIceServer[],
): void {
  api.post(
    '/web-calls',
    {
      schema: {
        summary: 'Create a web call and its one-use connection token',
        description:
          'Server side, with the API key: the browser then sends the token with its SDP offer to POST /v1/web-calls/connect. The token is valid once, for 120 s.',
        operationId: 'createWebCall',
        tags: ['calls'],
        response: {
          200: {
            type: 'object',
            required: ['call_id', 'agent_id', 'channel', 'status', 'token', 'expires_at', 'created_at'],
            properties: {
              call_id: { type: 'string' },
              agent_id: { type: 'string' },
              channel: { type: 'string', enum: ['web'] },
              status: { type: 'string' },
              token: { type: 'string', description: 'Shown once; only its hash is stored.' },
              expires_at: { type: 'string', format: 'date-time' },
              created_at: { type: 'string', format: 'date-time' },
              metadata: { type: ['object', 'null'], additionalProperties: true },
              ice_servers: {
                type: 'array',
                description: 'STUN/TURN servers for the page’s RTCPeerConnection (the service’s own).',
                items: {
                  type: 'object',
                  required: ['urls'],
                  properties: {
                    urls: { type: 'string' },
                    username: { type: 'string' },
                    credential: { type: 'string' },
                  },
                },
              },
            },
          },
          ...errorResponses(400, 401, 404, 429, 500),
        },
      },
    },
    async (request) => {
      const caller = authOf(request);
      const body = parseWebCallRequest(readJsonBody(request));
      const accountId = caller.account.id;
      const agent = await store.agents.get(accountId, body.agent_id);
      if (!agent?.active)
        throw new AppError('not_found', `agent ${body.agent_id} does not exist or is inactive`);
      const variables = variablesProblem(agent.variables, body.variables);
      if (variables) throw variables;
      const token = newWebCallToken();
      const now = new Date();
      const expiresAt = new Date(now.getTime() + webCallTokenTtlMs).toISOString();
      const call = await store.webCalls.create({
        id: newId('call'),
        accountId,
        agentId: agent.id,
        apiKeyId: caller.apiKeyId,
        variables: body.variables ?? null,
        metadata: body.metadata ?? null,
        tokenHash: webCallTokenHash(token),
        createdAt: now.toISOString(),
        expiresAt,
      });
      return {
        call_id: call.id,
        agent_id: call.agentId,
        channel: call.channel,
        status: call.status,
        token,
        expires_at: expiresAt,
        created_at: call.createdAt,
        metadata: body.metadata ?? null,
        ice_servers: iceServers,
      };
    },
  );
  const originsSchema = {
    type: 'object',
    required: ['origins'],
    properties: { origins: { type: 'array', items: { type: 'string' } } },
  } as const;
  api.get(
    '/web-calls/origins',
    {
      schema: {
        summary: 'The origins whose pages may connect this account’s web calls',
        operationId: 'getWebCallOrigins',
        tags: ['calls'],
        response: { 200: originsSchema, ...errorResponses(401, 429, 500) },
      },
    },
    async (request) => ({ origins: await store.webCalls.allowedOrigins(authOf(request).account.id) }),
  );
  api.put(
    '/web-calls/origins',
    {
      schema: {
        summary: 'Replace the origins whose pages may connect this account’s web calls',
        description:
          'A browser connects a web call only from the service’s own pages or one of these origins (https://host[:port]; plain http only for localhost). None by default.',
        operationId: 'setWebCallOrigins',
        tags: ['calls'],
        response: { 200: originsSchema, ...errorResponses(400, 401, 429, 500) },
      },
    },
    async (request) => {
      const origins = parseWebCallOrigins(readJsonBody(request));
      const accountId = authOf(request).account.id;
      await store.webCalls.setAllowedOrigins(accountId, origins, new Date().toISOString());
      return { origins };
    },
  );
}

/**
 * The browser calls the connect route from the customer's own page (no cookies: the token is the
 * credential). CORS lets any page read the answer, so that a refused page learns why; whether the
 * page's origin may connect is decided here, per account, before the token is used.
 */
function corsHeaders(origin: string | undefined): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': origin ?? '*',
    'Access-Control-Allow-Methods': 'POST',
    'Access-Control-Allow-Headers': 'Content-Type',
    'Access-Control-Max-Age': '600',
    Vary: 'Origin',
  };
}

export interface WebCallConnectOptions {
  starter: WebCallStarter | null;
  limiter: RateLimiter;
  /** Connections per client address (CALLWRIGHT_WEB_CALL_CONNECT_LIMIT): enough for people, not a scanner. */
  perAddress: RatePolicy;
  /** The service's own origin (CALLWRIGHT_PUBLIC_URL): its pages (the dashboard's Talk) may connect. */
  serviceOrigin: string;
}

/**
 * `POST /v1/web-calls/connect` (no API key: the token): the browser's complete SDP offer in, the
 * complete answer out — one request, since both sides gather ICE before they send (non-trickle).
 * In order: the client address's rate, the token's owner, the page's origin and the agent the page
 * asked for (a refusal here leaves the token unused), then the token is consumed once and the call
 * is claimed like a dialled one (live-call cap).
 */
export function registerWebCallConnectRoute(
  app: FastifyInstance,
  store: Store,
  options: WebCallConnectOptions,
): void {
  const { starter, limiter, perAddress, serviceOrigin } = options;
  const originOf = (headers: Record<string, unknown>) =>
    typeof headers.origin === 'string' ? headers.origin : undefined;
  app.options(
    '/v1/web-calls/connect',
    { config: { public: true }, schema: { hide: true } },
    async (request, reply) =>
      reply
        .headers(corsHeaders(originOf(request.headers)))
        .code(204)
        .send(),
  );
  app.get(
    '/v1/web-calls/sdk.js',
    { config: { public: true }, schema: { hide: true } },
    async (_request, reply) => {
      webSdkSource ??= readFileSync(new URL('../../dist/web/index.js', import.meta.url), 'utf8');
      return reply
        .headers({
          'Content-Type': 'text/javascript; charset=utf-8',
          'Cache-Control': 'public, max-age=300',
          'Access-Control-Allow-Origin': '*',
        })
        .send(webSdkSource);
    },
  );
  app.post(
    '/v1/web-calls/connect',
    {
      config: { public: true },
      schema: {
        summary: "Connect a web call's browser (SDP offer in, answer out)",
        description:
          'No API key: the one-use token from POST /v1/web-calls. 403 when the page’s Origin is not allowed (PUT /v1/web-calls/origins) or agent_id names another agent than the token’s; the token stays unused then.',
        operationId: 'connectWebCall',
        tags: ['calls'],
        response: {
          200: {
            type: 'object',
            required: ['call_id', 'sdp'],
            properties: { call_id: { type: 'string' }, sdp: { type: 'string' } },
          },
          ...errorResponses(400, 401, 403, 409, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const origin = originOf(request.headers);
      reply.headers(corsHeaders(origin));
      const body = parseWebCallConnectRequest(readJsonBody(request));
      if (!starter)
        throw new AppError('unavailable', 'web calls need a process that runs calls (role all or worker)');
      const rate = await limiter.take(`web-call-connect:ip:${addressLimitKey(request.ip)}`, perAddress);
      if (!rate.allowed) {
        throw new AppError('rate_limited', 'too many web call connections from this address', {
          headers: { 'Retry-After': String(rate.retryAfterS) },
        });
      }
      const tokenHash = webCallTokenHash(body.token);
      const owner = await store.webCalls.tokenOwner(tokenHash);
      if (!owner) throw refusedToken();
      if (
        !webCallOriginAllowed(origin, owner.allowedOrigins, {
          origin: serviceOrigin,
          requestHost: request.headers.host,
        })
      ) {
        throw new AppError(
          'forbidden',
          'this page’s origin may not connect the account’s web calls (PUT /v1/web-calls/origins)',
        );
      }
      if (body.agent_id !== undefined && body.agent_id !== owner.agentId)
        throw new AppError('forbidden', 'the web call token is for another agent');
      const used = await store.webCalls.consume(tokenHash, new Date().toISOString());
      if ('refused' in used) throw refusedToken();
      const started = await starter.startWebCall(used.callId, body.sdp);
      return { call_id: started.callId, sdp: started.answerSdp };
    },
  );
}

/** The browser SDK (`callwright/web`, built to dist/web), read once when first asked for. */
let webSdkSource: string | undefined;
