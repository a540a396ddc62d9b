import { analysisStatuses } from '../domain/callAnalysis.js';
import { callStatuses, endReasons } from '../domain/callStatus.js';
import { errorStatusByCode } from '../domain/errors.js';
import { outboundCallLimits } from '../domain/outboundCallRequest.js';
import { transcriptEvents } from '../domain/records.js';
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
  title: 'OutboundCallRequest',
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
      description:
        'Values for variables the agent declares. 400 validation_error, naming the variable: a name the agent does not declare, a value of another type than the one declared (string, number, boolean), or a required variable left out that has no default.',
    },
  },
  examples: [
    {
      agent_id: 'agt_01JF3Z8V0Q4T7N5W2X9Y6B1C3D',
      from_number: '+14155550100',
      to_number: '+14155550123',
      first_message: 'Hi Ann, this is Riverside Dental calling about tomorrow.',
      variables: { customer_name: 'Ann', slot: 'Tuesday 10:30' },
    },
  ],
} as const;

const createdCallExample = {
  call_id: 'call_01JF3Z8V0Q4T7N5W2X9Y6B1C3D',
  status: 'queued',
  agent_id: 'agt_01JF3Z8V0Q4T7N5W2X9Y6B1C3D',
  to_number: '+14155550123',
  from_number: '+14155550100',
  created_at: '2026-11-21T18:02:22.504Z',
};

export const createdCallSchema = {
  title: 'CreatedCall',
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
  examples: [createdCallExample],
} as const;

export const transcriptSchema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['role', 'text', 'start_ms', 'end_ms'],
    properties: {
      role: { type: 'string', enum: ['agent', 'callee'] },
      text: { type: 'string' },
      start_ms: { type: 'integer', description: 'Milliseconds from the answer.' },
      end_ms: { type: 'integer' },
      event: {
        type: 'string',
        enum: [...transcriptEvents],
        description:
          'Present on a timed event rather than speech: `dtmf` (the text is the keys pressed), `tool_call` (the tool name and its JSON arguments), `tool_result` (the JSON answer or the error, cut to 1,000 characters).',
      },
    },
  },
} as const;

export const callAnalysisSchema = {
  type: ['object', 'null'],
  description:
    'Extension: the post-call analysis of an answered call (null otherwise). `failed` and `skipped` (the callee never spoke) say why in `reason`; `extracted_data` is then empty, not an answer.',
  required: ['status', 'reason', 'summary', 'success'],
  properties: {
    status: { type: 'string', enum: [...analysisStatuses] },
    reason: { type: ['string', 'null'] },
    summary: { type: ['string', 'null'] },
    success: {
      type: ['object', 'null'],
      required: ['passed', 'explanation'],
      properties: { passed: { type: 'boolean' }, explanation: { type: 'string' } },
    },
  },
} as const;

export const callResourceSchema = {
  title: 'Call',
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
    channel: {
      type: 'string',
      enum: ['phone', 'web'],
      description: 'Extension: how the callee was reached; a web call has empty numbers.',
    },
    direction: {
      type: 'string',
      enum: ['outbound', 'inbound'],
      description: "Extension: `inbound` when the caller rang one of the account's numbers (`to_number`).",
    },
    callback_of: {
      type: ['string', 'null'],
      description:
        "Extension: for an inbound call from the callee of a recent outbound call, that call's id.",
    },
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
    transcript: transcriptSchema,
    recording_url: nullableString,
    extracted_data: { type: 'object', additionalProperties: true },
    analysis: callAnalysisSchema,
    metrics: { type: ['object', 'null'], additionalProperties: true },
  },
  examples: [
    {
      ...createdCallExample,
      status: 'completed',
      first_message: null,
      context: null,
      variables: { customer_name: 'Ann' },
      end_reason: 'agent_hangup',
      answered_by: 'human',
      dialed_at: '2026-11-21T18:02:22.610Z',
      answered_at: '2026-11-21T18:02:25.020Z',
      ended_at: '2026-11-21T18:03:07.120Z',
      duration_seconds: 42.1,
      timeline: [
        { status: 'queued', at: '2026-11-21T18:02:22.504Z' },
        { status: 'dialing', at: '2026-11-21T18:02:22.610Z' },
        { status: 'ringing', at: '2026-11-21T18:02:23.001Z' },
        { status: 'in_progress', at: '2026-11-21T18:02:25.020Z' },
        { status: 'completed', at: '2026-11-21T18:03:07.120Z' },
      ],
      transcript: [{ role: 'agent', text: 'Hi Ann!', start_ms: 0, end_ms: 900 }],
      recording_url: null,
      extracted_data: { confirmed: true },
      metrics: { response_latency_ms: { p50: 640, p95: 910 } },
    },
  ],
} as const;

