import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callFixture, startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall, request } from '../helpers/http.js';

/**
 * GET /metrics and /readyz on the whole service. Issue 12, defect 10: the counts of every account
 * are not for anyone who reaches the API port, so here /metrics has its own listener and a token.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
const metricsToken = 'metrics-token-0123456789abcdef';

beforeAll(async () => {
  service = await startFullService({ CALLWRIGHT_METRICS_PORT: '0', CALLWRIGHT_METRICS_TOKEN: metricsToken });
});

function scrape(token: string | null) {
  return request(`${service.metricsUrl}/metrics`, {
    headers: token === null ? {} : { Authorization: `Bearer ${token}` },
  });
}

afterAll(async () => {
  await service.dispose();
});

function sample(text: string, series: string): number | null {
  const line = text.split('\n').find((entry) => entry.startsWith(`${series} `));
  return line === undefined ? null : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  it('counts calls by status, live calls by kind, queues, and the dispatch latency', async () => {
    const fixture = await callFixture(service);
    const result = await postCall(service.url, fixture.key, {
      agent_id: fixture.agentId,
      from_number: fixture.from,
      to_number: '+15550100005',
    });
    await waitForTerminal(service, (result.body as { call_id: string }).call_id);
    const metrics = await scrape(metricsToken);
    expect(metrics.status).toBe(200);
    expect(metrics.headers['content-type']).toContain('text/plain');
    const text = metrics.text;
    expect(sample(text, 'callwright_calls{status="failed"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'callwright_calls{status="queued"}')).toBe(0);
    // Live calls by kind, every kind shown; no worker id (an id would make a series per process start).
    for (const direction of ['outbound', 'inbound'])
      for (const channel of ['phone', 'web'])
        expect(sample(text, `callwright_live_calls{direction="${direction}",channel="${channel}"}`)).toBe(0);
    expect(text).not.toContain(`${service.calls?.workerId}`);
    expect(sample(text, 'callwright_queue_jobs{queue="call.dispatch"}')).toBe(0);
    expect(text).toContain('callwright_queue_oldest_job_age_seconds{queue="webhook.deliver"}');
    expect(text).toContain('callwright_webhook_backlog');
    expect(sample(text, 'callwright_dispatch_latency_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(text).toContain('# TYPE callwright_response_latency_seconds histogram');
    expect(text).not.toContain('+1555');
  });

  it('is not on the API port when it has a listener of its own', async () => {
    expect(service.metricsUrl).not.toBe(service.url);
    const onApiPort = await request(`${service.url}/metrics`, {
      headers: { Authorization: `Bearer ${metricsToken}` },
    });
    expect(onApiPort.status).toBe(404);
    expect(onApiPort.text).not.toContain('callwright_calls');
  });

  it('refuses a scrape without the token, or with a wrong one, as 401 in the error model', async () => {
    for (const token of [null, 'wrong', `${metricsToken}x`, metricsToken.slice(0, -1)]) {
      const refused = await scrape(token);
      expect(refused.status, String(token)).toBe(401);
      expect(refused.body).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
      expect(refused.text).not.toContain('callwright_calls');
    }
    const basic = await request(`${service.metricsUrl}/metrics`, {
      headers: { Authorization: `Basic ${Buffer.from(`x:${metricsToken}`).toString('base64')}` },
    });
    expect(basic.status).toBe(401);
  });

  it('reports /readyz ready while the database answers', async () => {
    expect((await request(`${service.url}/readyz`)).body).toEqual({ status: 'ready' });
  });
});
