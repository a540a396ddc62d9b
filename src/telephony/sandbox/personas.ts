import { isE164 } from '../../domain/phone.js';

/**
 * The sandbox carrier's callees, chosen by the user part of the Request-URI. The numbers are in
 * the fictional range +1 555 010 XXXX; every other E.164 number reaches the person.
 */

export type SandboxPersonaName =
  | 'person'
  | 'busy'
  | 'no_answer'
  | 'voicemail'
  | 'unreachable'
  | 'answers_then_hangs_up'
  | 'silent'
  | 'presses_dtmf_1'
  | 'backchannels'
  | 'interrupts'
  | 'hangs_up_mid_sentence'
  | 'refuses_transfer'
  | 'ivr'
  | 'voicemail_no_beep'
  | 'greets_briefly'
  | 'greets_at_length'
  | 'ivr_without_rfc4733';

export interface SandboxPersona {
  /** E.164 number that reaches this persona. */
  readonly number: string;
  readonly name: SandboxPersonaName;
  /** What the caller sees, in a sentence. */
  readonly description: string;
}

/** Every persona with a number of its own, in number order. The person is also the default. */
export const sandboxPersonas: readonly SandboxPersona[] = [
  {
    number: '+15550100001',
    name: 'person',
    description:
      '180, answers after one ring, replies when the agent pauses, hangs up after 6 replies or DTMF #',
  },
  { number: '+15550100002', name: 'busy', description: '100 Trying, then 486 Busy Here' },
  { number: '+15550100003', name: 'no_answer', description: '180 Ringing until the caller cancels (487)' },
  {
    number: '+15550100004',
    name: 'voicemail',
    description: 'answers, plays a greeting, a 1 kHz beep, then silence until the caller hangs up',
  },
  { number: '+15550100005', name: 'unreachable', description: '404 Not Found' },
  { number: '+15550100006', name: 'answers_then_hangs_up', description: 'answers, sends BYE after 2 s' },
  { number: '+15550100007', name: 'silent', description: 'answers and sends only silence' },
  {
    number: '+15550100008',
    name: 'presses_dtmf_1',
    description: 'answers, presses DTMF 1 (RFC 4733) after 1 s, stays on the line',
  },
  {
    number: '+15550100009',
    name: 'backchannels',
    description: 'the person, who also says "uh huh" once while the agent talks (after 1.5 s of its turn)',
  },
  {
    number: '+15550100010',
    name: 'interrupts',
    description: 'the person, who gives its first reply over the agent, 1.5 s into the greeting',
  },
  {
    number: '+15550100011',
    name: 'hangs_up_mid_sentence',
    description: 'answers, starts its reply when the agent pauses, and sends BYE halfway through it',
  },
  {
    number: '+15550100012',
    name: 'refuses_transfer',
    description:
      'answers, presses DTMF 1 after 1 s, answers a REFER with 405 (a line that does not transfer), and talks like the person',
  },
  {
    number: '+15550100013',
    name: 'ivr',
    description:
      'a phone menu: "for sales press one, for support press two", again after 3 s without a key or after a wrong one; 2 → "connecting you", then BYE',
  },
  {
    number: '+15550100014',
    name: 'voicemail_no_beep',
    description: 'answers, plays a voicemail greeting and no beep, then silence until the caller hangs up',
  },
  {
    number: '+15550100015',
    name: 'greets_briefly',
    description: 'the person, who answers with a short "Hello?" and waits',
  },
  {
    number: '+15550100016',
    name: 'greets_at_length',
    description: 'the person, who answers with a longer "Hello, Sam speaking." and waits',
  },
  {
    number: '+15550100017',
    name: 'ivr_without_rfc4733',
    description:
      'the phone menu of +15550100013 on a line that answers without telephone-event: keys reach it only as tones in the audio',
  },
];

/** The persona any other E.164 number reaches. */
export const defaultSandboxPersona: SandboxPersonaName = 'person';

const personaByNumber: ReadonlyMap<string, SandboxPersonaName> = new Map(
  sandboxPersonas.map((persona) => [persona.number, persona.name]),
);

