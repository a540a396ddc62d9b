import type { CallRecord } from '../domain/records.js';
import type { Logger } from '../logger.js';
import type { RtpSession } from '../telephony/rtp/index.js';
import type { OutgoingCall, TransferResult } from '../telephony/sip/index.js';
import type { CallVoice } from '../voice/voiceStack.js';
import type { CallRouteOptions } from './callRoute.js';
import type { CallStatusEvents } from './callStatusEvents.js';
import { transferCall } from './callTransfers.js';
import type { TransferLeg } from './transferLeg.js';
import { startTransferTiming, type TransferTiming } from './transferTiming.js';

/** What a call's transfers need of the call session, read when a transfer starts. */
export interface SessionTransferContext {
  store: Parameters<typeof transferCall>[0]['store'];
  legContext: Parameters<typeof transferCall>[0]['legContext'];
  log: Logger;
  statusEvents: CallStatusEvents;
  /** The call as the whisper renders it (variables as the tools' answers left them). */
  callForWhisper(): CallRecord;
  routeOptions(): CallRouteOptions;
  voice(): CallVoice | null;
  outgoing(): OutgoingCall | null;
  requestUri(): string | undefined;
  calleeRtp(): RtpSession | null;
  /** Whether the call is already ending from our side (a leg answering then is hung up). */
  ending(): boolean;
  /** The target hung up a bridged call: the call ends. */
  targetHungUp(): void;
}

/**
 * A call's transfers (src/calls/callTransfers.ts does one): the second leg from its INVITE, whether
 * it answered and was briefed (then the callee is bridged to it when the agent leaves), and each
 * attempt's timing for `metrics.transfers` and the call's trace.
 */
export class SessionTransfers {
  /** The latest transfer leg, from its INVITE; hung up with the call. */
  private leg: TransferLeg | null = null;
  private legAnswered = false;
  readonly timings: TransferTiming[] = [];

  constructor(private readonly session: SessionTransferContext) {}

  /** The leg to bridge the callee to when the agent leaves: answered and briefed; else null. */
  get answeredLeg(): TransferLeg | null {
    return this.legAnswered ? this.leg : null;
  }

  hangUp(): void {
    void this.leg?.hangUp();
  }

  /** A transfer to one of the agent's targets; the call stays up until it succeeds. */
  transferTo(target: string, summary: string | undefined): Promise<TransferResult> {
    const { session } = this;
    const voice = session.voice();
    const outgoing = session.outgoing();
    const requestUri = session.requestUri();
    if (!voice || !outgoing || !requestUri)
      return Promise.resolve({ kind: 'failed', status: null, reason: `no transfer target ${target}` });
    const timing = startTransferTiming(target);
    return transferCall(
      {
        store: session.store,
        call: session.callForWhisper(),
        routeOptions: session.routeOptions(),
        legContext: session.legContext,
        targets: voice.transferTargets,
        options: voice.transferOptions,
        outgoing,
        requestUri,
        calleeRtp: session.calleeRtp(),
        tts: voice.tts,
        ttsVoice: voice.ttsVoice,
        stt: voice.stt,
        logger: session.log,
        onDialled: (leg) => {
          void this.leg?.hangUp();
          this.leg = leg;
        },
        handOff: (leg) => {
          if (session.ending()) return void leg.hangUp();
          this.legAnswered = true;
          void leg.ended.then(() => session.targetHungUp());
        },
        report: (detail) => {
          timing.reported(detail);
          session.statusEvents.transferred(detail);
        },
      },
      target,
      summary,
    ).then((result) => {
      this.timings.push(timing.over(result));
      return result;
    });
  }
}
