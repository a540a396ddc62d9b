import type { FastifyInstance } from 'fastify';
import { listEvents, resendEvent, showEvent } from '../admin/webhooks.js';
import { eventStatuses } from '../domain/records.js';
import { webhookEventTypes } from '../domain/statusEvents.js';
import type { Store } from '../store/types.js';
import { authOf } from './auth.js';
import { errorResponses, pageQuerySchema, pageSchema } from './schemas.js';

const nullableTimestamp = { type: ['string', 'null'], format: 'date-time' } as const;

const eventSummaryProperties = {
  event_id: { type: 'string', examples: ['evt_01JF3Z8V0Q4T7N5W2X9Y6B1C3D'] },
  type: { type: 'string', enum: [...webhookEventTypes] },
  call_id: { type: ['string', 'null'], description: "The call it is about; null for a campaign's event." },
  campaign_id: { type: ['string', 'null'], description: 'The campaign it is about (`campaign.completed`).' },
  status: {
    type: 'string',
    enum: [...eventStatuses],
    description:
      'pending: a delivery is scheduled; parked: waiting for an enabled endpoint; delivered; failed: retries exhausted.',
  },
  attempts: { type: 'integer' },
  next_attempt_at: nullableTimestamp,
  delivered_at: nullableTimestamp,
  created_at: { type: 'string', format: 'date-time' },
} as const;

const eventSummarySchema = {
  type: 'object',
  required: Object.keys(eventSummaryProperties),
  properties: eventSummaryProperties,
} as const;

const eventDetailSchema = {
  type: 'object',
  required: [...Object.keys(eventSummaryProperties), 'payload', 'attempt_log'],
  properties: {
    ...eventSummaryProperties,
    payload: { type: 'object', additionalProperties: true, description: 'The body exactly as it is sent.' },
    attempt_log: {
      type: 'array',
      items: {
        type: 'object',
        required: ['attempted_at', 'url', 'status_code', 'latency_ms', 'response_excerpt', 'error'],
        properties: {
          attempted_at: { type: 'string', format: 'date-time' },
          url: { type: 'string' },
          status_code: { type: ['integer', 'null'] },
          latency_ms: { type: 'integer' },
          response_excerpt: { type: 'string' },
          error: { type: ['string', 'null'] },
        },
      },
    },
  },
} as const;

const eventListSchema = pageSchema(eventSummarySchema);

const eventIdParamsSchema = {
  type: 'object',
  required: ['event_id'],
  properties: { event_id: { type: 'string', maxLength: 64 } },
} as const;

/** The events resource (extension): the account's call.completed events and their delivery log. */
export function registerEventRoutes(app: FastifyInstance, store: Store, wakeDelivery: () => void): void {
  app.get<{ Querystring: { limit: number; cursor?: string } }>(
    '/events',
    {
      schema: {
        summary: 'List webhook events, newest first (extension)',
        operationId: 'listEvents',
        tags: ['events'],
        querystring: pageQuerySchema,
        response: { 200: eventListSchema, ...errorResponses(400, 401, 429, 500) },
      },
    },
    async (request) => {
      const caller = authOf(request);
      return listEvents(store, caller.account.id, {
        limit: request.query.limit,
        cursor: request.query.cursor,
      });
    },
  );

  app.get<{ Params: { event_id: string } }>(
    '/events/:event_id',
    {
      schema: {
        summary: 'Get a webhook event with its delivery attempts (extension)',
        operationId: 'getEvent',
        tags: ['events'],
        params: eventIdParamsSchema,
        response: { 200: eventDetailSchema, ...errorResponses(400, 401, 404, 429, 500) },
      },
    },
    async (request) => showEvent(store, authOf(request).account.id, request.params.event_id),
  );

  app.post<{ Params: { event_id: string } }>(
    '/events/:event_id/resend',
    {
      schema: {
        summary: 'Send a webhook event again (extension)',
        description:
          'Schedules one more delivery now, with the same event id and body. 409 while an attempt is in flight.',
        operationId: 'resendEvent',
        tags: ['events'],
        params: eventIdParamsSchema,
        response: { 200: eventSummarySchema, ...errorResponses(400, 401, 404, 409, 429, 500) },
      },
    },
    async (request) => {
      const resent = await resendEvent(store, authOf(request).account.id, request.params.event_id);
      wakeDelivery();
      return resent;
    },
  );
}