/** Digits a persona number may be followed by: many distinct callees of one kind (a campaign's list). */
const personaExtensionDigitsMax = 4;

/**
 * The persona for a destination number; null when it is not an E.164 number at all. A persona
 * number followed by up to four more digits (`+15550100002` then `0001`) reaches that persona too,
 * so a campaign — where each number appears once — can hold thousands of busy or absent callees.
 */
export function sandboxPersonaFor(number: string): SandboxPersonaName | null {
  if (!isE164(number)) return null;
  const exact = personaByNumber.get(number);
  if (exact) return exact;
  const base = number.slice(0, '+15550100001'.length);
  const extension = number.slice(base.length);
  if (extension.length <= personaExtensionDigitsMax)
    return personaByNumber.get(base) ?? defaultSandboxPersona;
  return defaultSandboxPersona;
}

/** Caller IDs `+15550199` + four digits K: numbers a carrier labels as spam after K calls. */
const spamLabelledPrefix = '+15550199';

/**
 * How many calls the sandbox's callees answer from `fromNumber` before it is labelled as spam
 * (null: never labelled). A caller ID `+15550199` followed by four digits K is answered as the
 * callee's persona for its first K calls; from call K + 1 on, every callee lets it ring out — what
 * answer rates look like when a carrier starts labelling a number, so caller-ID health
 * (docs/campaigns.md) can be tried and benched in the sandbox (`npm run bench:callerid`).
 */
export function spamLabelledAfterCalls(fromNumber: string): number | null {
  if (!fromNumber.startsWith(spamLabelledPrefix)) return null;
  const digits = fromNumber.slice(spamLabelledPrefix.length);
  return /^\d{4}$/.test(digits) ? Number(digits) : null;
}

/** Every delay of the personas, in ms; tests pass smaller ones. */
export interface PersonaTiming {
  /** From 180 Ringing to the 200 OK, for every persona that answers ("one ring"). */
  readonly answerDelayMs: number;
  /** The person replies once the agent has been silent this long after speaking. */
  readonly replyAfterSilenceMs: number;
  /** Length of one reply of the tone voice. */
  readonly replyMs: number;
  /** Length of the voicemail greeting of the tone voice. */
  readonly greetingMs: number;
  /** Silence between the greeting and the beep. */
  readonly beepGapMs: number;
  /** Length of the 1 kHz voicemail beep. */
  readonly beepMs: number;
  /** The person's BYE follows the end of its last reply by this much. */
  readonly goodbyeMs: number;
  /** answers_then_hangs_up: from the ACK to its BYE. */
  readonly hangUpAfterMs: number;
  /** presses_dtmf_1: from the ACK to the digit. */
  readonly dtmfAfterMs: number;
  /**
   * Leak guard, not a persona trait: a call still ringing or up this long after its INVITE is
   * ended by the sandbox (480 or BYE), in case the caller vanished without CANCEL or BYE.
   */
  readonly maxCallMs: number;
}

export const defaultPersonaTiming: PersonaTiming = {
  answerDelayMs: 1_000,
  replyAfterSilenceMs: 700,
  replyMs: 400,
  greetingMs: 2_500,
  beepGapMs: 250,
  beepMs: 500,
  goodbyeMs: 300,
  hangUpAfterMs: 2_000,
  dtmfAfterMs: 1_000,
  maxCallMs: 3_600_000,
};

/** The person hangs up after this many replies. */
export const personMaxReplies = 6;

export function resolvePersonaTiming(partial: Partial<PersonaTiming> | undefined): PersonaTiming {
  const timing: PersonaTiming = { ...defaultPersonaTiming };
  for (const [name, value] of Object.entries(partial ?? {})) {
    if (value === undefined || !(name in defaultPersonaTiming)) continue;
    Object.assign(timing, { [name]: value });
  }
  for (const [name, value] of Object.entries(timing)) {
    if (!Number.isFinite(value) || value < 0) throw new RangeError(`timing.${name} must be a number ≥ 0`);
  }
  return timing;
}
