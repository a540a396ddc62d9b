import { callStatuses, endReasons, terminalStatuses } from '../domain/callStatus.js';
import { callAnalysisSchema, transcriptSchema } from './schemas.js';

/**
 * The `call.completed` event (DESIGN §4) as the reference describes it under `webhooks`: the body
 * built by `src/domain/callCompletedEvent.ts` and the Standard Webhooks headers it is signed with.
 */

const nullableTimestamp = { type: ['string', 'null'], format: 'date-time' } as const;
const terminalStatusList = callStatuses.filter((status) => terminalStatuses.has(status));

export const callCompletedEventExample = {
  type: 'call.completed',
  id: 'evt_01JF3Z9QK2M4T7N5W2X9Y6B1C3',
  created_at: '2026-11-21T18:03:07.200Z',
  data: {
    call_id: 'call_01JF3Z8V0Q4T7N5W2X9Y6B1C3D',
    agent_id: 'agt_01JF3Z8V0Q4T7N5W2X9Y6B1C3D',
    from_number: '+14155550100',
    to_number: '+14155550123',
    status: 'completed',
    end_reason: 'agent_hangup',
    answered_by: 'human',
    created_at: '2026-11-21T18:02:22.504Z',
    dialed_at: '2026-11-21T18:02:22.610Z',
    answered_at: '2026-11-21T18:02:25.020Z',
    ended_at: '2026-11-21T18:03:07.120Z',
    duration_seconds: 42.1,
    transcript: [
      { role: 'agent', text: 'Hi Ann, this is Riverside Dental.', start_ms: 0, end_ms: 2100 },
      { role: 'callee', text: 'Yes, I will be there.', start_ms: 2600, end_ms: 4100 },
    ],
    recording_url:
      'https://calls.example.com/v1/calls/call_01JF3Z8V0Q4T7N5W2X9Y6B1C3D/recording?expires=1764353000&signature=3q2-7w',
    extracted_data: { confirmed: true },
    variables: { customer_name: 'Ann' },
    metrics: { response_latency_ms: { p50: 640, p95: 910 } },
    cost: {
      currency: 'USD',
      total_usd: 0.0213,
      by_stage: { stt: 0.0054, llm: 0.0009, tts: 0.015, telephony: 0 },
    },
  },
};

