import { flag, isObject, onlyKnownFields as onlyKnown, refuse, wholeNumber } from './settingsParsing.js';

/**
 * How an agent takes turns (`settings.turn_taking`): how long it waits after the callee stops,
 * what counts as an interruption, whether it greets first, what it says to a quiet line. Every
 * field is optional; the defaults are what a careful human caller does.
 *
 * ```json
 * { "turn_taking": {
 *     "end_of_turn": { "min_wait_ms": 250, "wait_ms": 600, "max_wait_ms": 1500 },
 *     "interruptions": { "enabled": true, "min_speech_ms": 500, "min_words": 2 },
 *     "max_utterance_ms": 30000,
 *     "wait_for_callee": false,
 *     "still_there": { "text": "Are you still there?", "count": 1 } } }
 * ```
 */
export interface TurnTakingSettings {
  /** Silence after the callee's speech when the words are a complete answer. */
  minWaitMs: number;
  /** Silence after speech when the words say nothing either way (or there are none yet). */
  waitMs: number;
  /** Silence after speech that is plainly unfinished ("my number is five five…"); never longer. */
  maxWaitMs: number;
  /** False: the callee cannot interrupt the agent (a passage that must be read in full). */
  interruptionsEnabled: boolean;
  /**
   * Speech over the agent must last this long to interrupt it: shorter sounds ("mhm", "yeah", a
   * cough, a knock) are backchannels and the agent carries on.
   */
  interruptionMinSpeechMs: number;
  /**
   * Words the recogniser must hear in that speech, not all backchannels, for it to interrupt (0:
   * the duration alone); speech over the agent longer than any backchannel (1.6 s) interrupts anyway.
   */
  interruptionMinWords: number;
  /** A callee who talks longer than this without a pause is politely taken over. */
  maxUtteranceMs: number;
  /** True: the agent waits for the callee's "hello?" before its first message. */
  waitForCallee: boolean;
  /** Said when the line has been quiet for the silence timeout, `count` times, before hanging up. */
  stillThereText: string;
  stillThereCount: number;
}

export const defaultTurnTaking: TurnTakingSettings = {
  minWaitMs: 250,
  waitMs: 600,
  maxWaitMs: 1500,
  interruptionsEnabled: true,
  interruptionMinSpeechMs: 500,
  interruptionMinWords: 2,
  maxUtteranceMs: 30_000,
  waitForCallee: false,
  stillThereText: 'Are you still there?',
  stillThereCount: 1,
};

export const turnTakingLimits = {
  waitMinMs: 100,
  waitMaxMs: 5_000,
  interruptionMinSpeechMaxMs: 3_000,
  utteranceMinMs: 3_000,
  utteranceMaxMs: 120_000,
  stillThereTextMaxChars: 200,
  stillThereCountMax: 5,
} as const;

/** Checks `settings.turn_taking`; throws a 400 `validation_error` naming the first bad field. */
export function checkTurnTaking(raw: unknown): TurnTakingSettings {
  if (raw === undefined || raw === null) return { ...defaultTurnTaking };
  const where = 'settings.turn_taking';
  if (!isObject(raw)) refuse(`${where} must be an object`);
  onlyKnown(where, raw, [
    'end_of_turn',
    'interruptions',
    'max_utterance_ms',
    'wait_for_callee',
    'still_there',
  ]);
  const endOfTurn = raw.end_of_turn ?? {};
  if (!isObject(endOfTurn)) refuse(`${where}.end_of_turn must be an object`);
  onlyKnown(`${where}.end_of_turn`, endOfTurn, ['min_wait_ms', 'wait_ms', 'max_wait_ms']);
  const { waitMinMs, waitMaxMs } = turnTakingLimits;
  const minWaitMs = wholeNumber(
    `${where}.end_of_turn.min_wait_ms`,
    endOfTurn.min_wait_ms,
    waitMinMs,
    waitMaxMs,
    defaultTurnTaking.minWaitMs,
  );
  const maxWaitMs = wholeNumber(
    `${where}.end_of_turn.max_wait_ms`,
    endOfTurn.max_wait_ms,
    waitMinMs,
    waitMaxMs,
    Math.max(defaultTurnTaking.maxWaitMs, minWaitMs),
  );
  if (maxWaitMs < minWaitMs) refuse(`${where}.end_of_turn.max_wait_ms must not be less than min_wait_ms`);
  const waitMs = wholeNumber(
    `${where}.end_of_turn.wait_ms`,
    endOfTurn.wait_ms,
    minWaitMs,
    maxWaitMs,
    Math.min(maxWaitMs, Math.max(minWaitMs, defaultTurnTaking.waitMs)),
  );
  const interruptions = raw.interruptions ?? {};
  if (!isObject(interruptions)) refuse(`${where}.interruptions must be an object`);
  onlyKnown(`${where}.interruptions`, interruptions, ['enabled', 'min_speech_ms', 'min_words']);
  const stillThere = raw.still_there ?? {};
  if (!isObject(stillThere)) refuse(`${where}.still_there must be an object`);
  onlyKnown(`${where}.still_there`, stillThere, ['text', 'count']);
  const text = stillThere.text ?? defaultTurnTaking.stillThereText;
  if (typeof text !== 'string' || text.trim() === '' || text.length > turnTakingLimits.stillThereTextMaxChars)
    refuse(
      `${where}.still_there.text must be a text of 1 to ${turnTakingLimits.stillThereTextMaxChars} characters`,
    );
  return {
    minWaitMs,
    waitMs,
    maxWaitMs,
    interruptionsEnabled: flag(`${where}.interruptions.enabled`, interruptions.enabled, true),
    interruptionMinSpeechMs: wholeNumber(
      `${where}.interruptions.min_speech_ms`,
      interruptions.min_speech_ms,
      100,
      turnTakingLimits.interruptionMinSpeechMaxMs,
      defaultTurnTaking.interruptionMinSpeechMs,
    ),
    interruptionMinWords: wholeNumber(
      `${where}.interruptions.min_words`,
      interruptions.min_words,
      0,
      5,
      defaultTurnTaking.interruptionMinWords,
    ),
    maxUtteranceMs: wholeNumber(
      `${where}.max_utterance_ms`,
      raw.max_utterance_ms,
      turnTakingLimits.utteranceMinMs,
      turnTakingLimits.utteranceMaxMs,
      defaultTurnTaking.maxUtteranceMs,
    ),
    waitForCallee: flag(`${where}.wait_for_callee`, raw.wait_for_callee, false),
    stillThereText: text,
    stillThereCount: wholeNumber(
      `${where}.still_there.count`,
      stillThere.count,
      0,
      turnTakingLimits.stillThereCountMax,
      defaultTurnTaking.stillThereCount,
    ),
  };
}
