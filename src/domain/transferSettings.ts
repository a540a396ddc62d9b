import { isObject, refuse } from './settingsParsing.js';

/**
 * The parts of `settings.transfer` beyond its targets, warm and whisper (src/domain/agentTools.ts):
 *
 * ```json
 * { "transfer": {
 *     "targets": { "billing": "+15550100015" },
 *     "warm": true,
 *     "hold_audio": "tone",
 *     "summary_header": "X-Call-Summary",
 *     "digits": { "billing": "ww123#" } } }
 * ```
 *
 * - `hold_audio`: what the callee hears while callwright dials, briefs and bridges the target
 *   (`tone`, the default: a soft beep every two seconds; `file`: the agent's uploaded WAV in a loop,
 *   `PUT /v1/agents/{id}/hold_audio`, the tone while none is uploaded; `none`: silence).
 * - `summary_header`: the SIP header that carries the transfer's summary to the target: an `X-`
 *   header (the text, cleaned) or `User-to-User` (RFC 7433, the UTF-8 bytes hex-encoded). On the
 *   INVITE when callwright dials the target, embedded in the Refer-To URI of a REFER.
 * - `digits`: per target, DTMF (RFC 4733) sent once the target answers, before the briefing; `w`
 *   waits half a second. Only where callwright dials the target itself (`warm`).
 * - `decline_digit`: the key (`"2"`) the person who answers a warm transfer presses, during the
 *   brief or within 2 s after it, to decline: the leg is hung up and the agent goes back to the
 *   callee, told so. Absent: no declining, and no wait after the brief.
 * - `decline_by_voice`: the person who answers a warm transfer may also decline by saying so ("no",
 *   "I can't take it", "decline"…), before, during or within 2 s after the brief: recognised on the
 *   target's leg against a small grammar of decline and neutral phrases, so only a clear decline
 *   phrase declines (src/calls/operatorListener.ts). Needs `warm`.
 * - `wait_for_operator`: on a warm transfer the agent waits, once the target answers, for the person
 *   to speak first ("Hello?") and finish before briefing them; after `wait_for_operator_timeout_ms`
 *   (1000–30000, default 5000) of silence it briefs anyway — a person who picked up without a word
 *   is still on the line, and a brief nobody hears costs less than dropping a caller who waited.
 */

export const holdAudioKinds = ['tone', 'file', 'none'] as const;
export type HoldAudio = (typeof holdAudioKinds)[number];

export const transferExtraLimits = {
  /** Characters of the summary an `X-` header carries after cleaning. */
  headerTextMaxChars: 200,
  /** Bytes of the summary a User-to-User header carries (ISDN UUI carries at most 128). */
  userToUserMaxBytes: 128,
  digitsMaxChars: 32,
  /** What one `w` in `digits` waits. */
  digitsWaitMs: 500,
  waitForOperatorMinMs: 1_000,
  waitForOperatorMaxMs: 30_000,
  waitForOperatorDefaultMs: 5_000,
} as const;

export interface TransferExtras {
  holdAudio: HoldAudio;
  /** The key the person who answers a warm transfer presses to decline it; null: no declining. */
  declineDigit: string | null;
  /** The header name as configured (`X-…` or `User-to-User`); null: no header. */
  summaryHeader: string | null;
  /** Target name → digits to dial after it answers. */
  digits: Record<string, string>;
  /** The person who answers may decline by voice ("no", "I can't take it"). */
  declineByVoice: boolean;
  /** The agent briefs only once the person has spoken, or after `waitForOperatorTimeoutMs`. */
  waitForOperator: boolean;
  waitForOperatorTimeoutMs: number;
}

export const defaultTransferExtras: TransferExtras = {
  holdAudio: 'tone',
  declineDigit: null,
  summaryHeader: null,
  digits: {},
  declineByVoice: false,
  waitForOperator: false,
  waitForOperatorTimeoutMs: transferExtraLimits.waitForOperatorDefaultMs,
};

