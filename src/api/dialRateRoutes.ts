import type { FastifyInstance } from 'fastify';
import {
  callsPerSecondMax,
  describeDialRate,
  describeQuietHours,
  setDialRate,
  setQuietHours,
} from '../admin/callingRules.js';
import { AppError } from '../domain/errors.js';
import { isPlainObject } from '../domain/outboundCallRequest.js';
import { dialRateScopes, type Store } from '../store/types.js';
import { authOf } from './auth.js';
import { readJsonBody } from './jsonBody.js';
import { errorResponses } from './schemas.js';

const tags = ['calls'];
const rateSchema = {
  type: 'object',
  required: ['scope', 'subject', 'calls_per_second'],
  properties: {
    scope: { type: 'string', enum: [...dialRateScopes] },
    subject: {
      type: 'string',
      description: 'The caller ID (E.164) or the trunk name',
      examples: ['+15550009999'],
    },
    calls_per_second: { type: ['integer', 'null'], minimum: 1, maximum: callsPerSecondMax },
  },
} as const;

/** Caps on how fast calls leave a caller ID or a trunk, for every call of the account. */
export function registerDialRateRoutes(app: FastifyInstance, store: Store): void {
  app.get(
    '/dial-rates',
    {
      schema: {
        summary: 'The caps on calls per second by caller ID and by trunk (extension)',
        operationId: 'listDialRates',
        tags,
        response: {
          200: {
            type: 'object',
            required: ['data'],
            properties: { data: { type: 'array', items: rateSchema } },
          },
          ...errorResponses(401, 429, 500),
        },
      },
    },
    async (request) => ({
      data: (await store.dialRates.list(authOf(request).account.id)).map(describeDialRate),
    }),
  );

  app.put(
    '/dial-rates',
    {
      schema: {
        summary: 'Set or remove (null) the cap on calls per second of one caller ID or trunk (extension)',
        description:
          'Every call counts, single or campaign; a call over the cap waits in the queue. The buckets are shared by all worker processes.',
        operationId: 'setDialRate',
        tags,
        response: { 200: rateSchema, ...errorResponses(400, 401, 404, 422, 429, 500) },
      },
      config: { requestBody: rateSchema },
    },
    async (request) => {
      const described = await setDialRate(store, authOf(request).account.id, readJsonBody(request));
      request.log.info(
        { scope: described.scope, callsPerSecond: described.calls_per_second },
        'dial rate set',
      );
      return described;
    },
  );

  const quietSchema = {
    type: 'object',
    required: ['quiet_hours'],
    properties: {
      quiet_hours: {
        type: ['object', 'null'],
        required: ['start', 'end', 'time_zone'],
        description:
          "No call starts from start to end, local to the callee (the number's zone, else time_zone); null: none",
        properties: {
          start: { type: 'string', examples: ['21:00'] },
          end: { type: 'string', examples: ['08:00'] },
          time_zone: { type: 'string', examples: ['America/New_York'] },
        },
      },
    },
  } as const;

  app.get(
    '/quiet-hours',
    {
      schema: {
        summary: "The account's quiet hours (extension)",
        operationId: 'getQuietHours',
        tags,
        response: { 200: quietSchema, ...errorResponses(401, 429, 500) },
      },
    },
    async (request) => describeQuietHours(await store.dialRates.quietHours(authOf(request).account.id)),
  );

  app.put(
    '/quiet-hours',
    {
      schema: {
        summary: 'Set or remove (null) the quiet hours of every call of the account (extension)',
        description:
          'A call asked for during them is accepted as usual and stays queued until they end in the callee zone. They override the deployment default (CALLWRIGHT_QUIET_HOURS).',
        operationId: 'setQuietHours',
        tags,
        response: { 200: quietSchema, ...errorResponses(400, 401, 429, 500) },
      },
      config: { requestBody: quietSchema },
    },
    async (request) => {
      const body = readJsonBody(request);
      if (!isPlainObject(body) || Object.keys(body).length !== 1 || body.quiet_hours === undefined)
        throw new AppError(
          'validation_error',
          'the body is {"quiet_hours": {"start", "end", "time_zone"} or null}',
        );
      const described = await setQuietHours(store, authOf(request).account.id, body.quiet_hours);
      const rule = described.quiet_hours;
      request.log.info({ quietHours: rule ? `${rule.start}-${rule.end}` : null }, 'quiet hours set');
      return described;
    },
  );
}
