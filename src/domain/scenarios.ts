import { Ajv, type ErrorObject } from 'ajv';
import { ttsProviders } from './agentVoiceSettings.js';
import { callStatuses, endReasons } from './callStatus.js';
import { ajvLinearRegExp, linearPatternProblem } from './linearPattern.js';
import { isObject, refuse } from './settingsParsing.js';

/**
 * An agent test scenario (docs/testing.md): who answers a sandbox call, what they say turn by
 * turn, and what must be true of the call afterwards. Scenario files are JSON; this module checks
 * them against `scenarioJsonSchema` (one document, also what docs/testing.md and editors read)
 * plus the few rules a schema cannot say (a pattern must compile, a turn must do something).
 */

/** How the simulated callee answers: a talking person, or one of the sandbox's other callees. */
export const scenarioAnswerKinds = ['human', 'voicemail', 'busy', 'no_answer', 'unreachable', 'ivr'] as const;
export type ScenarioAnswerKind = (typeof scenarioAnswerKinds)[number];

/** A stretch of an earlier call's recording, callee side (what a replay plays instead of text). */
export interface RecordedAudio {
  call_id: string;
  start_ms: number;
  end_ms: number;
}

export interface ScenarioTurn {
  /** What the callee says (synthesised by the sandbox's voice). */
  say?: string;
  /** Or: what the callee said in an earlier call (replays). */
  audio?: RecordedAudio;
  /** Keys the callee presses (RFC 4733), after its words if it says any. */
  dtmf?: string;
  /** Extra silence after the agent stops before the callee starts (a slow responder). Default 0. */
  pause_ms?: number;
  /** Talks over the agent: starts once the agent has spoken this long in its turn. */
  interrupt_after_ms?: number;
  /** Says this once while the agent talks ("uh huh"), `backchannel_after_ms` into its turn. */
  backchannel?: string;
  backchannel_after_ms?: number;
  /** Slow, halting speech: the words one by one with this much silence between them. */
  word_gap_ms?: number;
  /** Hangs up halfway through this turn's words, or right after them. */
  hang_up?: 'during' | 'after';
}

export type DataExpectation =
  | string
  | number
  | boolean
  | null
  | { equals: unknown }
  | { matches: string }
  | { schema: Record<string, unknown> }
  | { present: boolean };

export interface ScenarioExpectations {
  status?: string;
  end_reason?: string;
  answered_by?: string;
  /** Extracted data, field by field: a value (equal), or a rule. */
  data?: Record<string, DataExpectation>;
  /** Phrases the agent must say (case and punctuation ignored). */
  says?: string[];
  must_not_say?: string[];
  /** Tools the agent must call, in any order; `arguments` must be contained in what it sent. */
  tool_calls?: { name: string; arguments?: Record<string, unknown> }[];
  /** The transfer target the agent must have transferred to. */
  transfer_to?: string;
  /** The slowest reply, end of the callee's speech to the agent's first audible sound. */
  max_latency_ms?: number;
  max_duration_s?: number;
}

export interface Scenario {
  name: string;
  description?: string;
  /** The call's own fields, as `POST /v1/calls/outbound` takes them. */
  call?: { variables?: Record<string, string | number | boolean>; first_message?: string; context?: string };
  callee: {
    answers: ScenarioAnswerKind;
    /** From the first ring to the answer. Default 1000. */
    answer_after_ms?: number;
    /** human: said on answering, before the agent speaks. voicemail: the greeting before the beep. */
    greeting?: string;
    greeting_audio?: RecordedAudio;
    /** voicemail: whether a beep follows the greeting. Default true. */
    beep?: boolean;
    /** human: the turns, each given once the agent has spoken and paused (or over it). */
    turns?: ScenarioTurn[];
    /** human, instead of turns: a person with a goal, played by the service's language model. */
    persona?: { goal: string; max_replies?: number };
    /** Who speaks the callee's lines: a text-to-speech vendor of the service (default: offline flite). */
    voice?: { provider: string; voice?: string; model?: string };
    /** After the last turn: hang up once the agent has answered it (default), or stay on the line. */
    after_last_turn?: 'hang_up' | 'stay';
  };
  expect?: ScenarioExpectations;
}

