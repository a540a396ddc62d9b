import { ROOT_CONTEXT, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isIdOf } from '../domain/ids.js';
import { callSpanContext, parentFromTraceparent } from './traceIds.js';

/** The API routes that create a call; each request becomes a server span linked to the call's trace. */
export const callCreatingRoutes: ReadonlySet<string> = new Set(['/v1/calls/outbound', '/v1/web-calls']);

const callIdInBody = /"call_id":"([^"]{1,80})"/;

interface RequestTiming {
  startedAtMs: number;
  callId: string | null;
}

/**
 * A server span for each request to a route that creates a call (installed only when tracing is
 * on: no hooks, no cost when off). The span continues the client's trace when the request carries
 * a W3C `traceparent`, and links to the call span of the call it created — that call's trace is
 * its own, with ids derived from the call id (src/telemetry/traceIds.ts), so the link is known the
 * moment the response is, with nothing stored. Attributes: the method, the route pattern, the
 * status, the call id — never the URL as sent, a header or the body.
 */
export function traceCallCreations(app: FastifyInstance, tracer: Tracer): void {
  const timings = new WeakMap<FastifyRequest, RequestTiming>();
  const traced = (request: FastifyRequest) =>
    request.method === 'POST' && callCreatingRoutes.has(request.routeOptions.url ?? '');
  app.addHook('onRequest', async (request) => {
    if (traced(request)) timings.set(request, { startedAtMs: Date.now(), callId: null });
  });
  app.addHook('onSend', async (request, reply, payload) => {
    const timing = timings.get(request);
    if (timing && reply.statusCode === 200 && typeof payload === 'string') {
      const callId = callIdInBody.exec(payload)?.[1];
      if (callId && isIdOf('call', callId)) timing.callId = callId;
    }
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    const timing = timings.get(request);
    if (!timing) return;
    timings.delete(request);
    const route = request.routeOptions.url ?? '';
    const span = tracer.startSpan(
      `POST ${route}`,
      {
        kind: SpanKind.SERVER,
        startTime: timing.startedAtMs,
        attributes: {
          'http.request.method': 'POST',
          'http.route': route,
          'http.response.status_code': reply.statusCode,
          ...(timing.callId ? { 'callwright.call.id': timing.callId } : {}),
        },
        links: timing.callId
          ? [{ context: callSpanContext(timing.callId), attributes: { 'callwright.link': 'created_call' } }]
          : [],
      },
      parentFromTraceparent(request.headers.traceparent) ?? ROOT_CONTEXT,
    );
    if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
}
