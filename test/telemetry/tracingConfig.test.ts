import { expect, it } from 'vitest';
import { ConfigError, readTracing } from '../../src/config.js';

it('is off unless an OTLP URL is configured', () => {
  expect(readTracing({})).toEqual({ otlpTracesUrl: null, serviceName: 'callwright' });
});

it('takes CALLWRIGHT_OTLP_TRACES_URL first, then the standard traces endpoint, then the base endpoint with /v1/traces', () => {
  expect(
    readTracing({
      CALLWRIGHT_OTLP_TRACES_URL: 'http://a:4318/v1/traces',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/v1/traces',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
    }).otlpTracesUrl,
  ).toBe('http://a:4318/v1/traces');
  expect(readTracing({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/t' }).otlpTracesUrl).toBe(
    'http://b:4318/t',
  );
  expect(readTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/', OTEL_SERVICE_NAME: 'cw-1' })).toEqual({
    otlpTracesUrl: 'http://c:4318/v1/traces',
    serviceName: 'cw-1',
  });
});

it('refuses a URL that is not http(s)', () => {
  expect(() => readTracing({ CALLWRIGHT_OTLP_TRACES_URL: 'grpc://c:4317' })).toThrow(ConfigError);
});
