import type { CallRecord } from '../domain/records.js';
import type { CallCost } from './usage.js';

function durationSeconds(call: CallRecord): number | null {
  if (!call.inProgressAt || !call.endedAt) return null;
  return Math.round((Date.parse(call.endedAt) - Date.parse(call.inProgressAt)) / 100) / 10;
}

/**
 * The `call.completed` event of DESIGN §4, built from a terminal call. Fields with nothing to say
 * yet (no transcript before the voice agent, no recording) are present and empty, never invented.
 */
export function callCompletedEvent(
  call: CallRecord,
  event: { id: string; createdAt: string; recordingUrl: string | null },
) {
  const metrics = call.metrics as { response_latency_ms?: unknown; turns?: unknown; cost?: CallCost } | null;
  const latency = metrics?.response_latency_ms;
  const turns = metrics?.turns;
  const cost = metrics?.cost;
  return {
    type: 'call.completed' as const,
    id: event.id,
    created_at: event.createdAt,
    data: {
      call_id: call.id,
      agent_id: call.agentId,
      from_number: call.fromNumber,
      to_number: call.toNumber,
      // Extension (issue 39): 'phone', or 'web' for a call from a browser (its numbers are empty).
      channel: call.channel,
      // Extension (issue 40): 'inbound' when the caller rang one of our numbers; the earlier call it returns.
      direction: call.direction,
      callback_of: call.callbackOf,
      status: call.status,
      end_reason: call.endReason,
      answered_by: call.answeredBy,
      created_at: call.createdAt,
      dialed_at: call.dialingAt,
      answered_at: call.inProgressAt,
      ended_at: call.endedAt,
      duration_seconds: durationSeconds(call),
      transcript: call.transcript,
      recording_url: event.recordingUrl,
      extracted_data: call.extractedData,
      // Extension: the post-call analysis (null for a call that was not answered).
      analysis: call.analysis,
      variables: call.variables ?? {},
      metrics: {
        response_latency_ms: latency ?? { p50: null, p95: null },
        // Extension: each turn's latency waterfall (absent for a call without turns of the pipeline).
        ...(Array.isArray(turns) ? { turns } : {}),
      },
      // Extension: what the call cost, by stage (null for a call that never reached a voice).
      cost: cost ? { currency: cost.currency, total_usd: cost.total_usd, by_stage: cost.by_stage } : null,
    },
  };
}
