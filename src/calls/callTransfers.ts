import type { TransferOptions } from '../domain/agentTools.js';
import { isE164 } from '../domain/phone.js';
import type { CallRecord } from '../domain/records.js';
import type { TransferDetail } from '../domain/statusEvents.js';
import { renderTemplate } from '../domain/templates.js';
import {
  digitSteps,
  summaryHeaderFor,
  transferOutcomeOf,
  withEmbeddedHeader,
} from '../domain/transferSettings.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/types.js';
import type { RtpSession } from '../telephony/rtp/index.js';
import type { OutgoingCall, TransferResult } from '../telephony/sip/index.js';
import { resample } from '../voice/providers/audio/resampler.js';
import { concatSamples } from '../voice/providers/audio/samples.js';
import { type SpeechToText, type TextToSpeech, telephoneSampleRateHz } from '../voice/providers/index.js';
import { type CallRouteOptions, inviteForCall, referToUri } from './callRoute.js';
import { startHoldAudio } from './holdAudio.js';
import { holdAudioSamples } from './holdAudioFile.js';
import { OperatorListener } from './operatorListener.js';
import { TransferLeg, type TransferLegContext } from './transferLeg.js';

/** What a call's transfers need from its session. */
export interface CallTransferParts {
  store: Store;
  call: CallRecord;
  routeOptions: CallRouteOptions;
  legContext: TransferLegContext;
  targets: Readonly<Record<string, string>>;
  options: TransferOptions;
  /** The call's own SIP dialog with the callee, and the Request-URI it was dialled at. */
  outgoing: OutgoingCall;
  requestUri: string;
  /** The callee's media: it hears the hold audio while callwright dials and briefs the target. */
  calleeRtp: RtpSession | null;
  /** The agent's voice, for the whisper to the person on a warm transfer. */
  tts: TextToSpeech;
  ttsVoice: string | undefined;
  /** The agent's recogniser, for a person who declines a warm transfer by voice. */
  stt: SpeechToText;
  logger: Logger;
  /** A leg is being dialled: the session hangs it up (CANCEL) should the call end meanwhile. */
  onDialled: (leg: TransferLeg) => void;
  /** The target leg answered and the agent is done: the session bridges it to the callee. */
  handOff: (leg: TransferLeg) => void;
  /** Each attempt's outcome, for `call.transferred`. */
  report: (detail: TransferDetail) => void;
}

/**
 * Carries out one transfer to a target of the agent, by name:
 * - cold (the default): REFER in the call's dialog; when the line refuses REFER and the target is a
 *   number, callwright dials it over the call's route and bridges the two legs (`via: bridge`);
 * - warm: callwright dials the target, says the whisper (the model's summary, else the agent's
 *   `whisper`) to the person who answers, then bridges the callee in (`via: warm`).
 * A target that does not answer (busy, no answer, unreachable) is `failed`, with the call untouched:
 * the agent goes back to the callee.
 */
export async function transferCall(
  parts: CallTransferParts,
  target: string,
  summary: string | undefined,
): Promise<TransferResult> {
  const destination = parts.targets[target];
  if (!destination) return { kind: 'failed', status: null, reason: `no transfer target ${target}` };
  const whisper =
    summary ??
    (parts.options.whisper ? renderTemplate(parts.options.whisper, parts.call.variables ?? {}) : null);
  const header =
    parts.options.summaryHeader && whisper ? summaryHeaderFor(parts.options.summaryHeader, whisper) : null;
  const attempt = { target, header, digits: parts.options.digits[target] ?? null };
  const reported = (result: TransferResult, via: TransferDetail['via']): TransferResult => {
    parts.report({
      target,
      via,
      outcome: transferOutcomeOf(result),
      sipStatus: result.status,
      reason:
        result.kind === 'transferred'
          ? null
          : result.kind === 'refused'
            ? 'the line refused REFER'
            : result.reason,
    });
    return result;
  };
  if (parts.options.warm) {
    if (!isE164(destination))
      return reported(
        { kind: 'failed', status: null, reason: 'a warm transfer needs a phone number as its target' },
        'warm',
      );
    return reported(await dialAndBridge(parts, destination, whisper, 'warm', attempt), 'warm');
  }
  parts.logger.info({ target }, 'transferring the call (REFER)');
  const referTo = referToUri(destination, parts.requestUri);
  const referred = await parts.outgoing.transfer(header ? withEmbeddedHeader(referTo, header) : referTo);
  if (referred.kind !== 'refused' || !parts.options.bridgeWhenRefused || !isE164(destination))
    return reported(referred, 'refer');
  parts.logger.info(
    { target, status: referred.status },
    'the line refused REFER: dialling the target to bridge',
  );
  return reported(await dialAndBridge(parts, destination, null, 'bridge', attempt), 'bridge');
}

interface TransferAttempt {
  target: string;
  /** The summary's SIP header on the INVITE to the target. */
  header: { name: string; value: string } | null;
  /** DTMF dialled once the target answers (`ww123`). */
  digits: string | null;
}

async function dialAndBridge(
  parts: CallTransferParts,
  destination: string,
  whisper: string | null,
  via: 'bridge' | 'warm',
  attempt: TransferAttempt,
): Promise<TransferResult> {
  const stopHoldAudio =
    parts.calleeRtp && parts.options.holdAudio !== 'none'
      ? startHoldAudio(parts.calleeRtp, await holdCycle(parts))
      : () => {};
  try {
    return await dialBriefAndHandOff(parts, destination, whisper, via, attempt);
  } finally {
    stopHoldAudio();
  }
}

