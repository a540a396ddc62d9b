import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import type { TurnTiming } from '../../src/domain/turnTiming.js';
import { type FakeElevenLabs, startFakeElevenLabs } from '../fakes/elevenLabsStreamInputServer.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { addOwnCredentials, postCall, request } from '../helpers/http.js';

/**
 * Issue 41's metrics over OTLP, as a collector gets them: a real OTLP/HTTP endpoint on loopback
 * takes what the SDK's exporter POSTs to /v1/metrics (the JSON ExportMetricsServiceRequest) and
 * decodes it. A sandbox call — the example appointment agent, whose voice is an ElevenLabs fake that
 * stalls inside the greeting (flite says it again) — must show up there: its turns in the latency
 * histograms, the live-calls gauge up and back to 0, the stall counted; /metrics shows the same names
 * and counts; no label carries an id or a number.
 */

interface Attribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; doubleValue?: number };
}
interface DataPoint {
  attributes?: Attribute[];
  asInt?: string | number;
  asDouble?: number;
  count?: string | number;
  sum?: number;
  bucketCounts?: (string | number)[];
  explicitBounds?: number[];
}
interface OtlpMetric {
  name: string;
  unit?: string;
  gauge?: { dataPoints: DataPoint[] };
  sum?: { dataPoints: DataPoint[]; isMonotonic?: boolean; aggregationTemporality?: number };
  histogram?: { dataPoints: DataPoint[]; aggregationTemporality?: number };
}

