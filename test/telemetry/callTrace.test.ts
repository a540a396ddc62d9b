import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CallRecord } from '../../src/domain/records.js';
import { createLogger } from '../../src/logger.js';
import { recordCallTrace } from '../../src/telemetry/callTrace.js';
import { callTraceIds } from '../../src/telemetry/traceIds.js';
import { startTracing } from '../../src/telemetry/tracing.js';
import { callFixture, startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';
import { LogCapture } from '../helpers/service.js';
import { type OtlpReceiver, type OtlpSpan, startOtlpReceiver } from './otlpReceiver.js';

/**
 * A sandbox call's trace, as an OTLP/HTTP receiver gets it: a real HTTP endpoint on loopback takes
 * what the SDK's exporter POSTs to /v1/traces (its JSON encoding, the OTLP
 * ExportTraceServiceRequest) and decodes it (./otlpReceiver.ts). The whole trace of a call with a
 * tool, a transfer, its analysis and webhook attempts: wholeCallTrace.test.ts.
 */

let receiver: OtlpReceiver;
let spans: OtlpSpan[];
let bodies: string[];
let tracesUrl: string;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  ({ spans, bodies, url: tracesUrl } = receiver);
});

afterAll(async () => {
  await receiver.close();
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

it('puts each turn under the call, with its waterfall stages (end of turn, STT final, LLM first token, TTS first audio, first audible packet) under the turn', async () => {
  const tracing = await startTracing(
    { otlpTracesUrl: tracesUrl, serviceName: 'callwright-test' },
    createLogger('error', new LogCapture()),
  );
  const answeredMs = Date.parse('2026-01-01T10:00:05.000Z');
  const turn = (n: number, atMs: number) => ({
    turn: n,
    callee_speech_end_ms: atMs,
    end_of_turn: 'complete',
    end_of_turn_ms: 200,
    stt_final_ms: 150,
    llm_first_token_ms: 320,
    first_sentence_ms: 400,
    tts_first_audio_ms: 520,
    first_rtp_ms: 540,
    first_audible_ms: 560,
    voice_to_voice_ms: 560,
    interrupted: false,
    interrupted_at_ms: null,
    preemptive_reply: null,
  });
  const call = {
    id: 'call_turns_1',
    agentId: 'agent_1',
    status: 'completed',
    endReason: 'callee_hangup',
    createdAt: '2026-01-01T10:00:00.000Z',
    dialingAt: '2026-01-01T10:00:00.050Z',
    ringingAt: '2026-01-01T10:00:00.300Z',
    inProgressAt: new Date(answeredMs).toISOString(),
    endedAt: '2026-01-01T10:00:30.000Z',
    metrics: { turns: [turn(1, 3000), turn(2, 9000)] },
  } as unknown as CallRecord;
  const before = spans.length;
  recordCallTrace(tracing.tracer, call);
  await tracing.shutdown();
  const sent = spans.slice(before);
  const callSpan = sent.find((span) => span.name === 'call');
  const turns = sent.filter((span) => span.name === 'turn');
  expect(turns).toHaveLength(2);
  for (const turnSpan of turns) {
    expect(turnSpan.parentSpanId).toBe(callSpan?.spanId);
    const stages = sent.filter((span) => span.parentSpanId === turnSpan.spanId).map((span) => span.name);
    expect(stages.sort()).toEqual(
      ['end_of_turn', 'first_audible_packet', 'llm_first_token', 'stt_final', 'tts_first_audio'].sort(),
    );
  }
});

it('links an inbound call that returns an outbound one to that call, and gives each call the ids its id derives', async () => {
  const tracing = await startTracing(
    { otlpTracesUrl: tracesUrl, serviceName: 'callwright-test' },
    createLogger('error', new LogCapture()),
  );
  const callback = {
    id: 'call_callback_1',
    agentId: 'agent_1',
    direction: 'inbound',
    channel: 'phone',
    callbackOf: 'call_outbound_1',
    status: 'completed',
    endReason: 'callee_hangup',
    createdAt: '2026-01-01T10:00:00.000Z',
    dialingAt: null,
    ringingAt: null,
    inProgressAt: '2026-01-01T10:00:01.000Z',
    endedAt: '2026-01-01T10:00:30.000Z',
    metrics: null,
  } as unknown as CallRecord;
  const before = spans.length;
  recordCallTrace(tracing.tracer, callback);
  await tracing.shutdown();
  const callSpan = spans.slice(before).find((span) => span.name === 'call');
  expect(callSpan).toMatchObject(callTraceIds('call_callback_1'));
  const original = callTraceIds('call_outbound_1');
  expect(callSpan?.links?.map((link) => [link.traceId, link.spanId])).toEqual([
    [original.traceId, original.spanId],
  ]);
});