export const scenarioLimits = {
  turnsMax: 30,
  textMaxChars: 500,
  scenariosPerRunMax: 50,
  repeatMax: 20,
  callsPerRunMax: 100,
  scenarioMaxBytes: 32_768,
} as const;

const audioSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['call_id', 'start_ms', 'end_ms'],
  properties: {
    call_id: { type: 'string', minLength: 1, maxLength: 64 },
    start_ms: { type: 'integer', minimum: 0 },
    end_ms: { type: 'integer', minimum: 1 },
  },
} as const;

const text = { type: 'string', minLength: 1, maxLength: scenarioLimits.textMaxChars } as const;
const delayMs = { type: 'integer', minimum: 0, maximum: 60_000 } as const;

/** The scenario file format as a JSON Schema (draft 2020-12 subset ajv checks). */
export const scenarioJsonSchema = {
  $id: 'https://callwright.dev/schemas/scenario.json',
  title: 'callwright agent test scenario',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'callee'],
  properties: {
    $schema: { type: 'string' },
    name: { type: 'string', minLength: 1, maxLength: 120 },
    description: { type: 'string', maxLength: 2_000 },
    call: {
      type: 'object',
      additionalProperties: false,
      properties: {
        variables: {
          type: 'object',
          additionalProperties: { type: ['string', 'number', 'boolean'] },
        },
        first_message: { type: 'string', maxLength: 2_000 },
        context: { type: 'string', maxLength: 10_000 },
      },
    },
    callee: {
      type: 'object',
      additionalProperties: false,
      required: ['answers'],
      properties: {
        answers: { enum: scenarioAnswerKinds },
        answer_after_ms: delayMs,
        greeting: text,
        greeting_audio: audioSchema,
        beep: { type: 'boolean' },
        turns: {
          type: 'array',
          maxItems: scenarioLimits.turnsMax,
          items: {
            type: 'object',
            additionalProperties: false,
            properties: {
              say: text,
              audio: audioSchema,
              dtmf: { type: 'string', pattern: '^[0-9*#A-D]{1,20}$' },
              pause_ms: delayMs,
              interrupt_after_ms: { type: 'integer', minimum: 100, maximum: 60_000 },
              backchannel: { type: 'string', minLength: 1, maxLength: 60 },
              backchannel_after_ms: { type: 'integer', minimum: 100, maximum: 60_000 },
              word_gap_ms: { type: 'integer', minimum: 50, maximum: 5_000 },
              hang_up: { enum: ['during', 'after'] },
            },
          },
        },
        after_last_turn: { enum: ['hang_up', 'stay'] },
        voice: {
          type: 'object',
          additionalProperties: false,
          required: ['provider'],
          properties: {
            provider: { enum: ttsProviders },
            voice: { type: 'string', minLength: 1, maxLength: 100 },
            model: { type: 'string', minLength: 1, maxLength: 100 },
          },
        },
        persona: {
          type: 'object',
          additionalProperties: false,
          required: ['goal'],
          properties: {
            goal: { type: 'string', minLength: 1, maxLength: 2_000 },
            max_replies: { type: 'integer', minimum: 1, maximum: 20 },
          },
        },
      },
    },
    expect: {
      type: 'object',
      additionalProperties: false,
      properties: {
        status: { enum: callStatuses },
        end_reason: { enum: endReasons },
        answered_by: { enum: ['human', 'machine', 'unknown'] },
        data: {
          type: 'object',
          additionalProperties: {
            anyOf: [
              { type: ['string', 'number', 'boolean', 'null'] },
              {
                type: 'object',
                additionalProperties: false,
                required: ['equals'],
                properties: { equals: {} },
              },
              {
                type: 'object',
                additionalProperties: false,
                required: ['matches'],
                properties: { matches: { type: 'string', minLength: 1, maxLength: 500 } },
              },
              {
                type: 'object',
                additionalProperties: false,
                required: ['schema'],
                properties: { schema: { type: 'object' } },
              },
              {
                type: 'object',
                additionalProperties: false,
                required: ['present'],
                properties: { present: { type: 'boolean' } },
              },
            ],
          },
        },
        says: { type: 'array', maxItems: 50, items: text },
        must_not_say: { type: 'array', maxItems: 50, items: text },
        tool_calls: {
          type: 'array',
          maxItems: 20,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['name'],
            properties: {
              name: { type: 'string', minLength: 1, maxLength: 64 },
              arguments: { type: 'object' },
            },
          },
        },
        transfer_to: { type: 'string', minLength: 1, maxLength: 200 },
        max_latency_ms: { type: 'integer', minimum: 1, maximum: 60_000 },
        max_duration_s: { type: 'number', exclusiveMinimum: 0, maximum: 7_200 },
      },
    },
  },
} as const;