/** Each export's metrics, in the order they came. */
const exports: OtlpMetric[][] = [];
const bodies: string[] = [];
let receiver: Server;
let metricsUrl: string;
let elevenLabs: FakeElevenLabs;
const voiceId = 'EXAVITQu4vr4xnSDxMaL';

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    void readBody(req).then((body) => {
      if (req.url === '/v1/metrics' && req.headers['content-type']?.startsWith('application/json')) {
        bodies.push(body);
        const decoded = JSON.parse(body) as {
          resourceMetrics: { scopeMetrics: { scope: { name: string }; metrics: OtlpMetric[] }[] }[];
        };
        exports.push(decoded.resourceMetrics.flatMap((rm) => rm.scopeMetrics.flatMap((sm) => sm.metrics)));
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  metricsUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/metrics`;
  elevenLabs = await startFakeElevenLabs({ apiKey: 'xi-key-41', voiceIds: [voiceId], chunkIntervalMs: 40 });
});

afterAll(async () => {
  await new Promise((resolve) => receiver.close(resolve));
  await elevenLabs?.close();
});

const attributesOf = (point: DataPoint) =>
  Object.fromEntries((point.attributes ?? []).map((a) => [a.key, a.value.stringValue ?? a.value.intValue]));
const numberOf = (value: string | number | undefined) => Number(value ?? Number.NaN);
const pointsOf = (metric: OtlpMetric | undefined) =>
  metric?.gauge?.dataPoints ?? metric?.sum?.dataPoints ?? metric?.histogram?.dataPoints ?? [];

/** A sample of the Prometheus text, by its exact series. */
function sample(text: string, series: string): number | null {
  const line = text.split('\n').find((entry) => entry.startsWith(`${series} `));
  return line === undefined ? null : Number(line.slice(series.length + 1));
}

it('exports a sandbox call: turn latency histograms, live calls up and back down, a vendor failure; /metrics the same', async () => {
  const service = await startFullService({
    CALLWRIGHT_OTLP_METRICS_URL: metricsUrl,
    OTEL_METRIC_EXPORT_INTERVAL: '200',
    CALLWRIGHT_METRICS_PORT: '0',
    CALLWRIGHT_SERVICE_VENDOR_KEYS: 'false',
    CALLWRIGHT_PROVIDER_ALLOW_PRIVATE: 'true',
    CALLWRIGHT_TTS_FIRST_AUDIO_TIMEOUT_MS: '1500',
    CALLWRIGHT_TTS_CHUNK_GAP_TIMEOUT_MS: '1000',
  });
  let callId: string;
  let key: string;
  let turns: TurnTiming[];
  let prometheus: string;
  try {
    const account = await service.store.accounts.create({ name: 'metrics-41' });
    key = (await createApiKey(service.store, account.id, 'metrics-41')).key;
    await addPhoneNumber(service.store, account.id, '+15550009999');
    await addOwnCredentials(service.url, key, [['elevenlabs', 'xi-key-41', elevenLabs.baseUrl]]);
    // The voice stalls after two chunks of the greeting: flite says the greeting from its start.
    elevenLabs.script.faults.push({
      kind: 'stall',
      afterChunks: 2,
      whenTextIncludes: 'Bright Smile',
      times: 1,
    });
    const agent = await createAgent(service.store, account.id, {
      name: 'Appointment confirmation',
      prompt: 'Confirm the appointment.',
      variables: ['customer_name', 'appointment_day=Tuesday'].map(parseVariableDeclaration),
      script: JSON.parse(
        readFileSync(
          resolve(import.meta.dirname, '../../examples/agents/appointment-confirmation.json'),
          'utf8',
        ),
      ),
      settings: { tts: { provider: 'elevenlabs', voice: voiceId, fallback: [{ provider: 'flite' }] } },
      maxDurationS: 60,
    });
    const created = await postCall(service.url, key, {
      agent_id: agent.id,
      from_number: '+15550009999',
      to_number: '+15550100001',
      variables: { customer_name: 'Ann' },
    });
    expect(created.status).toBe(200);
    callId = (created.body as { call_id: string }).call_id;
    const call = await waitForTerminal(service, callId, 60_000);
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    const figures = call.metrics as { turns: TurnTiming[]; provider_failures: Record<string, unknown>[] };
    expect(figures.provider_failures).toEqual([
      expect.objectContaining({ stage: 'tts', provider: 'elevenlabs', kind: 'stall' }),
    ]);
    turns = figures.turns;
    expect(turns.length).toBeGreaterThanOrEqual(1);
    prometheus = (await request(`${service.metricsUrl}/metrics`)).text;
  } finally {
    await service.dispose(); // shuts the meter provider down, which sends a last export
  }
  const last = exports.at(-1) ?? [];
  const metric = (name: string, from: OtlpMetric[] = last) => from.find((m) => m.name === name);

  // Live calls: an outbound phone call was counted while it lasted, and none is left at the end.
  const liveOutbound = exports.map((metrics) =>
    pointsOf(metric('callwright_live_calls', metrics))
      .filter(
        (point) => attributesOf(point).direction === 'outbound' && attributesOf(point).channel === 'phone',
      )
      .reduce((total, point) => total + numberOf(point.asInt ?? point.asDouble), 0),
  );
  expect(Math.max(...liveOutbound)).toBe(1);
  expect(liveOutbound.at(-1)).toBe(0);
  expect(metric('callwright_live_calls')?.gauge).toBeDefined();

  // Voice-to-voice: one observation per turn that had one, in seconds, the call's own figures.
  const voiceToVoiceMs = turns
    .map((turn) => turn.voice_to_voice_ms)
    .filter((ms): ms is number => ms !== null);
  expect(voiceToVoiceMs.length).toBeGreaterThanOrEqual(1);
  const v2v = metric('callwright_turn_voice_to_voice_seconds');
  expect(v2v?.unit).toBe('s');
  const [v2vPoint] = pointsOf(v2v);
  expect(numberOf(v2vPoint?.count)).toBe(voiceToVoiceMs.length);
  expect(v2vPoint?.sum).toBeCloseTo(voiceToVoiceMs.reduce((a, b) => a + b, 0) / 1000, 6);
  expect(v2vPoint?.explicitBounds).toContain(1);
  expect(v2vPoint?.bucketCounts?.reduce((a: number, b) => a + numberOf(b), 0)).toBe(voiceToVoiceMs.length);

  // Each stage of the waterfall: as many observations as turns that had that stage.
  const stagePoints = pointsOf(metric('callwright_turn_stage_latency_seconds'));
  const stageFields = {
    end_of_turn: 'end_of_turn_ms',
    stt_final: 'stt_final_ms',
    llm_first_token: 'llm_first_token_ms',
    tts_first_audio: 'tts_first_audio_ms',
  } as const;
  for (const [stage, field] of Object.entries(stageFields)) {
    const had = turns.filter((turn) => typeof turn[field] === 'number');
    const point = stagePoints.find((p) => attributesOf(p).stage === stage);
    expect(numberOf(point?.count ?? 0), stage).toBe(had.length);
    expect(
      sample(prometheus, `callwright_turn_stage_latency_seconds_count{stage="${stage}"}`) ?? 0,
      stage,
    ).toBe(had.length);
  }
  expect(stagePoints.find((p) => attributesOf(p).stage === 'end_of_turn')).toBeDefined();

  // The stall, counted once, by stage, vendor and kind.
  const failures = metric('callwright_vendor_failures_total');
  expect(failures?.sum?.isMonotonic).toBe(true);
  expect(
    pointsOf(failures).map((point) => [attributesOf(point), numberOf(point.asInt ?? point.asDouble)]),
  ).toEqual([[{ stage: 'tts', provider: 'elevenlabs', kind: 'stall' }, 1]]);

  // /metrics shows the same names, and the same counts.
  for (const name of [
    'callwright_live_calls',
    'callwright_turn_voice_to_voice_seconds',
    'callwright_turn_stage_latency_seconds',
    'callwright_vendor_failures_total',
  ]) {
    expect(prometheus).toContain(`# TYPE ${name} `);
    expect(metric(name), name).toBeDefined();
  }
  expect(sample(prometheus, 'callwright_turn_voice_to_voice_seconds_count')).toBe(voiceToVoiceMs.length);
  expect(
    sample(prometheus, 'callwright_vendor_failures_total{stage="tts",provider="elevenlabs",kind="stall"}'),
  ).toBe(1);
  // Every series of /metrics goes over OTLP as well.
  const prometheusNames = [...prometheus.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]);
  expect(last.map((m) => m.name).sort()).toEqual(expect.arrayContaining(prometheusNames));

  // The Grafana dashboard (deploy/) queries only series that exist, by labels they have.
  const dashboard = readFileSync(
    resolve(import.meta.dirname, '../../deploy/grafana-callwright.json'),
    'utf8',
  );
  const queried = new Set(
    [...dashboard.matchAll(/callwright_[a-z_]+/g)].map(([name]) => name.replace(/_(bucket|sum|count)$/, '')),
  );
  for (const name of queried) expect(prometheusNames, name).toContain(name);
  expect(dashboard).not.toMatch(/by \([^)]*worker/);

  // No label carries an id, a number or a key: short lowercase words only, in both.
  for (const metrics of exports)
    for (const m of metrics)
      for (const point of pointsOf(m))
        for (const value of Object.values(attributesOf(point)))
          expect(String(value), m.name).toMatch(/^[a-z][a-z._-]*$/);
  for (const [, name, value] of prometheus.matchAll(/[{,]([a-z_]+)="([^"]*)"/g))
    if (name !== 'le') expect(value, name).toMatch(/^[a-z][a-z._-]*$/);
  const sent = bodies.join('\n');
  expect(sent).not.toContain(callId);
  expect(sent).not.toContain('5550100001');
  expect(sent).not.toContain('5550009999');
  expect(sent).not.toContain(key);
  expect(sent).not.toContain('xi-key-41');
}, 90_000);
