import { createHash, randomBytes } from 'node:crypto';
import { type Context, ROOT_CONTEXT, type SpanContext, TraceFlags, trace } from '@opentelemetry/api';

/**
 * The ids of a call's trace, derived from the call id (docs/decisions.md, "A call's trace id is
 * derived from its id"): whoever records a span of the call — the worker at the call's end, a
 * webhook worker minutes later in another process, the API that created it — finds the same trace
 * and the same call span without storing or passing any context.
 */
export interface TraceIds {
  traceId: string;
  spanId: string;
}

function hexOf(text: string, chars: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, chars);
}

/** The call's trace id (the first 16 bytes of sha256) and its call span's id (8 more bytes, apart). */
export function callTraceIds(callId: string): TraceIds {
  return {
    traceId: hexOf(`callwright.trace:${callId}`, 32),
    spanId: hexOf(`callwright.call_span:${callId}`, 16),
  };
}

/** The call span as a parent or a link target: a context whose span is the call's (remote, sampled). */
export function callSpanContext(callId: string): SpanContext {
  return { ...callTraceIds(callId), traceFlags: TraceFlags.SAMPLED, isRemote: true };
}

export function inCallSpan(callId: string): Context {
  return trace.setSpanContext(ROOT_CONTEXT, callSpanContext(callId));
}

/**
 * The SDK's id generator with one addition: `startWithIds` makes the span started inside it take
 * the given ids (the call span, whose ids are derived). Everything else gets random ids, as the
 * SDK's own generator gives.
 */
export class DerivableIdGenerator {
  private pending: Partial<TraceIds> | null = null;

  generateTraceId(): string {
    const fixed = this.pending?.traceId;
    if (fixed && this.pending) {
      this.pending.traceId = undefined;
      return fixed;
    }
    return randomBytes(16).toString('hex');
  }

  generateSpanId(): string {
    const fixed = this.pending?.spanId;
    if (fixed && this.pending) {
      this.pending.spanId = undefined;
      return fixed;
    }
    return randomBytes(8).toString('hex');
  }

  /** Runs `start` (which starts one root span, synchronously) with the given ids pending. */
  startWithIds<T>(ids: TraceIds, start: () => T): T {
    this.pending = { ...ids };
    try {
      return start();
    } finally {
      this.pending = null;
    }
  }
}

/** The one generator of the process's tracer provider (src/telemetry/tracing.ts). */
export const derivableIds = new DerivableIdGenerator();

const traceparentPattern = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;

/**
 * A W3C `traceparent` header as the parent of a server span (the caller's trace continues), or
 * null when absent or malformed (version ff, all-zero ids), as the Trace Context spec says to ignore it.
 */
export function parentFromTraceparent(header: string | string[] | undefined): Context | null {
  const value = Array.isArray(header) ? header[0] : header;
  const match = value ? traceparentPattern.exec(value.trim().toLowerCase()) : null;
  if (!match) return null;
  const [, version, traceId, spanId, flags] = match as unknown as [string, string, string, string, string];
  if (version === 'ff' || (version === '00' && value?.trim().length !== 55)) return null;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return null;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId,
    spanId,
    traceFlags: Number.parseInt(flags, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  });
}
