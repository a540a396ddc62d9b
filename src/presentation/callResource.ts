import type { CallRecord } from '../domain/records.js';

/** The creation response: exactly the six fields of SPEC.md's outbound call resource. */
export function toCreatedCall(call: CallRecord) {
  return {
    call_id: call.id,
    status: call.status,
    agent_id: call.agentId,
    to_number: call.toNumber,
    from_number: call.fromNumber,
    created_at: call.createdAt,
  };
}

function durationSeconds(call: CallRecord): number | null {
  if (!call.inProgressAt || !call.endedAt) return null;
  return Math.round((Date.parse(call.endedAt) - Date.parse(call.inProgressAt)) / 100) / 10;
}

/**
 * The full call record of the `GET /v1/calls` extension (DESIGN §3). `recordingUrl` is the signed
 * link to the call's WAV (the one the call.completed event carries), null when it has none.
 */
export function toCallResource(call: CallRecord, recordingUrl: string | null = null) {
  const timeline = [
    { status: 'queued', at: call.createdAt },
    { status: 'dialing', at: call.dialingAt },
    { status: 'ringing', at: call.ringingAt },
    { status: 'in_progress', at: call.inProgressAt },
  ].filter((entry): entry is { status: string; at: string } => entry.at !== null);
  if (call.endedAt) timeline.push({ status: call.status, at: call.endedAt });
  return {
    ...toCreatedCall(call),
    // Extension (issue 39): 'web' for a call from a browser, whose numbers are empty.
    channel: call.channel,
    // Extension (issue 40): 'inbound' when someone called one of our numbers (to_number is ours).
    direction: call.direction,
    callback_of: call.callbackOf,
    first_message: call.firstMessage,
    context: call.context,
    variables: call.variables,
    end_reason: call.endReason,
    answered_by: call.answeredBy,
    dialed_at: call.dialingAt,
    answered_at: call.inProgressAt,
    ended_at: call.endedAt,
    duration_seconds: durationSeconds(call),
    timeline,
    transcript: call.transcript,
    recording_url: recordingUrl,
    extracted_data: call.extractedData,
    analysis: call.analysis,
    metrics: call.metrics,
  };
}
