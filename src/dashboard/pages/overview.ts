import type { FastifyInstance } from 'fastify';
import { terminalStatuses } from '../../domain/callStatus.js';
import { latencyLine, stackedBars } from '../charts.js';
import { type DashboardOptions, sendPage, viewerOf } from '../context.js';
import { html } from '../html.js';
import { page } from '../layout.js';

const chartDays = 14;

/** The response-latency figure of a call's metrics: the first numeric field naming a latency. */
export function responseLatencyMs(metrics: Record<string, unknown>): number | null {
  const preferred = [
    'response_latency_ms_p50',
    'response_latency_ms',
    'response_latency_p50_ms',
    'latency_ms',
  ];
  const numeric = (value: unknown): number | null => {
    if (typeof value === 'number' && Number.isFinite(value)) return value;
    // A distribution such as {"p50": 420, "p95": 900}: its median.
    const p50 = value && typeof value === 'object' ? (value as Record<string, unknown>).p50 : undefined;
    return typeof p50 === 'number' && Number.isFinite(p50) ? p50 : null;
  };
  for (const name of preferred) {
    const value = numeric(metrics[name]);
    if (value !== null) return value;
  }
  for (const [name, value] of Object.entries(metrics)) {
    const figure = /latency/i.test(name) ? numeric(value) : null;
    if (figure !== null) return figure;
  }
  return null;
}

export function registerOverviewPage(app: FastifyInstance, options: DashboardOptions): void {
  app.get('/', async (request, reply) => {
    const viewer = viewerOf(request);
    const accountId = viewer.account.id;
    const today = new Date();
    const days: string[] = [];
    for (let back = chartDays - 1; back >= 0; back--) {
      days.push(new Date(today.getTime() - back * 86_400_000).toISOString().slice(0, 10));
    }
    const sinceIso = `${days[0]}T00:00:00.000Z`;
    const [perDay, withMetrics, counts] = await Promise.all([
      options.store.dashboard.callsPerDay(accountId, sinceIso),
      options.store.dashboard.callMetricsSince(accountId, sinceIso),
      options.store.calls.countByStatus(accountId),
    ]);
    const statuses = [...terminalStatuses];
    const series: Record<string, number[]> = Object.fromEntries(
      statuses.map((status) => [status, days.map(() => 0)]),
    );
    for (const row of perDay) {
      const index = days.indexOf(row.day);
      const values = series[row.status];
      if (values && index >= 0) values[index] = row.count;
    }
    const latency = withMetrics
      .map((entry) => ({ at: entry.endedAt, value: responseLatencyMs(entry.metrics) }))
      .filter((entry): entry is { at: string; value: number } => entry.value !== null);
    const live = (counts.dialing ?? 0) + (counts.ringing ?? 0) + (counts.in_progress ?? 0);
    const total = Object.values(counts).reduce((sum, value) => sum + value, 0);
    const body = html`<div class="cards">
  <div class="card"><span>Calls</span><strong>${total}</strong></div>
  <div class="card"><span>Live now</span><strong>${live}</strong></div>
  <div class="card"><span>Queued</span><strong>${counts.queued ?? 0}</strong></div>
  <div class="card"><span>Completed</span><strong>${counts.completed ?? 0}</strong></div>
</div>
<section aria-labelledby="per-day-title"><h2 id="per-day-title">Calls per day by outcome (last ${chartDays} days, UTC)</h2>
<ul class="legend">${statuses.map((status) => html`<li><span class="swatch-${status}" aria-hidden="true"></span>${status.replace('_', ' ')}</li>`)}</ul>
${stackedBars(days, series, `Calls per day by terminal status over the last ${chartDays} days`)}
<details><summary>Show as a table</summary><div class="table-wrap"><table>
<thead><tr><th scope="col">Day</th>${statuses.map((status) => html`<th scope="col">${status.replace('_', ' ')}</th>`)}</tr></thead>
<tbody>${days.map((day, index) => html`<tr><th scope="row">${day}</th>${statuses.map((status) => html`<td>${series[status]?.[index] ?? 0}</td>`)}</tr>`)}</tbody>
</table></div></details>
</section>
<section aria-labelledby="latency-title"><h2 id="latency-title">Agent reply delay per call (median of its turns)</h2>
${
  latency.length === 0
    ? html`<p class="muted">No call has reported a response latency yet (it is measured once the voice agent talks).</p>`
    : html`${latencyLine(latency, 'Response latency per call in milliseconds over time')}
<p class="muted">${latency.length} call(s); median ${[...latency].sort((a, b) => a.value - b.value)[Math.floor(latency.length / 2)]?.value ?? 0} ms.</p>`
}
</section>
<p><a href="/calls">All calls</a> · <a href="/agents">Agents</a> · <a href="/keys">API keys</a></p>`;
    return sendPage(reply, page(viewer, '/', 'Overview', body));
  });
}
