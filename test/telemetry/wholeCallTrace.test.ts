import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { setWebhookEndpoint } from '../../src/admin/webhooks.js';
import { callTraceIds } from '../../src/telemetry/traceIds.js';
import {
  type FakeChatDelta,
  type FakeOpenAiServer,
  fakeToolCallDelta,
  startFakeOpenAiServer,
} from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';
import { eventually, type Receiver, startReceiver } from '../webhooks/harness.js';
import {
  allAttributeValues,
  attributeOf,
  type OtlpReceiver,
  type OtlpSpan,
  startOtlpReceiver,
} from './otlpReceiver.js';

/**
 * One sandbox call's whole trace, read from a real OTLP/HTTP receiver: the API request that
 * created it (continuing the client's `traceparent`, linked to the call), the call span with
 * dispatch, INVITE, ringing, answer, each turn with its stages, a tool (a real HTTP tool server),
 * a cold transfer (REFER to the sandbox carrier), the post-call analysis, and each delivery
 * attempt of `call.completed` to a real webhook receiver that fails the first one.
 */

const fromNumber = '+15550009995';
const toNumber = '+15550100015'; // the person: answers "Hello?" and waits
const targetNumber = '+15550100016';
const clientTraceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const clientSpanId = '00f067aa0ba902b7';

let otlp: OtlpReceiver;
let fake: FakeOpenAiServer;
let toolServer: Receiver;
let webhooks: Receiver;

/**
 * The model: it greets; once the callee has spoken it looks the order up (the tool); given the
 * tool's answer it transfers the call to `human`.
 */
function playModel({ messages }: { messages: Array<Record<string, unknown>> }): FakeChatDelta[] {
  const last = messages.at(-1);
  const toolAnswered = messages.some((message) => message.role === 'tool');
  if (last?.role === 'tool' && String(last.content).includes('shipped'))
    return [
      { delta: { content: 'It has shipped. Let me put you through.' } },
      fakeToolCallDelta('transfer_call', JSON.stringify({ target: 'human' }), 'call_transfer'),
    ];
  if (last?.role === 'user' && !toolAnswered)
    return [fakeToolCallDelta('lookup_order', JSON.stringify({ order_id: 'A-1001' }), 'call_lookup')];
  return [{ delta: { content: 'Hello, this is the order desk.' }, finishReason: 'stop' }];
}

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  toolServer = await startReceiver(() => ({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ status: 'shipped' }),
  }));
  // The first delivery attempt fails (HTTP 500); the retry succeeds.
  webhooks = await startReceiver((index) => ({ status: index === 0 ? 500 : 200 }));
  fake = await startFakeOpenAiServer({
    apiKey: 'sk-test',
    chatStreamFor: playModel,
    chatJsonContent: JSON.stringify({ summary: 'The caller asked about an order and was put through.' }),
  });
});

afterAll(async () => {
  await fake?.close();
  await toolServer?.close();
  await webhooks?.close();
  await otlp?.close();
});

