import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callFixture, startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall, request } from '../helpers/http.js';

/** GET /metrics and /readyz on the whole service. */

let service: Awaited<ReturnType<typeof startFullService>>;

beforeAll(async () => {
  service = await startFullService();
});

afterAll(async () => {
  await service.dispose();
});

function sample(text: string, series: string): number | null {
  const line = text.split('\n').find((entry) => entry.startsWith(`${series} `));
  return line === undefined ? null : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  it('counts calls by status, live calls per worker, queues, and the dispatch latency', async () => {
    const fixture = await callFixture(service);
    const result = await postCall(service.url, fixture.key, {
      agent_id: fixture.agentId,
      from_number: fixture.from,
      to_number: '+15550100005',
    });
    await waitForTerminal(service, (result.body as { call_id: string }).call_id);
    const metrics = await request(`${service.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers['content-type']).toContain('text/plain');
    const text = metrics.text;
    expect(sample(text, 'callwright_calls{status="failed"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'callwright_calls{status="queued"}')).toBe(0);
    expect(sample(text, `callwright_live_calls{worker="${service.calls?.workerId}"}`)).toBe(0);
    expect(sample(text, 'callwright_queue_jobs{queue="call.dispatch"}')).toBe(0);
    expect(text).toContain('callwright_queue_oldest_job_age_seconds{queue="webhook.deliver"}');
    expect(text).toContain('callwright_webhook_backlog');
    expect(sample(text, 'callwright_dispatch_latency_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(text).toContain('# TYPE callwright_response_latency_seconds histogram');
    expect(text).not.toContain('+1555');
  });

  it('reports /readyz ready while the database answers', async () => {
    expect((await request(`${service.url}/readyz`)).body).toEqual({ status: 'ready' });
  });
});