export const callCompletedEventSchema = {
  title: 'CallCompletedEvent',
  type: 'object',
  required: ['type', 'id', 'created_at', 'data'],
  properties: {
    type: { type: 'string', enum: ['call.completed'] },
    id: {
      type: 'string',
      description: 'The event id; equals the `webhook-id` header and repeats on every retry.',
    },
    created_at: { type: 'string', format: 'date-time' },
    data: {
      type: 'object',
      required: [
        'call_id',
        'agent_id',
        'from_number',
        'to_number',
        'status',
        'end_reason',
        'answered_by',
        'created_at',
        'dialed_at',
        'answered_at',
        'ended_at',
        'duration_seconds',
        'transcript',
        'recording_url',
        'extracted_data',
        'variables',
        'metrics',
      ],
      properties: {
        call_id: { type: 'string', description: 'The `call_id` returned by `POST /v1/calls/outbound`.' },
        agent_id: { type: 'string' },
        from_number: { type: 'string' },
        to_number: { type: 'string' },
        channel: {
          type: 'string',
          enum: ['phone', 'web'],
          description: 'Extension: phone (SIP) or web (WebRTC).',
        },
        direction: {
          type: 'string',
          enum: ['outbound', 'inbound'],
          description: 'Extension (issue 40): inbound when the caller rang one of the account numbers.',
        },
        callback_of: {
          type: ['string', 'null'],
          description: 'Extension (issue 40): the earlier outbound call an inbound callback returns.',
        },
        status: { type: 'string', enum: terminalStatusList },
        end_reason: { type: ['string', 'null'], enum: [...endReasons, null] },
        answered_by: { type: ['string', 'null'], enum: ['human', 'machine', 'unknown', null] },
        created_at: { type: 'string', format: 'date-time' },
        dialed_at: nullableTimestamp,
        answered_at: nullableTimestamp,
        ended_at: nullableTimestamp,
        duration_seconds: { type: ['number', 'null'], description: 'From the answer to the end.' },
        transcript: transcriptSchema,
        recording_url: {
          type: ['string', 'null'],
          description:
            'A signed link to the WAV that needs no API key and expires after 7 days; null without a recording.',
        },
        extracted_data: { type: 'object', additionalProperties: true },
        analysis: callAnalysisSchema,
        variables: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
        metrics: {
          type: 'object',
          properties: {
            response_latency_ms: {
              type: 'object',
              description:
                'Voice-to-voice over the call’s turns: the end of the callee’s speech → the first agent sample they can hear.',
              properties: { p50: { type: ['number', 'null'] }, p95: { type: ['number', 'null'] } },
            },
            turns: {
              type: 'array',
              description:
                'Extension: each callee turn’s latency waterfall, in ms after the callee stopped speaking (null: the stage did not happen).',
              items: {
                type: 'object',
                required: [
                  'turn',
                  'callee_speech_end_ms',
                  'end_of_turn_ms',
                  'voice_to_voice_ms',
                  'interrupted',
                ],
                properties: {
                  turn: { type: 'integer' },
                  callee_speech_end_ms: { type: 'integer', description: 'Milliseconds from the answer.' },
                  end_of_turn: {
                    type: 'string',
                    enum: ['complete', 'unfinished', 'unknown', 'max_utterance'],
                  },
                  end_of_turn_ms: { type: 'integer' },
                  stt_final_ms: { type: ['integer', 'null'] },
                  llm_first_token_ms: { type: ['integer', 'null'] },
                  first_sentence_ms: { type: ['integer', 'null'] },
                  tts_first_audio_ms: { type: ['integer', 'null'] },
                  first_rtp_ms: { type: ['integer', 'null'] },
                  first_audible_ms: { type: ['integer', 'null'] },
                  voice_to_voice_ms: { type: ['integer', 'null'] },
                  interrupted: { type: 'boolean' },
                  interrupted_at_ms: { type: ['integer', 'null'] },
                  preemptive_reply: {
                    type: ['string', 'null'],
                    enum: ['used', 'discarded', null],
                    description:
                      'The reply was generated on the partial transcript before the turn was confirmed and kept (used), or dropped unheard because the final transcript differed (discarded); null: none was generated ahead.',
                  },
                },
              },
            },
          },
        },
        cost: {
          type: ['object', 'null'],
          description:
            "Extension: what the call cost in US dollars at the account's prices (over the service's " +
            'defaults), in total and by stage (stt, llm, tts, realtime, telephony); the line items are in ' +
            "the call record's `metrics.cost`. Null for a call that never reached a voice.",
          required: ['currency', 'total_usd', 'by_stage'],
          properties: {
            currency: { type: 'string', enum: ['USD'] },
            total_usd: { type: 'number' },
            by_stage: { type: 'object', additionalProperties: { type: 'number' } },
          },
        },
      },
    },
  },
  examples: [callCompletedEventExample],
} as const;

/** The headers of every delivery (Standard Webhooks), as OpenAPI header parameters. */
export const webhookHeaderParameters = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'The event id (`evt_…`), the same on every retry: de-duplicate on it.',
    schema: { type: 'string' },
    example: callCompletedEventExample.id,
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'Unix seconds of this attempt; refuse values more than 5 minutes from your clock.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
    example: '1763748187',
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Space-separated `v1,<base64 HMAC-SHA256>` signatures of `{webhook-id}.{webhook-timestamp}.{raw body}`, ' +
      'keyed with the base64 part of the `whsec_…` secret; two while a secret is rotated (24 h). ' +
      'Verify with `verifyWebhook` from `callwright/webhooks` or any Standard Webhooks library.',
    schema: { type: 'string' },
    example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  },
] as const;

/** What the endpoint answers, for every event type. */
export const webhookResponses = {
  '2XX': { description: 'Received. Only a 2xx counts as delivered.' },
  '410': { description: 'Gone: disables the endpoint until it is enabled again.' },
  '429': { description: 'Slow down: `Retry-After` is honoured (also on 503).' },
  default: { description: 'Anything else (or no answer within 15 s) is retried on the schedule.' },
} as const;

export const callCompletedWebhook = {
  post: {
    operationId: 'callCompletedWebhook',
    summary: 'call.completed, sent to your endpoint when a call ends',
    description:
      'Every call accepted with a 200 ends in exactly one `call.completed` event, whatever its terminal status. ' +
      'Delivery is at-least-once: attempts at once, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h ' +
      '(±10% jitter), 15 s timeout each; redirects are not followed. Verify the signature over the raw body ' +
      'before parsing it, answer fast, and store events by `webhook-id`.',
    tags: ['webhooks'],
    security: [],
    parameters: webhookHeaderParameters,
    requestBody: {
      required: true,
      content: { 'application/json': { schema: callCompletedEventSchema } },
    },
    responses: webhookResponses,
  },
} as const;
