import type { FastifyInstance } from 'fastify';
import { addPhoneNumber, describePhoneNumber, removePhoneNumber, sandboxRoute } from '../admin/numbers.js';
import {
  describeWebhookEndpoint,
  getWebhookEndpoint,
  openWebhookEndpoint,
  rotateWebhookSecret,
  setWebhookEndpoint,
  setWebhookEventTypes,
} from '../admin/webhooks.js';
import { AppError } from '../domain/errors.js';
import { isPlainObject } from '../domain/outboundCallRequest.js';
import { webhookEventTypes } from '../domain/statusEvents.js';
import type { SecretBox } from '../secrets/secretBox.js';
import type { Store } from '../store/types.js';
import { authOf } from './auth.js';
import { readJsonBody } from './jsonBody.js';
import { errorResponses } from './schemas.js';

export const numberSchema = {
  type: 'object',
  required: ['number', 'route', 'created_at'],
  properties: {
    number: { type: 'string', examples: ['+14155550123'] },
    route: {
      type: 'string',
      description: '`sandbox`, or the id of the SIP trunk the number leaves through.',
    },
    inbound_agent_id: {
      type: ['string', 'null'],
      description: 'The agent that answers calls to the number (issue 40); null: `inbound_fallback` applies.',
    },
    inbound_fallback: { type: 'string', enum: ['refuse', 'voicemail'] },
    max_live_calls: { type: ['integer', 'null'], description: 'Live calls on the number, both directions.' },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

const webhookSchema = {
  type: 'object',
  required: ['url', 'secret', 'enabled'],
  properties: {
    url: { type: 'string' },
    secret: {
      type: 'string',
      description: 'The Standard Webhooks signing secret (`whsec_…`), to verify deliveries and tool calls.',
    },
    enabled: { type: 'boolean' },
    disabled_reason: { type: ['string', 'null'] },
    events: {
      type: 'array',
      items: { type: 'string', enum: [...webhookEventTypes] },
      description: 'The event types it receives: `call.completed` always, the others once asked for.',
    },
    previous_secret_expires_at: {
      type: ['string', 'null'],
      description: 'After a rotation, the old secret also signs until then (24 h).',
    },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** The string fields of a JSON object body, refusing any other field. */
function stringFields(body: unknown, allowed: readonly string[]): Record<string, string> {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new AppError('validation_error', 'request body must be a JSON object');
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(body)) {
    if (!allowed.includes(key)) throw new AppError('validation_error', `unknown field: ${key.slice(0, 60)}`);
    if (typeof value !== 'string') throw new AppError('validation_error', `${key} must be a string`);
    out[key] = value;
  }
  return out;
}

/**
 * Caller IDs and the webhook endpoint over the API (extension, issue 17's management API). API
 * keys stay a dashboard and command-line matter, as the specification says.
 */
export function registerNumberAndWebhookRoutes(
  app: FastifyInstance,
  store: Store,
  secretBox: SecretBox | null,
  options: { webhookAllowPrivate: boolean },
): void {
  app.post(
    '/numbers',
    {
      schema: {
        summary: 'Add a caller ID the account may use as from_number (extension)',
        operationId: 'addNumber',
        tags: ['numbers'],
        response: { 200: numberSchema, ...errorResponses(400, 401, 409, 422, 429, 500) },
      },
      config: {
        requestBody: {
          type: 'object',
          required: ['number'],
          additionalProperties: false,
          properties: {
            number: { type: 'string', description: 'E.164' },
            route: { type: 'string', description: '`sandbox` (default) or the name of a SIP trunk' },
          },
        },
      },
    },
    async (request) => {
      const fields = stringFields(readJsonBody(request), ['number', 'route']);
      if (fields.number === undefined) throw new AppError('validation_error', 'number is required');
      const record = await addPhoneNumber(
        store,
        authOf(request).account.id,
        fields.number,
        fields.route ?? sandboxRoute,
      );
      return describePhoneNumber(record);
    },
  );

  app.get(
    '/numbers',
    {
      schema: {
        summary: "List the account's caller IDs (extension)",
        operationId: 'listNumbers',
        tags: ['numbers'],
        response: {
          200: {
            type: 'object',
            required: ['data'],
            properties: { data: { type: 'array', items: numberSchema } },
          },
          ...errorResponses(401, 429, 500),
        },
      },
    },
    async (request) => ({
      data: (await store.numbers.list(authOf(request).account.id)).map(describePhoneNumber),
    }),
  );

  app.delete<{ Params: { number: string } }>(
    '/numbers/:number',
    {
      schema: {
        summary: 'Remove a caller ID (extension)',
        operationId: 'removeNumber',
        tags: ['numbers'],
        params: {
          type: 'object',
          required: ['number'],
          properties: { number: { type: 'string', maxLength: 20 } },
        },
        response: {
          200: {
            type: 'object',
            required: ['number', 'deleted'],
            properties: { number: { type: 'string' }, deleted: { type: 'boolean', enum: [true] } },
          },
          ...errorResponses(401, 404, 429, 500),
        },
      },
    },
    async (request) => {
      await removePhoneNumber(store, authOf(request).account.id, request.params.number);
      return { number: request.params.number, deleted: true };
    },
  );

  const box = (): SecretBox => {
    if (!secretBox) throw new AppError('unavailable', 'this process cannot open secrets');
    return secretBox;
  };

  app.get(
    '/webhook',
    {
      schema: {
        summary: "The account's webhook endpoint and its signing secret (extension)",
        operationId: 'getWebhook',
        tags: ['webhook'],
        response: { 200: webhookSchema, ...errorResponses(401, 404, 429, 500, 503) },
      },
    },
    async (request) =>
      describeWebhookEndpoint(await getWebhookEndpoint(store, box(), authOf(request).account.id)),
  );

  app.put(
    '/webhook',
    {
      schema: {
        summary: 'Set the webhook endpoint; a new signing secret comes back (extension)',
        description:
          'The URL is checked like every outbound address: https or http, and no private, loopback or link-local ' +
          'address unless the operator allows it (CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE).',
        operationId: 'setWebhook',
        tags: ['webhook'],
        response: { 200: webhookSchema, ...errorResponses(400, 401, 429, 500, 503) },
      },
      config: {
        requestBody: {
          type: 'object',
          required: ['url'],
          additionalProperties: false,
          properties: { url: { type: 'string', maxLength: 2_048 } },
        },
      },
    },
    async (request) => {
      const fields = stringFields(readJsonBody(request), ['url']);
      if (fields.url === undefined) throw new AppError('validation_error', 'url is required');
      const endpoint = await setWebhookEndpoint(store, box(), authOf(request).account.id, fields.url, {
        allowPrivate: options.webhookAllowPrivate,
      });
      request.log.info('webhook endpoint set over the API');
      return describeWebhookEndpoint(endpoint);
    },
  );

  app.put(
    '/webhook/events',
    {
      schema: {
        summary: 'Choose the events the endpoint receives besides call.completed (extension)',
        description:
          '`call.ringing`, `call.answered`, `call.transferred` and `campaign.completed` are sent only once named ' +
          'here; `call.completed` is always sent. The list replaces the previous one; the secret is unchanged.',
        operationId: 'setWebhookEvents',
        tags: ['webhook'],
        response: { 200: webhookSchema, ...errorResponses(400, 401, 404, 429, 500, 503) },
      },
      config: {
        requestBody: {
          type: 'object',
          required: ['events'],
          additionalProperties: false,
          properties: {
            events: {
              type: 'array',
              maxItems: webhookEventTypes.length,
              items: { type: 'string', enum: [...webhookEventTypes] },
              examples: [['call.answered', 'campaign.completed']],
            },
          },
        },
      },
    },
    async (request) => {
      const body = readJsonBody(request);
      if (!isPlainObject(body)) throw new AppError('validation_error', 'request body must be a JSON object');
      const { events, ...rest } = body;
      const unknown = Object.keys(rest)[0];
      if (unknown !== undefined)
        throw new AppError('validation_error', `unknown field: ${unknown.slice(0, 60)}`);
      if (events === undefined) throw new AppError('validation_error', 'events is required');
      const updated = await setWebhookEventTypes(store, authOf(request).account.id, events);
      request.log.info('webhook event types set over the API');
      return describeWebhookEndpoint(openWebhookEndpoint(updated, box()));
    },
  );

  app.post(
    '/webhook/rotate-secret',
    {
      schema: {
        summary: 'A new signing secret; the old one also signs for 24 h (extension)',
        operationId: 'rotateWebhookSecret',
        tags: ['webhook'],
        response: { 200: webhookSchema, ...errorResponses(401, 404, 429, 500, 503) },
      },
    },
    async (request) => {
      const endpoint = await rotateWebhookSecret(store, box(), authOf(request).account.id);
      request.log.info('webhook secret rotated over the API');
      return describeWebhookEndpoint(endpoint);
    },
  );
}
