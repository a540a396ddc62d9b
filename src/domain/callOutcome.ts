import type { AnsweredBy, CallStatus, EndReason } from './callStatus.js';

/** How a call ended, as the telephony layer reports it. */
export type TelephonyEnding =
  /** The service shut down: the agent finished its sentence and hung up. */
  | { kind: 'shutdown' }
  | { kind: 'sip_rejected'; status: number }
  | { kind: 'ring_timeout' }
  | { kind: 'carrier_unresponsive' }
  | { kind: 'carrier_error'; detail: string }
  | { kind: 'canceled'; answered: boolean }
  | { kind: 'callee_hangup' }
  | { kind: 'agent_hangup' }
  | { kind: 'max_duration' }
  | { kind: 'silence_timeout' }
  | { kind: 'voicemail' }
  | { kind: 'internal_error' }
  /** A speech or language provider the agent needs is missing or failed; nothing could be said. */
  | { kind: 'provider_error' }
  | { kind: 'interrupted' }
  | { kind: 'transferred' }
  | { kind: 'ivr_loop' }
  | { kind: 'do_not_call' }
  | { kind: 'outside_calling_hours' };

export interface TerminalOutcome {
  status: Extract<CallStatus, 'completed' | 'busy' | 'no_answer' | 'failed' | 'canceled'>;
  endReason: EndReason | null;
}

/**
 * DESIGN §6 and issue 3's mapping: 486/600 busy; ring timeout and 408/480 no_answer; 404/484/604
 * failed/unreachable; other 4xx-6xx failed/rejected; hang-ups and limits end an answered call as
 * completed. Busy carries end_reason `rejected` (the far end refused); no_answer carries none.
 */
export function terminalOutcomeOf(ending: TelephonyEnding): TerminalOutcome {
  switch (ending.kind) {
    case 'sip_rejected': {
      const { status } = ending;
      if (status === 486 || status === 600) return { status: 'busy', endReason: 'rejected' };
      if (status === 408 || status === 480 || status === 487) return { status: 'no_answer', endReason: null };
      if (status === 404 || status === 484 || status === 604)
        return { status: 'failed', endReason: 'unreachable' };
      return { status: 'failed', endReason: 'rejected' };
    }
    case 'ring_timeout':
      return { status: 'no_answer', endReason: null };
    case 'carrier_unresponsive':
    case 'carrier_error':
      return { status: 'failed', endReason: 'carrier_error' };
    case 'canceled':
      return { status: 'canceled', endReason: ending.answered ? 'agent_hangup' : null };
    case 'do_not_call':
      return { status: 'canceled', endReason: 'do_not_call' };
    case 'outside_calling_hours':
      return { status: 'canceled', endReason: 'outside_calling_hours' };
    case 'callee_hangup':
    case 'agent_hangup':
    case 'max_duration':
    case 'silence_timeout':
    case 'voicemail':
    case 'transferred':
    case 'ivr_loop':
      return { status: 'completed', endReason: ending.kind };
    case 'shutdown':
      // A clean end by our side, not a failure; the reason says why it was short.
      return { status: 'completed', endReason: 'interrupted' };
    case 'internal_error':
    case 'provider_error':
    case 'interrupted':
      return { status: 'failed', endReason: ending.kind };
  }
}

export interface CallResult {
  outcome: TerminalOutcome;
  answeredBy: AnsweredBy | null;
}
