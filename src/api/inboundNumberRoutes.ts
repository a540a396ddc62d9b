import type { FastifyInstance } from 'fastify';
import { describePhoneNumber } from '../admin/numbers.js';
import { AppError } from '../domain/errors.js';
import type { InboundFallback } from '../domain/records.js';
import type { Store } from '../store/types.js';
import { authOf } from './auth.js';
import { readJsonBody } from './jsonBody.js';
import { numberSchema } from './numberAndWebhookRoutes.js';
import { errorResponses } from './schemas.js';

/** What calls to the number get (issue 40), checked at the edge. */
function inboundSettingsOf(body: unknown): {
  agentId: string | null;
  fallback: InboundFallback;
  maxLiveCalls: number | null;
} {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new AppError('validation_error', 'request body must be a JSON object');
  const fields = body as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (!['agent_id', 'fallback', 'max_live_calls'].includes(key))
      throw new AppError('validation_error', `unknown field: ${key.slice(0, 60)}`);
  }
  const agentId = fields.agent_id ?? null;
  if (agentId !== null && (typeof agentId !== 'string' || agentId.length > 64))
    throw new AppError('validation_error', 'agent_id must be an agent id or null');
  const fallback = fields.fallback ?? 'refuse';
  if (fallback !== 'refuse' && fallback !== 'voicemail')
    throw new AppError('validation_error', 'fallback must be refuse or voicemail');
  const maxLiveCalls = fields.max_live_calls ?? null;
  if (
    maxLiveCalls !== null &&
    (!Number.isInteger(maxLiveCalls) || (maxLiveCalls as number) < 1 || (maxLiveCalls as number) > 10_000)
  )
    throw new AppError('validation_error', 'max_live_calls must be an integer from 1 to 10000, or null');
  return { agentId, fallback, maxLiveCalls: maxLiveCalls as number | null };
}

/** PUT /v1/numbers/{number}/inbound: the agent that answers calls to a number (extension, issue 40). */
export function registerInboundNumberRoutes(app: FastifyInstance, store: Store): void {
  app.put<{ Params: { number: string } }>(
    '/numbers/:number/inbound',
    {
      schema: {
        summary: 'Set who answers calls to a number (extension)',
        description:
          'The inbound agent answers calls to the number; a callback (the caller was called from this number ' +
          'within the callback window) is answered by the agent that called instead. Without an agent the call ' +
          'is refused (`fallback: refuse`, SIP 480) or the caller may leave a message (`voicemail`). ' +
          '`max_live_calls` caps live calls on the number, inbound and outbound together.',
        operationId: 'setNumberInbound',
        tags: ['numbers'],
        params: {
          type: 'object',
          required: ['number'],
          properties: { number: { type: 'string', maxLength: 20 } },
        },
        response: { 200: numberSchema, ...errorResponses(400, 401, 404, 429, 500) },
      },
      config: {
        requestBody: {
          type: 'object',
          additionalProperties: false,
          properties: {
            agent_id: { type: ['string', 'null'] },
            fallback: { type: 'string', enum: ['refuse', 'voicemail'] },
            max_live_calls: { type: ['integer', 'null'], minimum: 1 },
          },
        },
      },
    },
    async (request) => {
      const accountId = authOf(request).account.id;
      const settings = inboundSettingsOf(readJsonBody(request));
      if (settings.agentId !== null && !(await store.agents.get(accountId, settings.agentId)))
        throw new AppError('not_found', `agent ${settings.agentId.slice(0, 64)} not found`);
      const record = await store.inboundCalls.setNumberInbound(accountId, request.params.number, {
        inboundAgentId: settings.agentId,
        inboundFallback: settings.fallback,
        maxLiveCalls: settings.maxLiveCalls,
      });
      if (!record)
        throw new AppError(
          'not_found',
          `${request.params.number.slice(0, 20)} is not configured in this account`,
        );
      return describePhoneNumber(record);
    },
  );
}