/** One page of a cursor-paged list: `data` holds `items`, and `next_cursor` leads on when `has_more`. */
export function pageSchema<Items>(items: Items) {
  return {
    type: 'object',
    required: ['data', 'has_more', 'next_cursor'],
    properties: {
      data: { type: 'array', items },
      has_more: { type: 'boolean' },
      next_cursor: nullableString,
    },
  } as const;
}

/** The query of a cursor-paged list: up to 100 a page (20 by default), after `cursor`. */
export const pageQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    cursor: { type: 'string', maxLength: 64 },
  },
} as const;

export const callListSchema = { title: 'CallList', ...pageSchema(callResourceSchema) } as const;

export const callListQuerySchema = {
  ...pageQuerySchema,
  properties: {
    ...pageQuerySchema.properties,
    status: { type: 'string', enum: [...callStatuses] },
    direction: { type: 'string', enum: ['outbound', 'inbound'] },
  },
} as const;

export const callIdParamsSchema = {
  type: 'object',
  required: ['call_id'],
  properties: { call_id: { type: 'string', maxLength: 64 } },
} as const;

export { errorResponseSchema };

const errorExamples: Record<number, { description: string; message: string }> = {
  400: { description: 'Missing or invalid parameters.', message: 'body.to_number is required' },
  401: { description: 'Invalid, missing or revoked API key.', message: 'invalid or missing API key' },
  403: { description: 'The signed link has expired.', message: 'the recording link has expired' },
  404: {
    description: 'No such resource (for call creation: the agent does not exist or is inactive).',
    message: 'agent agt_01JF3Z8V0Q4T7N5W2X9Y6B1C3D not found',
  },
  409: { description: 'The resource is not in a state that allows this.', message: 'call has already ended' },
  422: { description: 'A phone number is not E.164.', message: 'to_number must be E.164, e.g. +14155550123' },
  429: {
    description: 'Too many requests. Wait `Retry-After` seconds, then retry with exponential backoff.',
    message: 'too many requests; retry with exponential backoff',
  },
  500: { description: 'Internal error.', message: 'internal server error' },
  503: { description: 'Not available right now; retry later.', message: 'this process does not place calls' },
};

/** The error codes a status can carry (the status is derived from the code: DESIGN §8). */
export function errorCodesOf(status: number): string[] {
  return Object.entries(errorStatusByCode)
    .filter(([, codeStatus]) => codeStatus === status)
    .map(([code]) => code);
}

/** The error body schema of one status: its code(s) and an example. */
export function errorSchemaFor(status: number) {
  const codes = errorCodesOf(status);
  const example = errorExamples[status];
  return {
    description: `${codes.join(', ')}: ${example?.description ?? 'Error.'}`,
    type: 'object',
    required: ['error'],
    additionalProperties: false,
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        additionalProperties: false,
        properties: {
          code: { type: 'string', enum: codes },
          message: { type: 'string', description: 'Human-readable; do not parse it.' },
        },
      },
    },
    examples: [{ error: { code: codes[0], message: example?.message ?? 'error' } }],
  } as const;
}

/** The 400 of a batch request (a campaign's contacts): the error names each bad row in `rows`. */
export function batchErrorSchema() {
  const single = errorSchemaFor(400);
  return {
    ...single,
    properties: {
      error: {
        ...single.properties.error,
        properties: {
          ...single.properties.error.properties,
          rows: {
            type: 'array',
            description:
              'Each bad row: `index` in the JSON list (0-based) or `line` in the CSV file (1-based)',
            items: {
              type: 'object',
              required: ['message'],
              additionalProperties: false,
              properties: {
                index: { type: 'integer' },
                line: { type: 'integer' },
                message: { type: 'string' },
              },
            },
          },
        },
      },
    },
  } as const;
}

/** Error responses each operation can give, for the serialiser and the generated reference. */
export function errorResponses(...statuses: number[]) {
  return Object.fromEntries(statuses.map((status) => [status, errorSchemaFor(status)]));
}
