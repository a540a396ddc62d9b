/** The life of a call (DESIGN §2). */
export const callStatuses = [
  'queued',
  'dialing',
  'ringing',
  'in_progress',
  'completed',
  'busy',
  'no_answer',
  'failed',
  'canceled',
] as const;
export type CallStatus = (typeof callStatuses)[number];

export const terminalStatuses: ReadonlySet<CallStatus> = new Set([
  'completed',
  'busy',
  'no_answer',
  'failed',
  'canceled',
]);

export const endReasons = [
  'agent_hangup',
  'callee_hangup',
  'max_duration',
  'silence_timeout',
  'voicemail',
  'rejected',
  'unreachable',
  'carrier_error',
  'internal_error',
  'provider_error',
  'interrupted',
  /** The agent handed the call to a person (a cold transfer the far end completed). */
  'transferred',
  /** A phone menu played the same prompt over and over: the agent did not get through. */
  'ivr_loop',
  /** The number is on the account's do-not-call list: the call was never dialled. */
  'do_not_call',
  /** The callee's calling window (a campaign's, or the quiet hours) would not open again in time. */
  'outside_calling_hours',
] as const;
export type EndReason = (typeof endReasons)[number];

export const answeredByValues = ['human', 'machine', 'unknown'] as const;
export type AnsweredBy = (typeof answeredByValues)[number];

const nextStatuses: Readonly<Record<CallStatus, readonly CallStatus[]>> = {
  queued: ['dialing', 'failed', 'canceled'],
  dialing: ['ringing', 'in_progress', 'busy', 'no_answer', 'failed', 'canceled'],
  ringing: ['in_progress', 'busy', 'no_answer', 'failed', 'canceled'],
  in_progress: ['completed', 'failed', 'canceled'],
  completed: [],
  busy: [],
  no_answer: [],
  failed: [],
  canceled: [],
};

export function isCallStatus(value: string): value is CallStatus {
  return (callStatuses as readonly string[]).includes(value);
}

export function isTerminal(status: CallStatus): boolean {
  return terminalStatuses.has(status);
}

export function canTransition(from: CallStatus, to: CallStatus): boolean {
  return nextStatuses[from].includes(to);
}
