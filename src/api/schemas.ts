import { callStatuses, endReasons } from '../domain/callStatus.js';
import { outboundCallLimits } from '../domain/outboundCallRequest.js';
import { errorResponseSchema } from './errors.js';

/**
 * JSON Schemas of the routes. Responses are serialised through them (nothing outside a schema
 * leaves), and the OpenAPI document is generated from them.
 */

const nullableString = { type: ['string', 'null'] } as const;
const isoTimestamp = { type: 'string', format: 'date-time' } as const;
const nullableTimestamp = { type: ['string', 'null'], format: 'date-time' } as const;
const e164 = { type: 'string', pattern: '^\\+[1-9][0-9]{1,14}$', examples: ['+14155550123'] } as const;
const variableValue = { type: ['string', 'number', 'boolean'] } as const;

export const outboundCallRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['agent_id', 'from_number', 'to_number'],
  properties: {
    agent_id: { type: 'string', minLength: 1, maxLength: outboundCallLimits.idMaxChars },
    from_number: { ...e164, description: 'Caller ID; must be configured in the account.' },
    to_number: { ...e164, description: 'Number to call.' },
    first_message: { type: 'string', maxLength: outboundCallLimits.firstMessageMaxChars },
    context: { type: 'string', maxLength: outboundCallLimits.contextMaxChars },
    variables: {
      type: 'object',
      maxProperties: outboundCallLimits.variablesMaxKeys,
      propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]{0,63}$' },
      additionalProperties: {
        oneOf: [
          { type: 'string', maxLength: outboundCallLimits.variableValueMaxChars },
          { type: 'number' },
          { type: 'boolean' },
        ],
      },
    },
  },
} as const;

export const createdCallSchema = {
  type: 'object',
  required: ['call_id', 'status', 'agent_id', 'to_number', 'from_number', 'created_at'],
  additionalProperties: false,
  properties: {
    call_id: { type: 'string', examples: ['call_01JF3Z8V0Q4T7N5W2X9Y6B1C3D'] },
    status: { type: 'string', enum: ['queued'] },
    agent_id: { type: 'string' },
    to_number: { type: 'string' },
    from_number: { type: 'string' },
    created_at: isoTimestamp,
  },
} as const;

export const callResourceSchema = {
  type: 'object',
  required: [
    'call_id',
    'status',
    'agent_id',
    'to_number',
    'from_number',
    'created_at',
    'timeline',
    'transcript',
    'extracted_data',
  ],
  properties: {
    call_id: { type: 'string' },
    status: { type: 'string', enum: [...callStatuses] },
    agent_id: { type: 'string' },
    to_number: { type: 'string' },
    from_number: { type: 'string' },
    created_at: isoTimestamp,
    first_message: nullableString,
    context: nullableString,
    variables: { type: ['object', 'null'], additionalProperties: variableValue },
    end_reason: { type: ['string', 'null'], enum: [...endReasons, null] },
    answered_by: { type: ['string', 'null'], enum: ['human', 'machine', 'unknown', null] },
    dialed_at: nullableTimestamp,
    answered_at: nullableTimestamp,
    ended_at: nullableTimestamp,
    duration_seconds: { type: ['number', 'null'] },
    timeline: {
      type: 'array',
      items: {
        type: 'object',
        required: ['status', 'at'],
        properties: { status: { type: 'string', enum: [...callStatuses] }, at: isoTimestamp },
      },
    },
    transcript: {
      type: 'array',
      items: {
        type: 'object',
        required: ['role', 'text', 'start_ms', 'end_ms'],
        properties: {
          role: { type: 'string', enum: ['agent', 'callee'] },
          text: { type: 'string' },
          start_ms: { type: 'integer' },
          end_ms: { type: 'integer' },
        },
      },
    },
    recording_url: nullableString,
    extracted_data: { type: 'object', additionalProperties: true },
    metrics: { type: ['object', 'null'], additionalProperties: true },
  },
} as const;

export const callListSchema = {
  type: 'object',
  required: ['data', 'has_more', 'next_cursor'],
  properties: {
    data: { type: 'array', items: callResourceSchema },
    has_more: { type: 'boolean' },
    next_cursor: nullableString,
  },
} as const;

export const callListQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    status: { type: 'string', enum: [...callStatuses] },
    cursor: { type: 'string', maxLength: 64 },
  },
} as const;

export const callIdParamsSchema = {
  type: 'object',
  required: ['call_id'],
  properties: { call_id: { type: 'string', maxLength: 64 } },
} as const;

export { errorResponseSchema };

/** Error responses each operation can give, for the generated reference. */
export function errorResponses(...statuses: number[]) {
  const descriptions: Record<number, string> = {
    400: 'validation_error: missing or invalid parameters',
    401: 'unauthorized: invalid, missing or revoked API key',
    403: 'forbidden: the signed link has expired',
    404: 'not_found: no such resource (for call creation: unknown or inactive agent)',
    409: 'conflict: the call has already ended',
    422: 'invalid_phone: a phone number is not E.164',
    429: 'rate_limited: too many requests; retry with exponential backoff after Retry-After',
    500: 'server_error: internal error',
  };
  return Object.fromEntries(
    statuses.map((status) => [status, { description: descriptions[status], ...errorResponseSchema }]),
  );
}
