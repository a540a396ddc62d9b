import { type Attributes, type Context, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import type { CallRecord } from '../domain/records.js';

/**
 * The spans of what the agent did during the call and after it, children of the call span, from
 * what the call already records in its metrics: each tool call (`metrics.tool_calls`: every
 * request the call's tool caller made, a reply's that was taken back too), each transfer attempt
 * (`metrics.transfers`) and the post-call analysis (`metrics.analysis_timing`). Attributes: names,
 * outcomes, statuses and durations — never a tool's arguments or answer, a number, a URL.
 */
export function recordActionSpans(tracer: Tracer, inCall: Context, call: CallRecord): void {
  const timed = (name: string, timing: Record<string, unknown>, attributes: Attributes, failed: boolean) => {
    const startMs = Date.parse(String(timing.started_at));
    const durationMs = Number(timing.duration_ms);
    if (Number.isNaN(startMs) || !Number.isFinite(durationMs)) return;
    const span = tracer.startSpan(
      name,
      { startTime: startMs, attributes: { ...attributes, [`callwright.${name}.duration_ms`]: durationMs } },
      inCall,
    );
    if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end(startMs + Math.max(0, durationMs));
  };
  for (const tool of recordsOf(call.metrics?.tool_calls))
    timed(
      'tool',
      tool,
      {
        'callwright.tool.name': String(tool.tool),
        'callwright.tool.outcome': String(tool.outcome),
        ...(typeof tool.http_status === 'number' ? { 'http.response.status_code': tool.http_status } : {}),
      },
      tool.outcome !== 'ok',
    );
  for (const transfer of recordsOf(call.metrics?.transfers))
    timed(
      'transfer',
      transfer,
      {
        'callwright.transfer.target': String(transfer.target),
        'callwright.transfer.via': String(transfer.via),
        'callwright.transfer.outcome': String(transfer.outcome),
        ...(typeof transfer.sip_status === 'number' ? { 'sip.status_code': transfer.sip_status } : {}),
      },
      transfer.outcome !== 'connected',
    );
  const analysis = recordsOf([call.metrics?.analysis_timing])[0];
  if (analysis) {
    const status = call.analysis?.status ?? 'none';
    timed('analysis', analysis, { 'callwright.analysis.status': status }, status === 'failed');
  }
}

function recordsOf(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value)
    ? value.filter((item): item is Record<string, unknown> => typeof item === 'object' && item !== null)
    : [];
}
