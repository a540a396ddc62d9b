import { answeredByValues } from '../domain/callStatus.js';
import { type OptionalEventType, optionalEventTypes, transferVias } from '../domain/statusEvents.js';
import { transferOutcomes } from '../domain/transferSettings.js';
import { campaignSchema } from './campaignRoutes.js';
import { webhookHeaderParameters, webhookResponses } from './webhookSchemas.js';

/**
 * The opt-in events (`call.ringing`, `call.answered`, `call.transferred`, `campaign.completed`,
 * `campaign.paused`, `campaign.canceled`)
 * under the reference's `webhooks`: the bodies built by src/domain/statusEvents.ts and
 * src/campaigns/campaignScheduler.ts, each with an example. An endpoint receives them only after
 * `PUT /v1/webhook/events` named them.
 */

const timestamp = { type: 'string', format: 'date-time' } as const;

const callSummaryProperties = {
  call_id: { type: 'string' },
  agent_id: { type: 'string' },
  from_number: { type: 'string' },
  to_number: { type: 'string' },
  variables: { type: 'object', additionalProperties: true },
} as const;
const callSummaryRequired = Object.keys(callSummaryProperties);

const exampleCall = {
  call_id: 'call_01JF3Z8V0Q4T7N5W2X9Y6B1C3D',
  agent_id: 'agt_01JF3Z8V0Q4T7N5W2X9Y6B1C3D',
  from_number: '+14155550100',
  to_number: '+14155550123',
  variables: { first_name: 'Ann' },
};

function eventSchema(type: OptionalEventType, data: object, example: object) {
  return {
    type: 'object',
    required: ['type', 'id', 'created_at', 'data'],
    properties: {
      type: { type: 'string', const: type },
      id: { type: 'string', description: 'The event id, also in the `webhook-id` header.' },
      created_at: timestamp,
      data,
    },
    examples: [example],
  } as const;
}

function callEventData(extra: Record<string, object>) {
  return {
    type: 'object',
    required: [...callSummaryRequired, ...Object.keys(extra)],
    properties: { ...callSummaryProperties, ...extra },
  } as const;
}

export const statusEventExamples = {
  'call.ringing': {
    type: 'call.ringing',
    id: 'evt_01JF3Z8W1A4T7N5W2X9Y6B1C3D',
    created_at: '2026-11-21T18:02:23.101Z',
    data: { ...exampleCall, ringing_at: '2026-11-21T18:02:23.100Z' },
  },
  'call.answered': {
    type: 'call.answered',
    id: 'evt_01JF3Z8X2B4T7N5W2X9Y6B1C3D',
    created_at: '2026-11-21T18:02:26.410Z',
    data: { ...exampleCall, answered_at: '2026-11-21T18:02:25.020Z', answered_by: 'human' },
  },
  'call.transferred': {
    type: 'call.transferred',
    id: 'evt_01JF3Z9A3C4T7N5W2X9Y6B1C3D',
    created_at: '2026-11-21T18:02:58.002Z',
    data: {
      ...exampleCall,
      transferred_at: '2026-11-21T18:02:58.000Z',
      target: 'front_desk',
      via: 'refer',
      outcome: 'connected',
      sip_status: 200,
      reason: null,
    },
  },
  'campaign.completed': {
    type: 'campaign.completed',
    id: 'evt_01JF4A0B4D4T7N5W2X9Y6B1C3D',
    created_at: '2026-11-21T19:40:00.500Z',
    data: {
      campaign_id: 'cmp_01JF3Z8V0Q4T7N5W2X9Y6B1C3D',
      name: 'November recalls',
      status: 'completed',
      agent_id: 'agt_01JF3Z8V0Q4T7N5W2X9Y6B1C3D',
      contact_count: 2,
      created_at: '2026-11-21T18:00:00.000Z',
      completed_at: '2026-11-21T19:40:00.480Z',
      progress: {
        pending: 0,
        calling: 0,
        retry_wait: 0,
        done: 2,
        expired: 0,
        do_not_call: 0,
        canceled: 0,
        outcomes: { answered: 1, voicemail: 0, busy: 1, no_answer: 0, failed: 0 },
      },
    },
  },
  'campaign.paused': {
    type: 'campaign.paused',
    id: 'evt_01JF4A0C5E4T7N5W2X9Y6B1C3D',
    created_at: '2026-11-21T18:30:00.500Z',
    data: {
      campaign_id: 'cmp_01JF3Z8V0Q4T7N5W2X9Y6B1C3D',
      name: 'November recalls',
      status: 'paused',
      status_reason: 'api_key_revoked',
      agent_id: 'agt_01JF3Z8V0Q4T7N5W2X9Y6B1C3D',
      contact_count: 2,
      created_at: '2026-11-21T18:00:00.000Z',
      completed_at: null,
      progress: {
        pending: 1,
        calling: 0,
        retry_wait: 0,
        done: 1,
        expired: 0,
        do_not_call: 0,
        canceled: 0,
        outcomes: { answered: 1, voicemail: 0, busy: 0, no_answer: 0, failed: 0 },
      },
    },
  },
  'campaign.canceled': {
    type: 'campaign.canceled',
    id: 'evt_01JF4A0D6F4T7N5W2X9Y6B1C3D',
    created_at: '2026-11-21T18:31:00.500Z',
    data: {
      campaign_id: 'cmp_01JF3Z8V0Q4T7N5W2X9Y6B1C3D',
      name: 'November recalls',
      status: 'canceled',
      status_reason: null,
      agent_id: 'agt_01JF3Z8V0Q4T7N5W2X9Y6B1C3D',
      contact_count: 2,
      created_at: '2026-11-21T18:00:00.000Z',
      completed_at: null,
      progress: {
        pending: 0,
        calling: 0,
        retry_wait: 0,
        done: 1,
        expired: 0,
        do_not_call: 0,
        canceled: 1,
        outcomes: { answered: 1, voicemail: 0, busy: 0, no_answer: 0, failed: 0 },
      },
    },
  },
  'number.rested': {
    type: 'number.rested',
    id: 'evt_01JF4A0E7G4T7N5W2X9Y6B1C3D',
    created_at: '2026-11-21T18:40:00.500Z',
    data: {
      campaign_id: 'cmp_01JF3Z8V0Q4T7N5W2X9Y6B1C3D',
      number: '+1415*****67',
      answer_rate: 0.1,
      pool_answer_rate: 0.45,
      attempts: 20,
      rested_until: '2026-11-21T22:40:00.500Z',
      reason: 'low_answer_rate',
    },
  },
} as const;