async function dialBriefAndHandOff(
  parts: CallTransferParts,
  destination: string,
  whisper: string | null,
  via: 'bridge' | 'warm',
  attempt: TransferAttempt,
): Promise<TransferResult> {
  let leg: TransferLeg;
  try {
    const route = await inviteForCall(
      parts.store,
      { ...parts.call, toNumber: destination },
      parts.routeOptions,
    );
    const extraHeaders = [
      ...(route.inviteOptions.extraHeaders ?? []),
      ...(attempt.header ? [attempt.header] : []),
    ];
    leg = await TransferLeg.dial(parts.legContext, {
      ...route,
      inviteOptions: { ...route.inviteOptions, extraHeaders },
    });
    parts.onDialled(leg);
  } catch (error) {
    parts.logger.warn({ err: error }, 'the transfer target could not be dialled');
    return { kind: 'failed', status: null, reason: 'the target could not be dialled' };
  }
  const answer = await leg.answer;
  if (answer.kind === 'failed')
    return {
      kind: 'failed',
      status: answer.status,
      reason: answer.reason,
      ...(answer.noAnswer ? { noAnswer: true } : {}),
    };
  const { declineDigit, declineByVoice, waitForOperator, waitForOperatorTimeoutMs } = parts.options;
  const decline = declineDigit ? declineListener(leg.rtp, declineDigit) : null;
  const operator =
    via === 'warm' && (declineByVoice || waitForOperator)
      ? new OperatorListener(leg.rtp, declineByVoice ? parts.stt : null, parts.logger)
      : null;
  // A spoken decline cuts the brief at once, as the decline key does.
  operator?.onDecline(() => leg.rtp.clear());
  const declined = (): string | null =>
    decline?.declined
      ? 'the person declined the call'
      : operator?.declined
        ? `the person declined the call by voice ("${operator.declined.phrase}")`
        : null;
  try {
    if (attempt.digits) await dialDigits(leg.rtp, attempt.digits);
    if (operator && waitForOperator) {
      const heard = await operator.firstUtterance(waitForOperatorTimeoutMs);
      parts.logger.info(
        { target: attempt.target, heard },
        heard === 'spoke'
          ? 'the person spoke first: briefing them'
          : 'the person said nothing: briefing anyway',
      );
    }
    if (whisper && !declined()) {
      const played = await leg.rtp.play(await spoken(parts.tts, parts.ttsVoice, whisper));
      if (played.interrupted && !declined()) throw new Error('the whisper was cut');
    }
    if (!declined() && (decline || (operator && declineByVoice)))
      await Promise.all([
        decline?.within(declineGraceMs),
        declineByVoice ? operator?.settle(declineGraceMs) : null,
      ]);
    const reason = declined();
    if (reason) {
      parts.logger.info({ target: attempt.target }, reason);
      await leg.hangUp();
      return { kind: 'failed', status: null, declined: true, reason };
    }
  } catch (error) {
    parts.logger.warn({ err: error }, 'the transfer target could not be briefed');
    await leg.hangUp();
    return { kind: 'failed', status: null, reason: 'the person could not be briefed' };
  } finally {
    decline?.stop();
    operator?.stop();
  }
  parts.handOff(leg);
  return { kind: 'transferred', status: 200, via, ...(whisper && via === 'warm' ? { whisper } : {}) };
}

/** The agent's uploaded hold audio for `hold_audio: "file"`; the tone otherwise, or when none is stored. */
async function holdCycle(parts: CallTransferParts): Promise<Int16Array | undefined> {
  if (parts.options.holdAudio !== 'file') return undefined;
  const stored = await parts.store.holdAudio.get(parts.call.accountId, parts.call.agentId).catch((error) => {
    parts.logger.warn({ err: error }, 'the hold audio could not be read: playing the tone');
    return null;
  });
  if (!stored) parts.logger.warn('hold_audio is "file" but the agent has none uploaded: playing the tone');
  return stored ? holdAudioSamples(stored) : undefined;
}

/** How long after the brief the person may still press the decline key, or start saying no. */
const declineGraceMs = 2_000;

/**
 * Watches the leg for the decline key: `declined` once pressed (the brief is cut at once), and
 * `within(ms)` resolves true if it is pressed in the next `ms`.
 */
function declineListener(rtp: RtpSession, digit: string) {
  let pressed: () => void = () => {};
  const state = {
    declined: false,
    within: (ms: number) =>
      new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(state.declined), ms);
        pressed = () => {
          clearTimeout(timer);
          resolve(true);
        };
      }),
    stop: () => rtp.off('dtmf', onDtmf),
  };
  const onDtmf = (event: { digit: string }) => {
    if (event.digit !== digit || state.declined) return;
    state.declined = true;
    rtp.clear();
    pressed();
  };
  rtp.on('dtmf', onDtmf);
  return state;
}

/** Sends `ww123#` to the target as RFC 4733 events (in-band tones when it takes none), `w` a pause. */
async function dialDigits(rtp: RtpSession, digits: string): Promise<void> {
  for (const step of digitSteps(digits)) {
    if ('waitMs' in step) await new Promise((resolve) => setTimeout(resolve, step.waitMs));
    else await rtp.sendDtmf(step.digits);
  }
}

/** The whole of `text` in the agent's voice, at the telephone rate. */
async function spoken(tts: TextToSpeech, voice: string | undefined, text: string): Promise<Int16Array> {
  const pieces: Int16Array[] = [];
  for await (const chunk of tts.synthesize(text, voice ? { voice } : {}))
    pieces.push(
      chunk.sampleRateHz === telephoneSampleRateHz
        ? chunk.samples
        : resample(chunk.samples, chunk.sampleRateHz, telephoneSampleRateHz),
    );
  return concatSamples(pieces);
}
