import { terminalOutcomeOf } from '../domain/callOutcome.js';
import { AppError } from '../domain/errors.js';
import type { CallRecord } from '../domain/records.js';
import { WebRtcLeg, type WebRtcLegOptions } from '../telephony/webrtc/webRtcLeg.js';
import type { CallWorkerContext } from './callSession.js';

/**
 * The start of a web call whose browser presented its token: the same at-most-once claim as a
 * dialled call (queued → dialing under this worker's lease, within the account's live-call cap),
 * then the WebRTC answer to the browser's offer. Every refusal after the token was used ends the
 * call with its event, so no web call is left queued by a browser that came: over the cap it
 * ends canceled (429; the browser is there now, it is not queued for later), an offer with
 * neither Opus nor PCMU audio ends it failed (400).
 */
export async function claimAndAnswerWebCall(
  context: CallWorkerContext,
  callId: string,
  offerSdp: string,
  options: { leaseMs: number; leg?: Omit<WebRtcLegOptions, 'logger'> },
): Promise<{ call: CallRecord; browser: WebRtcLeg }> {
  const nowMs = Date.now();
  const result = await context.store.calls.claimForDialing(callId, {
    workerId: context.workerId,
    untilIso: new Date(nowMs + options.leaseMs).toISOString(),
    atIso: new Date(nowMs).toISOString(),
  });
  if ('refused' in result) {
    if (result.refused === 'not_queued') throw new AppError('conflict', 'the web call has already started');
    await context.store.calls.finish(
      callId,
      { ...terminalOutcomeOf({ kind: 'canceled', answered: false }), atIso: new Date().toISOString() },
      context.buildEvent,
    );
    throw new AppError('rate_limited', 'the account is at its limit of live calls');
  }
  const log = context.logger.child({ callId });
  try {
    const browser = await WebRtcLeg.answer(offerSdp, { ...options.leg, logger: log });
    return { call: result.claimed, browser };
  } catch (error) {
    log.info({ err: error }, 'the browser offer of a web call was refused');
    await context.store.calls.finish(
      callId,
      {
        ...terminalOutcomeOf({
          kind: 'carrier_error',
          detail: 'the browser offered neither Opus nor PCMU audio',
        }),
        atIso: new Date().toISOString(),
      },
      context.buildEvent,
    );
    throw new AppError('validation_error', 'sdp must offer audio with Opus or PCMU');
  }
}
