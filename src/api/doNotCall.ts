import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.js';
import { isE164 } from '../domain/phone.js';
import type { DoNotCallEntry } from '../domain/records.js';
import type { Store } from '../store/types.js';
import { authOf } from './auth.js';
import { readJsonBody } from './jsonBody.js';
import { errorResponses, pageSchema } from './schemas.js';

/** Numbers one request may add. */
export const doNotCallLimits = { numbersPerRequest: 2_000, reasonMaxChars: 200, pageMax: 1_000 } as const;

const entrySchema = {
  type: 'object',
  required: ['number', 'reason', 'source', 'created_at'],
  properties: {
    number: { type: 'string', examples: ['+14155550123'] },
    reason: { type: ['string', 'null'] },
    source: {
      type: 'string',
      enum: ['api', 'dashboard', 'cli', 'callee_request'],
      description: '`callee_request`: the callee asked the agent to stop calling (the agent put it there).',
    },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

const addRequestSchema = {
  type: 'object',
  required: ['numbers'],
  additionalProperties: false,
  properties: {
    numbers: {
      type: 'array',
      minItems: 1,
      maxItems: doNotCallLimits.numbersPerRequest,
      items: { type: 'string', description: 'E.164' },
    },
    reason: { type: 'string', maxLength: doNotCallLimits.reasonMaxChars },
  },
} as const;

const numberParams = {
  type: 'object',
  required: ['number'],
  properties: { number: { type: 'string', maxLength: 20, description: 'E.164, e.g. +14155550123' } },
} as const;

function describe(entry: DoNotCallEntry) {
  return { number: entry.number, reason: entry.reason, source: entry.source, created_at: entry.createdAt };
}

function parseAddRequest(body: unknown): { numbers: string[]; reason: string | null } {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new AppError('validation_error', 'request body must be a JSON object');
  const fields = body as Record<string, unknown>;
  for (const key of Object.keys(fields))
    if (key !== 'numbers' && key !== 'reason')
      throw new AppError('validation_error', `unknown field: ${key.slice(0, 60)}`);
  const { numbers, reason } = fields;
  if (!Array.isArray(numbers) || numbers.length === 0 || numbers.length > doNotCallLimits.numbersPerRequest)
    throw new AppError(
      'validation_error',
      `numbers must be a list of 1 to ${doNotCallLimits.numbersPerRequest} E.164 numbers`,
    );
  for (const [index, number] of numbers.entries())
    if (typeof number !== 'string' || !isE164(number))
      throw new AppError('validation_error', `numbers[${index}] is not an E.164 number`);
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > doNotCallLimits.reasonMaxChars))
    throw new AppError(
      'validation_error',
      `reason must be a text of at most ${doNotCallLimits.reasonMaxChars} characters`,
    );
  return { numbers: [...new Set(numbers as string[])], reason: typeof reason === 'string' ? reason : null };
}

function checkedNumber(number: string): string {
  if (!isE164(number)) throw new AppError('validation_error', 'the number is not in E.164 format');
  return number;
}

/**
 * The account's do-not-call list (extension): numbers callwright never dials again. A call to one
 * is still accepted (the create response is the specification's) and ends at once, before any
 * INVITE, as `canceled` / `end_reason: do_not_call` with its `call.completed` event.
 */
export function registerDoNotCallRoutes(app: FastifyInstance, store: Store): void {
  app.post(
    '/do-not-call',
    {
      schema: {
        summary: 'Add numbers to the do-not-call list (extension)',
        description:
          'Up to 2,000 numbers per request (the body is at most 64 KiB). A number already listed keeps its first reason. Calls to a listed ' +
          'number are accepted and end at once, undialled, with `end_reason: do_not_call`.',
        operationId: 'addDoNotCall',
        tags: ['do-not-call'],
        response: {
          200: {
            type: 'object',
            required: ['added', 'already_listed'],
            properties: { added: { type: 'integer' }, already_listed: { type: 'integer' } },
          },
          ...errorResponses(400, 401, 429, 500),
        },
      },
      config: { requestBody: addRequestSchema },
    },
    async (request) => {
      const accountId = authOf(request).account.id;
      const { numbers, reason } = parseAddRequest(readJsonBody(request));
      const added = await store.doNotCall.add(
        accountId,
        numbers.map((number) => ({ number, reason, source: 'api' as const })),
      );
      request.log.info({ added, listed: numbers.length - added }, 'do-not-call numbers added');
      return { added, already_listed: numbers.length - added };
    },
  );

  app.get<{ Querystring: { limit?: string; cursor?: string } }>(
    '/do-not-call',
    {
      schema: {
        summary: 'List the do-not-call numbers, in order (extension)',
        operationId: 'listDoNotCall',
        tags: ['do-not-call'],
        querystring: {
          type: 'object',
          properties: {
            limit: { type: 'string', description: `1–${doNotCallLimits.pageMax}, default 100` },
            cursor: { type: 'string', description: 'next_cursor of the page before' },
          },
        },
        response: {
          200: pageSchema(entrySchema),
          ...errorResponses(400, 401, 429, 500),
        },
      },
    },
    async (request) => {
      const accountId = authOf(request).account.id;
      const limit = request.query.limit === undefined ? 100 : Number(request.query.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > doNotCallLimits.pageMax)
        throw new AppError(
          'validation_error',
          `limit must be a whole number from 1 to ${doNotCallLimits.pageMax}`,
        );
      const afterNumber =
        request.query.cursor === undefined
          ? undefined
          : Buffer.from(request.query.cursor, 'base64url').toString('utf8');
      if (afterNumber !== undefined && !isE164(afterNumber))
        throw new AppError('validation_error', 'cursor is not one this endpoint gave');
      const rows = await store.doNotCall.list(accountId, {
        limit: limit + 1,
        ...(afterNumber ? { afterNumber } : {}),
      });
      const page = rows.slice(0, limit);
      const hasMore = rows.length > limit;
      const last = page.at(-1);
      return {
        data: page.map(describe),
        next_cursor: hasMore && last ? Buffer.from(last.number).toString('base64url') : null,
        has_more: hasMore,
      };
    },
  );

  app.get<{ Params: { number: string } }>(
    '/do-not-call/:number',
    {
      schema: {
        summary: 'Whether a number is on the do-not-call list (extension)',
        operationId: 'getDoNotCall',
        tags: ['do-not-call'],
        params: numberParams,
        response: { 200: entrySchema, ...errorResponses(400, 401, 404, 429, 500) },
      },
    },
    async (request) => {
      const accountId = authOf(request).account.id;
      const number = checkedNumber(request.params.number);
      const entry = await store.doNotCall.get(accountId, number);
      if (!entry) throw new AppError('not_found', 'the number is not on the list');
      return describe(entry);
    },
  );

  app.delete<{ Params: { number: string } }>(
    '/do-not-call/:number',
    {
      schema: {
        summary: 'Take a number off the do-not-call list (extension)',
        operationId: 'removeDoNotCall',
        tags: ['do-not-call'],
        params: numberParams,
        response: {
          200: {
            type: 'object',
            required: ['number', 'deleted'],
            properties: { number: { type: 'string' }, deleted: { type: 'boolean', enum: [true] } },
          },
          ...errorResponses(400, 401, 404, 429, 500),
        },
      },
    },
    async (request) => {
      const accountId = authOf(request).account.id;
      const number = checkedNumber(request.params.number);
      if (!(await store.doNotCall.remove(accountId, number)))
        throw new AppError('not_found', 'the number is not on the list');
      request.log.info('a number was taken off the do-not-call list');
      return { number, deleted: true };
    },
  );
}
