import type { TurnShape } from '../domain/turnTiming.js';
import { normalizeSpeech } from './brains/dialogScript.js';

/**
 * What the callee's words so far say about their turn, for how long to wait after they stop:
 * `complete` (an expected phrase, the recogniser's end of speech, a sentence ending: a short wait),
 * `unfinished` ("I think…", "my number is five five five": a long wait), or `unknown`. Pure text
 * rules, no I/O.
 */
export type { TurnShape };

/** Words after which nobody stops on purpose. */
const danglingWords = new Set([
  'a',
  'an',
  'the',
  'and',
  'but',
  'or',
  'so',
  'because',
  'if',
  'then',
  'to',
  'of',
  'for',
  'with',
  'at',
  'in',
  'on',
  'my',
  'your',
  'our',
  'is',
  'was',
  'are',
  'be',
  'um',
  'uh',
  'er',
  'erm',
  'hmm',
  'i',
  'think',
  'like',
  'maybe',
  'it',
  "it's",
  "i'm",
  'we',
  "we're",
  'would',
  'could',
  'can',
  'about',
  'actually',
  'well',
]);

const digitWords = new Set([
  'zero',
  'oh',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'double',
  'triple',
]);

/** A run of spoken digits shorter than this at the end of a turn is a number still being said. */
const numberDigitsMin = 7;

export interface TurnWords {
  /** The recogniser's latest hypothesis of the turn (partial), as it gave it. */
  text: string;
  /** The phrases the callee is expected to say (grammar mode); undefined for free speech. */
  expectedPhrases?: readonly string[];
  /** The recogniser said the speech is over (Deepgram's speech_final). */
  recognizerEnded?: boolean;
}

export function turnShapeOf({ text, expectedPhrases, recognizerEnded }: TurnWords): TurnShape {
  const trimmed = text.trim();
  const normalized = normalizeSpeech(trimmed);
  if (!normalized) return 'unknown';
  const words = normalized.split(' ');
  const last = words.at(-1) as string;
  let trailingDigits = 0;
  for (let index = words.length - 1; index >= 0 && digitWords.has(words[index] as string); index--)
    trailingDigits++;
  const digitsStillComing = trailingDigits > 0 && trailingDigits < numberDigitsMin && !/[.!?]$/.test(trimmed);
  if (/(\.\.\.|…|,|-)$/.test(trimmed) || danglingWords.has(last) || digitsStillComing) return 'unfinished';
  if (recognizerEnded) return 'complete';
  if (expectedPhrases?.some((phrase) => normalizeSpeech(phrase) === normalized)) return 'complete';
  if (/[.!?]$/.test(trimmed)) return 'complete';
  return 'unknown';
}

/** The silence that ends a turn of this shape, within the agent's bounds. */
export function endOfTurnWaitMs(
  shape: TurnShape,
  settings: { minWaitMs: number; waitMs: number; maxWaitMs: number },
): number {
  if (shape === 'complete') return settings.minWaitMs;
  if (shape === 'unfinished') return settings.maxWaitMs;
  return settings.waitMs;
}

/** Sounds a listener makes to say "go on" — never a turn of their own, never an interruption. */
const backchannelWords = new Set([
  'mhm',
  'mm',
  'hmm',
  'uh',
  'huh',
  'um',
  'yeah',
  'yes',
  'yep',
  'yup',
  'ok',
  'okay',
  'right',
  'sure',
  'uh-huh',
  'aha',
  'ah',
  'oh',
  'i',
  'see',
  'got',
  'it',
]);

/** Backchannels as grammar phrases (words the offline recogniser's dictionary has). */
export const backchannelPhrases = ['mhm', 'uh huh', 'yeah', 'okay', 'right', 'sure', 'i see', 'hmm'];

/** True when `text` is only backchannel words ("mhm", "yeah okay", "right") or nothing at all. */
export function isBackchannel(text: string): boolean {
  const normalized = normalizeSpeech(text);
  if (!normalized) return true;
  const words = normalized.split(' ');
  return words.length <= 3 && words.every((word) => backchannelWords.has(word));
}

/**
 * True when the words heard over the agent make an interruption: at least `minWords` of them, not
 * all backchannels ("wait I have…", "no that's wrong"; not "mhm", "yeah okay").
 */
export function interruptingWords(text: string, minWords: number): boolean {
  const normalized = normalizeSpeech(text);
  const words = normalized ? normalized.split(' ') : [];
  if (words.length < minWords) return false;
  return minWords === 0 || !words.every((word) => backchannelWords.has(word));
}
