import type { Logger } from '../logger.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import { redactUrl } from './tracing.js';

/** Where metrics go over OTLP; null URL: off (nothing but /metrics, no SDK loaded). */
export interface MetricsExportConfig {
  /** OTLP/HTTP metrics URL, e.g. http://collector:4318/v1/metrics. */
  otlpMetricsUrl: string | null;
  /** Between two exports (OTEL_METRIC_EXPORT_INTERVAL, 60 s by default). */
  exportIntervalMs: number;
  serviceName: string;
}

export interface MetricsExport {
  /** Collects and sends now (in tests, and before shutdown). */
  flush(): Promise<void>;
  /** Sends a last collection and stops. */
  shutdown(): Promise<void>;
}

const METER_NAME = 'callwright';

/**
 * The registry's series over OTLP/HTTP (JSON), under the same names as on /metrics. Nothing is
 * recorded twice: each collection reads the registry's gauges and counters (observable instruments
 * whose callbacks are the registry's own `read()`), and each histogram observation the registry
 * takes is passed on as it happens. Off: the SDK is never imported. Call it once every series is
 * registered (the voice's and the workers' included): later ones are not exported.
 */
export async function startMetricsExport(
  config: MetricsExportConfig,
  registry: MetricsRegistry,
  logger: Logger,
): Promise<MetricsExport> {
  if (!config.otlpMetricsUrl) return { flush: async () => {}, shutdown: async () => {} };
  const [
    { MeterProvider, PeriodicExportingMetricReader },
    { OTLPMetricExporter },
    { resourceFromAttributes },
  ] = await Promise.all([
    import('@opentelemetry/sdk-metrics'),
    import('@opentelemetry/exporter-metrics-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const reader = new PeriodicExportingMetricReader({
    exporter: new OTLPMetricExporter({ url: config.otlpMetricsUrl }),
    exportIntervalMillis: config.exportIntervalMs,
    exportTimeoutMillis: Math.min(30_000, config.exportIntervalMs),
  });
  const provider = new MeterProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName }),
    readers: [reader],
  });
  const meter = provider.getMeter(METER_NAME);
  const unitOf = (name: string) => (name.endsWith('_seconds') ? 's' : '1');
  for (const source of registry.gauges) {
    const options = { description: source.help, unit: unitOf(source.name) };
    const instrument =
      source.type === 'counter'
        ? meter.createObservableCounter(source.name, options)
        : meter.createObservableGauge(source.name, options);
    instrument.addCallback(async (result) => {
      try {
        for (const sample of await source.read()) result.observe(sample.value, sample.labels);
      } catch (error) {
        // A store that is briefly unreachable: this series is missing from one export.
        logger.debug({ err: error, metric: source.name }, 'a metric could not be read for OTLP');
      }
    });
  }
  for (const histogram of registry.histograms) {
    const instrument = meter.createHistogram(histogram.name, {
      description: histogram.help,
      unit: unitOf(histogram.name),
      advice: { explicitBucketBoundaries: [...histogram.bucketsUpperBounds] },
    });
    histogram.onObserve((value, labels) => instrument.record(value, labels));
  }
  logger.info(
    { otlpMetricsUrl: redactUrl(config.otlpMetricsUrl), exportIntervalMs: config.exportIntervalMs },
    'OpenTelemetry metrics on',
  );
  return {
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