export const transferExtraFields = [
  'hold_audio',
  'summary_header',
  'digits',
  'decline_digit',
  'decline_by_voice',
  'wait_for_operator',
  'wait_for_operator_timeout_ms',
] as const;

/** Checks `hold_audio`, `summary_header` and `digits` of `settings.transfer` (already an object with targets). */
export function checkTransferExtras(raw: Record<string, unknown>): TransferExtras {
  const { hold_audio: hold, summary_header: header, digits, targets, warm, decline_digit: decline } = raw;
  if (decline !== undefined) {
    if (typeof decline !== 'string' || !/^[0-9*#]$/.test(decline))
      refuse('settings.transfer.decline_digit must be one key: 0-9, * or #');
    if (warm !== true)
      refuse('settings.transfer.decline_digit needs warm: true (only a briefed person can decline)');
  }
  if (hold !== undefined && !holdAudioKinds.includes(hold as HoldAudio))
    refuse(`settings.transfer.hold_audio must be one of ${holdAudioKinds.join(', ')}`);
  if (
    header !== undefined &&
    (typeof header !== 'string' ||
      !(/^X-[A-Za-z0-9-]{1,60}$/i.test(header) || header.toLowerCase() === 'user-to-user'))
  )
    refuse('settings.transfer.summary_header must be an X- header name (X-Call-Summary) or User-to-User');
  const dialled: Record<string, string> = {};
  if (digits !== undefined) {
    if (!isObject(digits))
      refuse('settings.transfer.digits must map target names to digits ({"billing": "ww123"})');
    if (warm !== true)
      refuse(
        'settings.transfer.digits needs warm: true (callwright must dial the target itself to send digits)',
      );
    const known = isObject(targets) ? Object.keys(targets) : [];
    for (const [name, value] of Object.entries(digits)) {
      if (!known.includes(name))
        refuse(`settings.transfer.digits.${name.slice(0, 40)} is not one of settings.transfer.targets`);
      if (
        typeof value !== 'string' ||
        value.length > transferExtraLimits.digitsMaxChars ||
        !/^[wW]*[0-9*#A-D][0-9*#A-DwW]*$/.test(value)
      )
        refuse(
          `settings.transfer.digits.${name} must be 1 to ${transferExtraLimits.digitsMaxChars} of 0-9 * # A-D, with w for a half-second wait`,
        );
      dialled[name] = value;
    }
  }
  return {
    holdAudio: (hold as HoldAudio | undefined) ?? 'tone',
    declineDigit: typeof decline === 'string' ? decline : null,
    summaryHeader: typeof header === 'string' ? header : null,
    digits: dialled,
    ...checkOperatorSettings(raw),
  };
}

/** `decline_by_voice`, `wait_for_operator` and its timeout: only a warm transfer briefs a person. */
function checkOperatorSettings(
  raw: Record<string, unknown>,
): Pick<TransferExtras, 'declineByVoice' | 'waitForOperator' | 'waitForOperatorTimeoutMs'> {
  const {
    warm,
    decline_by_voice: byVoice,
    wait_for_operator: wait,
    wait_for_operator_timeout_ms: timeoutMs,
  } = raw;
  for (const [name, value] of [
    ['decline_by_voice', byVoice],
    ['wait_for_operator', wait],
  ] as const) {
    if (value === undefined) continue;
    if (typeof value !== 'boolean') refuse(`settings.transfer.${name} must be true or false`);
    if (value && warm !== true)
      refuse(`settings.transfer.${name} needs warm: true (only a briefed person is listened to)`);
  }
  const { waitForOperatorMinMs: min, waitForOperatorMaxMs: max } = transferExtraLimits;
  if (timeoutMs !== undefined) {
    if (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs < min || timeoutMs > max)
      refuse(`settings.transfer.wait_for_operator_timeout_ms must be a whole number from ${min} to ${max}`);
    if (wait !== true) refuse('settings.transfer.wait_for_operator_timeout_ms needs wait_for_operator: true');
  }
  return {
    declineByVoice: byVoice === true,
    waitForOperator: wait === true,
    waitForOperatorTimeoutMs:
      typeof timeoutMs === 'number' ? timeoutMs : transferExtraLimits.waitForOperatorDefaultMs,
  };
}

/** `ww123` as the pieces dialled: waits (ms) and runs of digits. */
export function digitSteps(digits: string): Array<{ waitMs: number } | { digits: string }> {
  const steps: Array<{ waitMs: number } | { digits: string }> = [];
  for (const run of digits.match(/[wW]+|[^wW]+/g) ?? [])
    steps.push(
      /^[wW]/.test(run) ? { waitMs: run.length * transferExtraLimits.digitsWaitMs } : { digits: run },
    );
  return steps;
}

/**
 * The summary as a SIP header: control characters (CR, LF, tabs…) become spaces, runs of spaces
 * one, then the text is cut — to 200 characters in an `X-` header; to 128 UTF-8 bytes, hex-encoded
 * with `;encoding=hex`, in User-to-User (RFC 7433 §4.1). Null when nothing is left to say.
 */
export function summaryHeaderFor(name: string, summary: string): { name: string; value: string } | null {
  const clean = [...summary]
    .map((char) => (isControl(char) ? ' ' : char))
    .join('')
    .replace(/\s+/g, ' ')
    .trim();
  if (clean === '') return null;
  if (name.toLowerCase() === 'user-to-user') {
    let bytes = Buffer.from(clean, 'utf8');
    if (bytes.length > transferExtraLimits.userToUserMaxBytes) {
      // Cut on a character boundary: never half a UTF-8 sequence.
      let end = transferExtraLimits.userToUserMaxBytes;
      while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
      bytes = bytes.subarray(0, end);
    }
    return { name: 'User-to-User', value: `${bytes.toString('hex')};encoding=hex` };
  }
  const chars = [...clean];
  const text =
    chars.length > transferExtraLimits.headerTextMaxChars
      ? chars.slice(0, transferExtraLimits.headerTextMaxChars).join('')
      : clean;
  return { name, value: text };
}

/** C0 and C1 control characters (CR, LF, tab, NUL…) and the Unicode line and paragraph separators. */
function isControl(char: string): boolean {
  const code = char.codePointAt(0) ?? 0;
  return code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029;
}

/**
 * A Refer-To URI carrying `header` as an embedded URI header (RFC 3261 §19.1.1), so the INVITE the
 * far end sends to the target carries it (RFC 7433 §4.2 for User-to-User).
 */
export function withEmbeddedHeader(uri: string, header: { name: string; value: string }): string {
  const separator = uri.includes('?') ? '&' : '?';
  return `${uri}${separator}${encodeURIComponent(header.name)}=${encodeURIComponent(header.value)}`;
}

/** How a transfer ended, as `call.transferred` says it. */
export const transferOutcomes = ['connected', 'declined', 'no_answer', 'busy', 'refused', 'failed'] as const;
export type TransferOutcome = (typeof transferOutcomes)[number];

/** A transfer's outcome from how it went: the SIP status of the target's answer decides. */
export function transferOutcomeOf(
  result:
    | { kind: 'transferred' }
    | { kind: 'refused'; status: number }
    | { kind: 'failed'; status: number | null; noAnswer?: boolean; declined?: boolean },
): TransferOutcome {
  if (result.kind === 'transferred') return 'connected';
  if (result.kind === 'failed' && result.declined) return 'declined';
  if (result.kind === 'refused') return 'refused';
  if (result.noAnswer || result.status === 408 || result.status === 480 || result.status === 487)
    return 'no_answer';
  if (result.status === 486 || result.status === 600) return 'busy';
  return 'failed';
}