const validator = new Ajv({ strict: false, allErrors: true });
const validateScenarioShape = validator.compile(scenarioJsonSchema);
/** A data rule's `schema` is the account's: its patterns run on the linear-time engine. */
const dataSchemaValidator = new Ajv({ strict: false, allErrors: true, code: { regExp: ajvLinearRegExp } });

function describe(error: ErrorObject): string {
  const at = error.instancePath.replace(/^\//, '').replace(/\//g, '.') || 'the scenario';
  if (error.keyword === 'additionalProperties')
    return `${at}: ${String((error.params as { additionalProperty: string }).additionalProperty).slice(0, 60)} is not a field`;
  if (error.keyword === 'enum')
    return `${at} must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
  return `${at} ${error.message ?? 'is invalid'}`;
}

/**
 * Checks one scenario; throws a 400 `validation_error` naming `where` (e.g. `scenarios[2]` or a
 * file name) and the first problems. Returns it typed (the same object).
 */
export function parseScenario(raw: unknown, where = 'scenario'): Scenario {
  if (!isObject(raw)) refuse(`${where} must be a JSON object`);
  if (Buffer.byteLength(JSON.stringify(raw)) > scenarioLimits.scenarioMaxBytes)
    refuse(`${where} must be at most ${scenarioLimits.scenarioMaxBytes} bytes of JSON`);
  if (!validateScenarioShape(raw)) {
    const errors = (validateScenarioShape.errors ?? []).filter((error) => error.keyword !== 'anyOf');
    const shown = (errors.length > 0 ? errors : (validateScenarioShape.errors ?? [])).slice(0, 3);
    refuse(`${where}: ${shown.map(describe).join('; ')}`);
  }
  const scenario = raw as unknown as Scenario;
  const callee = scenario.callee;
  if (callee.answers !== 'human' && callee.turns !== undefined && callee.turns.length > 0)
    refuse(`${where}: callee.turns are for a callee who answers as "human", not "${callee.answers}"`);
  if (callee.persona !== undefined && callee.answers !== 'human')
    refuse(`${where}: callee.persona is a person: it needs "answers": "human"`);
  if (callee.persona !== undefined && (callee.turns?.length ?? 0) > 0)
    refuse(`${where}: callee.persona and callee.turns are alternatives (a goal, or lines); give one`);
  if (callee.greeting !== undefined && callee.greeting_audio !== undefined)
    refuse(`${where}: callee.greeting and callee.greeting_audio are alternatives; give one`);
  for (const [index, turn] of (callee.turns ?? []).entries())
    checkTurn(`${where}: callee.turns.${index}`, turn);
  checkAudio(`${where}: callee.greeting_audio`, callee.greeting_audio);
  for (const [field, expectation] of Object.entries(scenario.expect?.data ?? {}))
    checkDataExpectation(`${where}: expect.data.${field}`, expectation);
  return scenario;
}

function checkTurn(where: string, turn: ScenarioTurn): void {
  if (
    turn.say === undefined &&
    turn.audio === undefined &&
    turn.dtmf === undefined &&
    turn.hang_up === undefined
  )
    refuse(`${where} must say, play audio, press dtmf or hang up`);
  if (turn.say !== undefined && turn.audio !== undefined)
    refuse(`${where}: say and audio are alternatives; give one`);
  if (turn.word_gap_ms !== undefined && turn.say === undefined)
    refuse(`${where}: word_gap_ms needs words to say`);
  if (turn.backchannel_after_ms !== undefined && turn.backchannel === undefined)
    refuse(`${where}: backchannel_after_ms needs a backchannel`);
  if (turn.interrupt_after_ms !== undefined && turn.pause_ms !== undefined)
    refuse(`${where}: interrupt_after_ms and pause_ms are alternatives (over the agent, or after it)`);
  checkAudio(`${where}.audio`, turn.audio);
}

function checkAudio(where: string, audio: RecordedAudio | undefined): void {
  if (audio === undefined) return;
  if (audio.end_ms <= audio.start_ms) refuse(`${where}.end_ms must be after start_ms`);
  if (audio.end_ms - audio.start_ms > 120_000) refuse(`${where} must be at most 120 s long`);
}

function checkDataExpectation(where: string, expectation: DataExpectation): void {
  if (!isObject(expectation)) return;
  if ('matches' in expectation) {
    const problem = linearPatternProblem(expectation.matches);
    if (problem !== null) refuse(`${where}.matches ${problem}`);
  }
  if ('schema' in expectation) {
    try {
      dataSchemaValidator.compile(expectation.schema);
    } catch (error) {
      refuse(`${where}.schema is not a valid JSON Schema: ${String((error as Error).message).slice(0, 160)}`);
    }
  }
}

/** Whether a value fits a data rule's schema (compiled once per schema object). */
const compiledDataSchemas = new WeakMap<object, ReturnType<Ajv['compile']>>();
export function fitsDataSchema(schema: Record<string, unknown>, value: unknown): string | null {
  let validate = compiledDataSchemas.get(schema);
  if (!validate) {
    try {
      validate = dataSchemaValidator.compile(schema);
    } catch (error) {
      // A rule stored before its patterns had to run on the linear-time engine: it cannot pass.
      return `the schema cannot be checked: ${String((error as Error).message).slice(0, 160)}`;
    }
    compiledDataSchemas.set(schema, validate);
  }
  if (validate(value)) return null;
  return (validate.errors ?? [])
    .slice(0, 2)
    .map((error) => `${error.instancePath || 'the value'} ${error.message ?? 'is invalid'}`)
    .join('; ');
}

/** The recorded stretches a scenario plays (each must be of a call of the same account). */
export function recordedAudioOf(scenario: Scenario): RecordedAudio[] {
  const found: RecordedAudio[] = [];
  if (scenario.callee.greeting_audio) found.push(scenario.callee.greeting_audio);
  for (const turn of scenario.callee.turns ?? []) if (turn.audio) found.push(turn.audio);
  return found;
}

/** The sandbox number each kind of callee is reached at (src/telephony/sandbox/personas.ts). */
const calleeNumbers: Record<ScenarioAnswerKind, string> = {
  human: '+15550100001',
  voicemail: '+15550100004',
  busy: '+15550100002',
  no_answer: '+15550100003',
  unreachable: '+15550100005',
  ivr: '+15550100013',
};
const voicemailWithoutBeep = '+15550100014';

/** The number a scenario's call dials. */
export function scenarioCalleeNumber(scenario: Scenario): string {
  if (scenario.callee.answers === 'voicemail' && scenario.callee.beep === false) return voicemailWithoutBeep;
  return calleeNumbers[scenario.callee.answers];
}

const scenarioCalleeNumbers: ReadonlySet<string> = new Set([
  ...Object.values(calleeNumbers),
  voicemailWithoutBeep,
]);

/** Whether a call to `number` can be a test call (only those dial a scenario's numbers). */
export function isScenarioCalleeNumber(number: string): boolean {
  return scenarioCalleeNumbers.has(number);
}
