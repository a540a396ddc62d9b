import type { FastifyInstance } from 'fastify';
import { terminalStatuses } from '../../domain/callStatus.js';
import { usd } from '../callText.js';
import { latencyLine, stackedBars } from '../charts.js';
import { type DashboardOptions, sendPage, viewerOf } from '../context.js';
import { type Html, html } from '../html.js';
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

/** A call's total cost from its metrics, or null when it has none. */
function costOfCall(metrics: Record<string, unknown>): number | null {
  const total = (metrics.cost as { total_usd?: unknown } | undefined)?.total_usd;
  return typeof total === 'number' && Number.isFinite(total) ? total : null;
}

/** What the calls cost, per day and per agent (the days and agents with priced calls). */
function costSection(
  calls: { agentId: string; endedAt: string; metrics: Record<string, unknown> }[],
  agentNames: Map<string, string>,
): Html {
  const byDay = new Map<string, { calls: number; usd: number }>();
  const byAgent = new Map<string, { calls: number; usd: number }>();
  for (const call of calls) {
    const cost = costOfCall(call.metrics);
    if (cost === null) continue;
    for (const [map, key] of [
      [byDay, call.endedAt.slice(0, 10)],
      [byAgent, call.agentId],
    ] as const) {
      const sum = map.get(key) ?? { calls: 0, usd: 0 };
      sum.calls++;
      sum.usd += cost;
      map.set(key, sum);
    }
  }
  const total = [...byDay.values()].reduce((sum, day) => sum + day.usd, 0);
  const rows = (map: Map<string, { calls: number; usd: number }>, label: (key: string) => string | Html) =>
    [...map.entries()].map(
      ([key, sum]) =>
        html`<tr><th scope="row">${label(key)}</th><td>${sum.calls}</td><td>${usd(sum.usd)}</td></tr>`,
    );
  return html`<section aria-labelledby="cost-title"><h2 id="cost-title">Cost (last ${chartDays} days, UTC)</h2>
${
  byDay.size === 0
    ? html`<p class="muted">No priced call yet: a call's cost is worked out when it ends.</p>`
    : html`<p>${usd(total)} over the calls that ended in these days (prices: <a href="/providers">Providers</a>).</p>
<div class="table-wrap"><table data-testid="cost-per-day"><thead><tr><th scope="col">Day</th><th scope="col">Calls</th><th scope="col">Cost</th></tr></thead>
<tbody>${rows(byDay, (day) => day)}</tbody></table></div>
<div class="table-wrap"><table data-testid="cost-per-agent"><thead><tr><th scope="col">Agent</th><th scope="col">Calls</th><th scope="col">Cost</th></tr></thead>
<tbody>${rows(byAgent, (agentId) => html`<a href="/agents/${agentId}">${agentNames.get(agentId) ?? agentId}</a>`)}</tbody></table></div>`
}
</section>`;
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
    const [perDay, withMetrics, counts, agents] = await Promise.all([
      options.store.dashboard.callsPerDay(accountId, sinceIso),
      options.store.dashboard.callMetricsSince(accountId, sinceIso),
      options.store.calls.countByStatus(accountId),
      options.store.agents.list(accountId),
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
<section aria-labelledby="latency-title"><h2 id="latency-title">Voice-to-voice per call (median of its turns, as the callee heard it)</h2>
${
  latency.length === 0
    ? html`<p class="muted">No call has reported a response latency yet (it is measured once the voice agent talks).</p>`
    : html`${latencyLine(latency, 'Voice-to-voice per call in milliseconds over time')}
<p class="muted">${latency.length} call(s); median ${[...latency].sort((a, b) => a.value - b.value)[Math.floor(latency.length / 2)]?.value ?? 0} ms.</p>`
}
</section>
${costSection(withMetrics, new Map(agents.map((agent) => [agent.id, agent.name])))}
<p><a href="/calls">All calls</a> · <a href="/agents">Agents</a> · <a href="/keys">API keys</a></p>`;
    return sendPage(reply, page(viewer, '/', 'Overview', body));
  });
}
