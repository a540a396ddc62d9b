import type { FastifyInstance } from 'fastify';
import { variablesProblem } from '../domain/agentVariables.js';
import { AppError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import {
  newWebCallToken,
  parseWebCallConnectRequest,
  parseWebCallRequest,
  webCallTokenHash,
  webCallTokenTtlMs,
} from '../domain/webCalls.js';
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
export function registerWebCallRoutes(api: FastifyInstance, store: Store): void {
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
      };
    },
  );
}

/** The browser may call the connect route from the customer's own page (no cookies: the token is the credential). */
const corsHeaders = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'POST',
  'Access-Control-Allow-Headers': 'Content-Type',
  'Access-Control-Max-Age': '600',
};

/**
 * `POST /v1/web-calls/connect` (no API key: the token): the browser's complete SDP offer in, the
 * complete answer out — one request, since both sides gather ICE before they send (non-trickle).
 * The token is consumed once; then the call is claimed like a dialled one (live-call cap).
 */
export function registerWebCallConnectRoute(
  app: FastifyInstance,
  store: Store,
  starter: WebCallStarter | null,
): void {
  app.options(
    '/v1/web-calls/connect',
    { config: { public: true }, schema: { hide: true } },
    async (_request, reply) => reply.headers(corsHeaders).code(204).send(),
  );
  app.post(
    '/v1/web-calls/connect',
    {
      config: { public: true },
      schema: {
        summary: "Connect a web call's browser (SDP offer in, answer out)",
        operationId: 'connectWebCall',
        tags: ['calls'],
        response: {
          200: {
            type: 'object',
            required: ['call_id', 'sdp'],
            properties: { call_id: { type: 'string' }, sdp: { type: 'string' } },
          },
          ...errorResponses(400, 401, 409, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      reply.headers(corsHeaders);
      const body = parseWebCallConnectRequest(readJsonBody(request));
      if (!starter)
        throw new AppError('unavailable', 'web calls need a process that runs calls (role all or worker)');
      const used = await store.webCalls.consume(webCallTokenHash(body.token), new Date().toISOString());
      if ('refused' in used) throw refusedToken();
      const started = await starter.startWebCall(used.callId, body.sdp);
      return { call_id: started.callId, sdp: started.answerSdp };
    },
  );
}