it('exports a whole sandbox call as one trace: request, call, dial, turns, tool, transfer, analysis, webhook attempts', async () => {
  const service = await startFullService(
    {
      CALLWRIGHT_OTLP_TRACES_URL: otlp.url,
      CALLWRIGHT_OPENAI_BASE_URL: fake.baseUrl,
      CALLWRIGHT_OPENAI_API_KEY: 'sk-test',
      CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true',
    },
    { webhookDelivery: { retryDelay: (attemptsMade) => (attemptsMade < 4 ? 300 : null) } },
  );
  let callId = '';
  let key = '';
  try {
    const account = await service.store.accounts.create({ name: 'traced' });
    key = (await createApiKey(service.store, account.id, 'traced')).key;
    await addPhoneNumber(service.store, account.id, fromNumber);
    await setWebhookEndpoint(service.store, service.secretBox, account.id, webhooks.url, {
      allowPrivate: true,
    });
    const agent = await createAgent(service.store, account.id, {
      name: 'Order desk',
      prompt: 'You look orders up and put callers through.',
      brain: 'llm',
      settings: {
        llm: { model: 'test-model' },
        tools: [
          {
            name: 'lookup_order',
            description: 'Looks an order up.',
            parameters: {
              type: 'object',
              properties: { order_id: { type: 'string' } },
              required: ['order_id'],
            },
            url: `${toolServer.url}?token=tool-secret-123`,
          },
        ],
        transfer: { targets: { human: targetNumber } },
        analysis: { summary: true },
      },
      maxDurationS: 40,
    });
    const created = await postCall(
      service.url,
      key,
      { agent_id: agent.id, from_number: fromNumber, to_number: toNumber },
      { traceparent: `00-${clientTraceId}-${clientSpanId}-01` },
    );
    expect(created.status).toBe(200);
    callId = (created.body as { call_id: string }).call_id;
    const call = await waitForTerminal(service, callId, 60_000);
    expect(call).toMatchObject({ status: 'completed', endReason: 'transferred' });
    // call.completed: refused once (500), then delivered.
    await eventually(async () =>
      webhooks.requests.filter((request) => request.body.includes('"call.completed"')).length >= 2
        ? true
        : undefined,
    );
  } finally {
    await service.dispose(); // shuts the tracer provider down, which sends what is batched
  }

  const ids = callTraceIds(callId);
  const callSpan = otlp.spans.find((span) => span.name === 'call' && span.traceId === ids.traceId);
  expect(callSpan, 'the call span, in the trace its id gives').toBeDefined();
  expect(callSpan?.spanId).toBe(ids.spanId);
  expect(callSpan?.parentSpanId ?? '').toBe('');
  expect(attributeOf(callSpan as OtlpSpan, 'callwright.call.id')).toBe(callId);
  const inTrace = otlp.spans.filter((span) => span.traceId === ids.traceId);
  const childrenNamed = (name: string, parent: OtlpSpan = callSpan as OtlpSpan) =>
    inTrace.filter((span) => span.name === name && span.parentSpanId === parent.spanId);

  // The dial: dispatch, INVITE, ringing, answer.
  for (const name of ['dispatch', 'sip.invite', 'sip.ringing', 'sip.answer'])
    expect(childrenNamed(name), name).toHaveLength(1);

  // The turns, each with its waterfall (the callee's "Hello?" at least).
  const turns = childrenNamed('turn');
  expect(turns.length).toBeGreaterThanOrEqual(1);
  const stages = childrenNamed('turn')
    .flatMap((turn) => inTrace.filter((span) => span.parentSpanId === turn.spanId))
    .map((span) => span.name);
  for (const stage of ['end_of_turn', 'stt_final', 'llm_first_token']) expect(stages, stage).toContain(stage);

  // The tool: a span for each request the tool server got (a reply taken back may have made one
  // too), with its name and outcome, never its arguments or URL.
  const tools = childrenNamed('tool');
  expect(tools.length).toBe(toolServer.requests.length);
  expect(tools.length).toBeGreaterThanOrEqual(1);
  for (const span of tools) {
    expect(attributeOf(span, 'callwright.tool.name')).toBe('lookup_order');
    expect(attributeOf(span, 'callwright.tool.outcome')).toBe('ok');
    expect(attributeOf(span, 'http.response.status_code')).toBe('200');
  }
  const tool = tools.sort((a, b) => Number(BigInt(a.endTimeUnixNano) - BigInt(b.endTimeUnixNano))).at(-1);

  // The transfer: cold, by REFER, connected.
  const [transfer] = childrenNamed('transfer');
  expect(transfer).toBeDefined();
  expect(attributeOf(transfer as OtlpSpan, 'callwright.transfer.target')).toBe('human');
  expect(attributeOf(transfer as OtlpSpan, 'callwright.transfer.via')).toBe('refer');
  expect(attributeOf(transfer as OtlpSpan, 'callwright.transfer.outcome')).toBe('connected');
  expect(attributeOf(transfer as OtlpSpan, 'sip.status_code')).toBe('200');
  // It starts after the tool's answer came.
  expect(BigInt(transfer?.startTimeUnixNano ?? 0)).toBeGreaterThanOrEqual(BigInt(tool?.endTimeUnixNano ?? 0));

  // The analysis.
  const [analysis] = childrenNamed('analysis');
  expect(analysis).toBeDefined();
  expect(attributeOf(analysis as OtlpSpan, 'callwright.analysis.status')).toBe('completed');

  // Each delivery attempt of call.completed, under the call span: 500, then 200.
  const attempts = childrenNamed('webhook.attempt')
    .filter((span) => attributeOf(span, 'callwright.event.type') === 'call.completed')
    .sort(
      (a, b) =>
        Number(attributeOf(a, 'callwright.webhook.attempt')) -
        Number(attributeOf(b, 'callwright.webhook.attempt')),
    );
  expect(
    attempts.map((span) => [
      attributeOf(span, 'callwright.webhook.attempt'),
      attributeOf(span, 'http.response.status_code'),
      attributeOf(span, 'callwright.webhook.outcome'),
    ]),
  ).toEqual([
    ['1', '500', 'retry'],
    ['2', '200', 'delivered'],
  ]);
  expect(attempts[0]?.status?.code).toBe(2); // ERROR

  // The API request: a server span continuing the client's trace, linked to the call span.
  const requestSpan = otlp.spans.find((span) => span.name === 'POST /v1/calls/outbound');
  expect(requestSpan).toBeDefined();
  expect(requestSpan?.traceId).toBe(clientTraceId);
  expect(requestSpan?.parentSpanId).toBe(clientSpanId);
  expect(requestSpan?.kind).toBe(2); // SPAN_KIND_SERVER
  expect(attributeOf(requestSpan as OtlpSpan, 'http.response.status_code')).toBe('200');
  expect(requestSpan?.links?.map((link) => [link.traceId, link.spanId])).toEqual([[ids.traceId, ids.spanId]]);

  // Nothing that identifies the callee, the target or authorises anyone is in any attribute.
  const values = allAttributeValues(otlp.spans).join('\n');
  const sent = otlp.bodies.join('\n');
  for (const secret of [
    fromNumber.slice(2),
    toNumber.slice(2),
    targetNumber.slice(2),
    key,
    key.slice(-12),
    'tool-secret-123',
    'A-1001',
    toolServer.url,
    webhooks.url,
  ]) {
    expect(values, secret).not.toContain(secret);
    expect(sent, secret).not.toContain(secret);
  }
}, 120_000);
