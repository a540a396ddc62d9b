import {
  type Attributes,
  type Context,
  context,
  ROOT_CONTEXT,
  type Span,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { CallRecord } from '../domain/records.js';
import type { TurnTiming } from '../domain/turnTiming.js';
import { recordActionSpans } from './callActionSpans.js';
import { callSpanContext, callTraceIds, derivableIds } from './traceIds.js';

/**
 * A finished call's trace, built once from the timings the call already keeps (its status
 * timestamps and the turn waterfall in `metrics.turns`): no work per packet or per turn while the
 * call runs, and nothing when tracing is off (the no-op tracer). Attributes carry ids and figures
 * only — never a phone number, a key or a secret.
 *
 * Without `parent` the call span is the root of its own trace, with the trace id and span id its
 * call id gives (src/telemetry/traceIds.ts), so that the spans recorded elsewhere — webhook
 * attempts, the API request that created it — find it.
 */
export function recordCallTrace(tracer: Tracer, call: CallRecord, parent?: Context): void {
  const createdMs = Date.parse(call.createdAt);
  const endedMs = call.endedAt ? Date.parse(call.endedAt) : Date.now();
  const startCallSpan = () =>
    tracer.startSpan(
      'call',
      {
        startTime: createdMs,
        attributes: {
          'callwright.call.id': call.id,
          'callwright.agent.id': call.agentId,
          'callwright.call.status': call.status,
          ...(call.direction ? { 'callwright.call.direction': call.direction } : {}),
          ...(call.channel ? { 'callwright.call.channel': call.channel } : {}),
          ...(call.endReason ? { 'callwright.call.end_reason': call.endReason } : {}),
        },
        // An inbound call returning a recent outbound one: a link to that call's span.
        links: call.callbackOf
          ? [{ context: callSpanContext(call.callbackOf), attributes: { 'callwright.link': 'callback_of' } }]
          : [],
      },
      parent ?? ROOT_CONTEXT,
    );
  const callSpan = parent ? startCallSpan() : derivableIds.startWithIds(callTraceIds(call.id), startCallSpan);
  if (call.status === 'failed') callSpan.setStatus({ code: SpanStatusCode.ERROR });
  const inCall = trace.setSpan(context.active(), callSpan);
  const child = (name: string, fromMs: number, toMs: number, attributes: Attributes = {}): Span => {
    const span = tracer.startSpan(name, { startTime: fromMs, attributes }, inCall);
    span.end(Math.max(fromMs, toMs));
    return span;
  };
  const dialingMs = at(call.dialingAt);
  const ringingMs = at(call.ringingAt);
  const answerMs = at(call.inProgressAt);
  if (dialingMs !== null) child('dispatch', createdMs, dialingMs);
  if (dialingMs !== null) child('sip.invite', dialingMs, ringingMs ?? answerMs ?? endedMs);
  if (ringingMs !== null) child('sip.ringing', ringingMs, answerMs ?? endedMs);
  if (answerMs !== null) child('sip.answer', answerMs, answerMs);
  if (answerMs !== null) {
    for (const turn of turnsOf(call)) recordTurn(tracer, inCall, answerMs, turn);
    recordActionSpans(tracer, inCall, call);
  }
  callSpan.end(endedMs);
}

const STAGES = [
  ['end_of_turn', 'end_of_turn_ms'],
  ['stt_final', 'stt_final_ms'],
  ['llm_first_token', 'llm_first_token_ms'],
  ['tts_first_audio', 'tts_first_audio_ms'],
  ['first_audible_packet', 'first_audible_ms'],
] as const;

function recordTurn(tracer: Tracer, parent: Context, answerMs: number, turn: TurnTiming): void {
  const speechEndMs = answerMs + turn.callee_speech_end_ms;
  const lastMs = Math.max(0, ...STAGES.map(([, key]) => turn[key] ?? 0), turn.voice_to_voice_ms ?? 0);
  const span = tracer.startSpan(
    'turn',
    {
      startTime: speechEndMs,
      attributes: {
        'callwright.turn.number': turn.turn,
        'callwright.turn.end_of_turn': turn.end_of_turn,
        'callwright.turn.interrupted': turn.interrupted,
        ...(turn.voice_to_voice_ms !== null
          ? { 'callwright.turn.voice_to_voice_ms': turn.voice_to_voice_ms }
          : {}),
      },
    },
    parent,
  );
  const inTurn = trace.setSpan(parent, span);
  for (const [name, key] of STAGES) {
    const ms = turn[key];
    if (ms === null) continue;
    tracer
      .startSpan(name, { startTime: speechEndMs, attributes: { 'callwright.stage.ms': ms } }, inTurn)
      .end(speechEndMs + ms);
  }
  span.end(speechEndMs + lastMs);
}

function turnsOf(call: CallRecord): TurnTiming[] {
  const turns = call.metrics?.turns;
  return Array.isArray(turns) ? (turns as TurnTiming[]) : [];
}

function at(iso: string | null): number | null {
  return iso ? Date.parse(iso) : null;
}
