import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { callFixture, startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';

/**
 * A sandbox call's whole trace, as an OTLP/HTTP receiver gets it: a real HTTP endpoint on
 * loopback takes what the SDK's exporter POSTs to /v1/traces (its JSON encoding, the OTLP
 * ExportTraceServiceRequest) and decodes it.
 */

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: Record<string, unknown> }[];
}

const spans: OtlpSpan[] = [];
const bodies: string[] = [];
let receiver: Server;
let tracesUrl: string;

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
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
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  tracesUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces`;
});

afterAll(async () => {
  await new Promise((resolve) => receiver.close(resolve));
});

it('exports a sandbox call as one trace: call span with dispatch, INVITE, ringing, answer children; no number or key', async () => {
  const service = await startFullService({ CALLWRIGHT_OTLP_TRACES_URL: tracesUrl });
  let callId: string;
  let key: string;
  try {
    const fixture = await callFixture(service, { maxDurationS: 8 });
    key = fixture.key;
    const created = await postCall(service.url, fixture.key, {
      agent_id: fixture.agentId,
      from_number: fixture.from,
      to_number: '+15550100006', // the sandbox person who hangs up after 2 s
    });
    expect(created.status).toBe(200);
    callId = (created.body as { call_id: string }).call_id;
    const call = await waitForTerminal(service, callId, 30_000);
    expect(call.endReason).toBe('callee_hangup');
  } finally {
    await service.dispose(); // shuts the tracer provider down, which sends what is batched
  }
  const callSpan = spans.find((span) => span.name === 'call');
  expect(callSpan).toBeDefined();
  const attr = (span: OtlpSpan, name: string) => span.attributes?.find((a) => a.key === name)?.value;
  expect(attr(callSpan as OtlpSpan, 'callwright.call.id')).toEqual({ stringValue: callId });
  expect(callSpan?.parentSpanId ?? '').toBe('');
  const inTrace = spans.filter((span) => span.traceId === callSpan?.traceId);
  for (const name of ['dispatch', 'sip.invite', 'sip.ringing', 'sip.answer']) {
    const child = inTrace.find((span) => span.name === name);
    expect(child, name).toBeDefined();
    expect(child?.parentSpanId, name).toBe(callSpan?.spanId);
  }
  // Nothing that identifies the callee or authorises anyone leaves in the trace.
  const sent = bodies.join('\n');
  expect(sent).not.toContain('5550100006');
  expect(sent).not.toContain('5550009999');
  expect(sent).not.toContain(key);
  expect(sent).not.toContain(key.slice(-12));
}, 60_000);
