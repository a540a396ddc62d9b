import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { type RunningService, type ServiceRole, startService } from '../../src/server.js';
import { callFixture, loopbackServiceConfig, waitForTerminal } from '../helpers/fullService.js';
import { postCall, request } from '../helpers/http.js';
import { dropTestSchema, newTestSchema, testPostgresUrl } from '../helpers/postgres.js';
import { LogCapture } from '../helpers/service.js';

/**
 * Scale-out roles on one PostgreSQL: API processes that hold no calls, a worker process that
 * serves no /v1, and what must hold across them (dispatch, cancel, rate limits).
 */

const schema = newTestSchema();
const dataDirs: string[] = [];
const started: RunningService[] = [];

async function start(role: ServiceRole, env: Record<string, string> = {}): Promise<RunningService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'callwright-role-'));
  dataDirs.push(dataDir);
  const config = loopbackServiceConfig(dataDir, {
    DATABASE_URL: testPostgresUrl(),
    CALLWRIGHT_DATABASE_SCHEMA: schema,
    CALLWRIGHT_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
    ...env,
  });
  const service = await startService(config, createLogger('info', new LogCapture()), { role });
  started.push(service);
  return service;
}

let api: RunningService;
let worker: RunningService;
let fixture: Awaited<ReturnType<typeof callFixture>>;
const metricsToken = 'worker-metrics-token-0123456789';

beforeAll(async () => {
  api = await start('api');
  worker = await start('worker', { CALLWRIGHT_METRICS_TOKEN: metricsToken });
  fixture = await callFixture(api, { maxDurationS: 12 });
});

afterAll(async () => {
  for (const service of started.reverse()) await service.close();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  await dropTestSchema(schema);
});

async function place(service: RunningService, to: string): Promise<string> {
  const result = await postCall(service.url, fixture.key, {
    agent_id: fixture.agentId,
    from_number: fixture.from,
    to_number: to,
  });
  expect(result.status).toBe(200);
  return (result.body as { call_id: string }).call_id;
}

describe('serve --role on PostgreSQL', () => {
  it('an API process answers a web call connect with 503 unavailable and leaves the token unused', async () => {
    const created = await request(`${api.url}/v1/web-calls`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': fixture.key },
      body: JSON.stringify({ agent_id: fixture.agentId }),
    });
    expect(created.status).toBe(200);
    const { token, call_id: callId } = created.body as { token: string; call_id: string };
    const connect = await request(`${api.url}/v1/web-calls/connect`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token, sdp: 'v=0\r\n' }),
    });
    expect(connect.status).toBe(503);
    expect(connect.body).toMatchObject({ error: { code: 'unavailable' } });
    // Refused before the token is consumed: the browser may retry against a process that runs calls.
    expect(await api.store.calls.getById(callId)).toMatchObject({ status: 'queued', channel: 'web' });
  });

  it('an API process runs no call worker and no webhook worker', () => {
    expect(api.calls).toBeNull();
    expect(api.webhooks).toBeNull();
    expect(worker.calls?.workerId).toMatch(/^wrk_/);
  });

  it('a worker process serves /healthz, /readyz and /metrics but not the public API', async () => {
    expect((await request(`${worker.url}/healthz`)).body).toEqual({
      status: 'ok',
      speech_engines: [
        expect.objectContaining({ engine: 'pocketsphinx', available: true }),
        expect.objectContaining({ engine: 'flite', available: true }),
      ],
    });
    expect((await request(`${worker.url}/readyz`)).body).toEqual({ status: 'ready' });
    expect((await request(`${worker.url}/metrics`)).status).toBe(401);
    const metrics = await request(`${worker.url}/metrics`, {
      headers: { Authorization: `Bearer ${metricsToken}` },
    });
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('callwright_live_calls{direction="outbound",channel="phone"} 0');
    const refused = await request(`${worker.url}/v1/calls`, { headers: { 'X-API-Key': fixture.key } });
    expect(refused.status).toBe(404);
  });

  it('serves no /metrics unless a token or a metrics port is configured (issue 12, defect 10)', async () => {
    const metrics = await request(`${api.url}/metrics`);
    expect(metrics.status).toBe(404);
    expect(metrics.text).not.toContain('callwright_calls');
  });

  it('a call queued through the API process is placed by the worker process, with its event', async () => {
    const callId = await place(api, '+15550100006');
    const call = await waitForTerminal(api, callId, 20_000);
    expect(call).toMatchObject({
      status: 'completed',
      endReason: 'callee_hangup',
      workerId: worker.calls?.workerId,
    });
    expect(await api.store.dashboard.eventIdForCall(fixture.accountId, callId)).toMatch(/^evt_/);
    const invites = await api.store.sandboxInvites.list();
    expect(invites.filter((invite) => invite.sipCallId === call.sipCallId)).toHaveLength(1);
    // The worker stored the recording in PostgreSQL, so the API process (another machine, in
    // production) serves it.
    expect(call.recordingPath).toBe(`postgres:recordings/${callId}`);
    const recording = await fetch(`${api.url}/v1/calls/${callId}/recording`, {
      headers: { 'X-API-Key': fixture.key },
    });
    expect(recording.status).toBe(200);
    expect(recording.headers.get('content-type')).toBe('audio/wav');
    const wav = Buffer.from(await recording.arrayBuffer());
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    expect(wav.readUInt16LE(22)).toBe(2);
    expect(wav.length).toBeGreaterThan(44 + 8000 * 4);
  });

  it('cancelling through the API hangs up a live call the worker holds', async () => {
    const callId = await place(api, '+15550100007');
    for (let i = 0; i < 80; i++) {
      if ((await api.store.calls.getById(callId))?.status === 'in_progress') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const result = await request(`${api.url}/v1/calls/${callId}/cancel`, {
      method: 'POST',
      headers: { 'X-API-Key': fixture.key },
    });
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ call_id: callId, status: 'canceled', end_reason: 'agent_hangup' });
  });

  it('rate limits hold across API processes', async () => {
    const limitedA = await start('api', { CALLWRIGHT_RATE_LIMIT: '3/60s' });
    const limitedB = await start('api', { CALLWRIGHT_RATE_LIMIT: '3/60s' });
    const statuses: number[] = [];
    for (const service of [limitedA, limitedB, limitedA, limitedB]) {
      const result = await postCall(service.url, fixture.key, {
        agent_id: fixture.agentId,
        from_number: fixture.from,
        to_number: '+15550100002',
      });
      statuses.push(result.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('refuses --role api|worker without DATABASE_URL', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'callwright-role-'));
    dataDirs.push(dataDir);
    await expect(
      startService(loopbackServiceConfig(dataDir), createLogger('silent'), { role: 'api' }),
    ).rejects.toThrow(/DATABASE_URL/);
  });
});
