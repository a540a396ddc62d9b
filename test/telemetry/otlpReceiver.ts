import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as the OTLP/HTTP JSON encoding carries it (ExportTraceServiceRequest). */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: { key: string; value: Record<string, unknown> }[];
  links?: { traceId: string; spanId: string; attributes?: OtlpSpan['attributes'] }[];
  status?: { code?: number; message?: string };
}

export interface OtlpReceiver {
  /** The URL to export to (…/v1/traces). */
  url: string;
  spans: OtlpSpan[];
  /** Every request body as it came, to scan for what must never leave. */
  bodies: string[];
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A real OTLP/HTTP traces endpoint on loopback: it takes what the SDK's exporter POSTs to
 * /v1/traces in its JSON encoding and decodes the spans.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: OtlpSpan[] = [];
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    void readBody(req).then((body) => {
      if (req.url === '/v1/traces' && req.headers['content-type']?.startsWith('application/json')) {
        bodies.push(body);
        const request = JSON.parse(body) as {
          resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
        };
        for (const rs of request.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    spans,
    bodies,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * An attribute's value, unwrapped (`{stringValue}`, `{boolValue}`…); an `intValue` as a string,
 * however the exporter wrote the int64 (a JSON number or a string).
 */
export function attributeOf(span: OtlpSpan, name: string): unknown {
  const value = span.attributes?.find((attribute) => attribute.key === name)?.value;
  if (value === undefined) return undefined;
  return 'intValue' in value ? String(value.intValue) : Object.values(value)[0];
}

/** Every attribute value of every span and link, as text. */
export function allAttributeValues(spans: readonly OtlpSpan[]): string[] {
  const values: string[] = [];
  for (const span of spans) {
    for (const attribute of [
      ...(span.attributes ?? []),
      ...(span.links ?? []).flatMap((l) => l.attributes ?? []),
    ])
      values.push(JSON.stringify(attribute.value));
    if (span.status?.message) values.push(span.status.message);
  }
  return values;
}
