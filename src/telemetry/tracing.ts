import { type Tracer, trace } from '@opentelemetry/api';
import type { Logger } from '../logger.js';
import { derivableIds } from './traceIds.js';

/** Where traces go; null: tracing off (the no-op API tracer, no SDK loaded). */
export interface TracingConfig {
  /** OTLP/HTTP traces URL, e.g. http://collector:4318/v1/traces. */
  otlpTracesUrl: string | null;
  serviceName: string;
}

export interface Tracing {
  tracer: Tracer;
  /** Whether spans go anywhere: hooks that would only feed the no-op tracer are not installed. */
  enabled: boolean;
  /** Sends what is buffered (on shutdown, and in tests). */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

const TRACER_NAME = 'callwright';

/**
 * Tracing for the process. Off: the `@opentelemetry/api` no-op tracer, and the SDK is never
 * imported (no cost). On: the SDK, loaded here only, batching spans to the OTLP/HTTP exporter
 * (JSON encoding, the exporter's default).
 */
export async function startTracing(config: TracingConfig, logger: Logger): Promise<Tracing> {
  if (!config.otlpTracesUrl) {
    return {
      tracer: trace.getTracer(TRACER_NAME),
      enabled: false,
      flush: async () => {},
      shutdown: async () => {},
    };
  }
  const [{ BasicTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
    ]);
  const exporter = new OTLPTraceExporter({ url: config.otlpTracesUrl });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName }),
    // Random ids, except a call span's, derived from its call id (src/telemetry/traceIds.ts).
    idGenerator: derivableIds,
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
  });
  logger.info({ otlpTracesUrl: redactUrl(config.otlpTracesUrl) }, 'OpenTelemetry tracing on');
  return {
    tracer: provider.getTracer(TRACER_NAME),
    enabled: true,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

/** The URL without credentials or query (a collector URL may carry a token). */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(invalid url)';
  }
}
