import { ROOT_CONTEXT, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { inCallSpan } from './traceIds.js';

/** One webhook delivery attempt, as the delivery worker saw it. */
export interface WebhookAttemptTiming {
  eventId: string;
  eventType: string;
  /** The call the event is about (its trace); null: a campaign's event, a trace of its own. */
  callId: string | null;
  /** 1 for the first attempt. */
  attempt: number;
  startedAtMs: number;
  endedAtMs: number;
  /** The HTTP status, or null when no response came. */
  statusCode: number | null;
  /** What the worker does next: delivered, retry, failed (schedule exhausted), gone (410). */
  outcome: string;
  /** Why it failed, as a category: `http_<status>`, `no_response`; null when delivered. */
  errorKind: string | null;
}

/**
 * A `webhook.attempt` span under the call span of the event's call, whichever process delivers it
 * and however long after the call: the call's trace id and span id come from its id. Attributes:
 * the event's id and type, the attempt number, the status and what follows — never the endpoint's
 * URL (it may carry a token) nor the body.
 */
export function recordWebhookAttempt(tracer: Tracer, attempt: WebhookAttemptTiming): void {
  const span = tracer.startSpan(
    'webhook.attempt',
    {
      startTime: attempt.startedAtMs,
      attributes: {
        'callwright.event.id': attempt.eventId,
        'callwright.event.type': attempt.eventType,
        ...(attempt.callId ? { 'callwright.call.id': attempt.callId } : {}),
        'callwright.webhook.attempt': attempt.attempt,
        'callwright.webhook.outcome': attempt.outcome,
        'callwright.webhook.duration_ms': Math.max(0, attempt.endedAtMs - attempt.startedAtMs),
        ...(attempt.statusCode !== null ? { 'http.response.status_code': attempt.statusCode } : {}),
        ...(attempt.errorKind ? { 'error.type': attempt.errorKind } : {}),
      },
    },
    attempt.callId ? inCallSpan(attempt.callId) : ROOT_CONTEXT,
  );
  if (attempt.outcome !== 'delivered') span.setStatus({ code: SpanStatusCode.ERROR });
  span.end(Math.max(attempt.startedAtMs, attempt.endedAtMs));
}