const numberRestedSchema = {
  type: 'object',
  required: [
    'campaign_id',
    'number',
    'answer_rate',
    'pool_answer_rate',
    'attempts',
    'rested_until',
    'reason',
  ],
  properties: {
    campaign_id: { type: 'string' },
    number: { type: 'string', description: 'The caller ID, masked as in every webhook and log line.' },
    answer_rate: { type: 'number', description: "The number's answered share over its window." },
    pool_answer_rate: { type: 'number', description: "The pool's answered share over the same windows." },
    attempts: { type: 'integer', description: "The finished attempts in the number's window (the sample)." },
    rested_until: timestamp,
    reason: { type: 'string', enum: ['low_answer_rate'] },
  },
} as const;

const statusEventSchemas = {
  'call.ringing': eventSchema(
    'call.ringing',
    callEventData({ ringing_at: timestamp }),
    statusEventExamples['call.ringing'],
  ),
  'call.answered': eventSchema(
    'call.answered',
    callEventData({
      answered_at: timestamp,
      answered_by: {
        type: 'string',
        enum: [...answeredByValues],
        description: 'The first decision of the answering-machine detector or the agent.',
      },
    }),
    statusEventExamples['call.answered'],
  ),
  'call.transferred': eventSchema(
    'call.transferred',
    callEventData({
      transferred_at: timestamp,
      target: { type: 'string', description: "The target's name in the agent's transfer settings." },
      via: {
        type: 'string',
        enum: [...transferVias],
        description:
          'refer: the line moved the call; bridge: callwright dialled the target and joined the legs; ' +
          'warm: the same after a whisper to the person who answered.',
      },
      outcome: {
        type: 'string',
        enum: [...transferOutcomes],
        description:
          'connected (sent at once); otherwise sent just before call.completed for the last attempt: ' +
          'declined (the person pressed the decline key), no_answer, busy, refused (the line refused REFER) ' +
          'or failed.',
      },
      sip_status: {
        type: ['integer', 'null'],
        description: "The target's (or, for REFER, the line's) SIP status, when there was one.",
      },
      reason: { type: ['string', 'null'], description: 'Why it did not connect; null when connected.' },
    }),
    statusEventExamples['call.transferred'],
  ),
  'campaign.completed': eventSchema(
    'campaign.completed',
    campaignSchema,
    statusEventExamples['campaign.completed'],
  ),
  'campaign.paused': eventSchema('campaign.paused', campaignSchema, statusEventExamples['campaign.paused']),
  'campaign.canceled': eventSchema(
    'campaign.canceled',
    campaignSchema,
    statusEventExamples['campaign.canceled'],
  ),
  'number.rested': eventSchema('number.rested', numberRestedSchema, statusEventExamples['number.rested']),
} as const;

const whenSent: Record<OptionalEventType, string> = {
  'call.ringing': 'when the callee’s phone rings (the first 180 or 183)',
  'call.answered':
    'when an answered call’s answering party is decided (a person, a machine, or unknown), ' +
    'or just before `call.completed` if the call ends first',
  'call.transferred': 'when a transfer reached its target',
  'campaign.completed': 'when every contact of a campaign is done (not when it is canceled)',
  'campaign.paused':
    'each time a campaign pauses: asked for (`status_reason` requested) or because the API key ' +
    'its calls are placed under was revoked (`api_key_revoked`)',
  'campaign.canceled': 'when a campaign is canceled (API, command line or dashboard)',
  'number.rested':
    "when a campaign rests one of its caller IDs: its answer rate fell below the pool's " +
    '(`caller_id_health`), so it is left out of the rotation until `rested_until`',
};

function statusWebhook(type: OptionalEventType) {
  return {
    post: {
      operationId: `${type.replace(/\.(\w)/, (_, letter: string) => letter.toUpperCase())}Webhook`,
      summary: `${type}, sent ${whenSent[type]} — opt-in`,
      description:
        `Sent only to an endpoint that asked for it (\`PUT /v1/webhook/events\`), ` +
        `${type === 'campaign.paused' ? 'once per pause' : type === 'number.rested' ? 'once per rest' : `at most once per ${type.startsWith('campaign.') ? 'campaign' : 'call'}`}. Signed, retried and logged like ` +
        '`call.completed`; events are not ordered, so compare their times.',
      tags: ['webhooks'],
      security: [],
      parameters: webhookHeaderParameters,
      requestBody: {
        required: true,
        content: { 'application/json': { schema: statusEventSchemas[type] } },
      },
      responses: webhookResponses,
    },
  } as const;
}

export const statusEventWebhooks = Object.fromEntries(
  optionalEventTypes.map((type) => [type, statusWebhook(type)]),
);
