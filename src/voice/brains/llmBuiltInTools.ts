import type { ToolDefinition } from '../providers/index.js';

/** The tools every llm agent's model is offered, whatever the agent's own tools. */
export const builtInTools: ToolDefinition[] = [
  {
    name: 'end_call',
    description: 'Hang up once the conversation is over (after saying goodbye).',
    parameters: {
      type: 'object',
      properties: {
        reason: { type: 'string', maxLength: 200, description: 'Why the call ends, in a few words.' },
      },
      additionalProperties: false,
    },
  },
  {
    name: 'send_dtmf',
    description: 'Press keys on the phone keypad, e.g. to navigate a phone menu.',
    parameters: {
      type: 'object',
      properties: { digits: { type: 'string', pattern: '^[0-9*#A-D]{1,32}$' } },
      required: ['digits'],
      additionalProperties: false,
    },
  },
  {
    name: 'add_to_do_not_call',
    description:
      'The callee asked not to be called again ("stop calling me", "take me off your list"): put their number on the do-not-call list, then confirm and say goodbye.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
  },
  {
    name: 'leave_voicemail',
    description:
      'A recording answered (a voicemail greeting), not a person: stop talking to it, wait for the beep, leave the voicemail message and hang up.',
    parameters: {
      type: 'object',
      properties: {
        message: {
          type: 'string',
          description: 'The message to leave, when the agent has none of its own configured.',
          maxLength: 1000,
        },
      },
      additionalProperties: false,
    },
  },
];

/** `schedule_callback`, offered when the call can answer it (every pipeline call of an llm agent). */
export const scheduleCallbackTool: ToolDefinition = {
  name: 'schedule_callback',
  description:
    'The callee asked to be called back later ("call me tomorrow after four"): schedule it, then confirm the time the answer gives. Times are the callee\'s local time.',
  parameters: {
    type: 'object',
    properties: {
      local_time: {
        type: 'string',
        pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}$',
        description: "The callee's local date and time, e.g. 2026-11-29T16:00",
      },
      in_minutes: { type: 'integer', minimum: 1, description: 'Or: a delay from now, in minutes' },
    },
    additionalProperties: false,
  },
};

/** `transfer_call`, offered when the agent has transfer targets: the model picks one by name. */
export function transferTool(targets: readonly string[]): ToolDefinition {
  return {
    name: 'transfer_call',
    description:
      'Hand the call to a person (a cold transfer). Say that you are transferring the caller first; the call ends for you once the transfer succeeds.',
    parameters: {
      type: 'object',
      properties: {
        target: { type: 'string', enum: [...targets] },
        summary: {
          type: 'string',
          maxLength: 1000,
          description:
            'For the person who takes the call: who is calling and what they need, in one or two sentences (said to them before the caller joins, on a warm transfer).',
        },
      },
      required: ['target'],
      additionalProperties: false,
    },
  };
}
