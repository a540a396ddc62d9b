import { expect, it } from 'vitest';
import { ConfigError, readOtlpMetrics } from '../../src/config.js';

it('is off unless an OTLP URL is configured, and exports every 60 s by default', () => {
  expect(readOtlpMetrics({})).toEqual({
    otlpMetricsUrl: null,
    exportIntervalMs: 60_000,
    serviceName: 'callwright',
  });
});

it('takes CALLWRIGHT_OTLP_METRICS_URL first, then the standard metrics endpoint, then the base endpoint with /v1/metrics', () => {
  expect(
    readOtlpMetrics({
      CALLWRIGHT_OTLP_METRICS_URL: 'http://a:4318/v1/metrics',
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://b:4318/v1/metrics',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
    }).otlpMetricsUrl,
  ).toBe('http://a:4318/v1/metrics');
  expect(readOtlpMetrics({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://b:4318/m' }).otlpMetricsUrl).toBe(
    'http://b:4318/m',
  );
  expect(
    readOtlpMetrics({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/',
      OTEL_SERVICE_NAME: 'cw-1',
      OTEL_METRIC_EXPORT_INTERVAL: '15000',
    }),
  ).toEqual({ otlpMetricsUrl: 'http://c:4318/v1/metrics', exportIntervalMs: 15_000, serviceName: 'cw-1' });
});

it('refuses a URL that is not http(s), and an interval that is not a number of ms', () => {
  expect(() => readOtlpMetrics({ CALLWRIGHT_OTLP_METRICS_URL: 'grpc://c:4317' })).toThrow(ConfigError);
  expect(() => readOtlpMetrics({ OTEL_METRIC_EXPORT_INTERVAL: '1m' })).toThrow(ConfigError);
  expect(() => readOtlpMetrics({ OTEL_METRIC_EXPORT_INTERVAL: '0' })).toThrow(ConfigError);
});
