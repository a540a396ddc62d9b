import { type Html, html } from './html.js';

export const terminalColours: Record<string, string> = {
  completed: '#2da44e',
  busy: '#cf222e',
  no_answer: '#d4a72c',
  failed: '#8250df',
  canceled: '#8c959f',
};

const width = 720;
const height = 240;
// Room on the left for five-digit tick labels and the axis title above them, so neither is clipped.
const pad = { left: 64, right: 16, top: 28, bottom: 34 };

/** A maximum that is four round steps (1, 2 or 5 times a power of ten), so tick labels are whole. */
function niceMax(value: number): number {
  const rough = Math.max(1, value / 4);
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step =
    [1, 2, 5, 10].map((factor) => factor * magnitude).find((candidate) => candidate >= rough) ?? rough;
  return step * 4;
}

function axis(maxValue: number, title: string): Html {
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  const plotHeight = height - pad.top - pad.bottom;
  return html`<text x="4" y="14" class="axis-title">${title}</text>
${ticks.map((tick) => {
  const y = pad.top + plotHeight * (1 - tick);
  return html`<line x1="${pad.left}" x2="${width - pad.right}" y1="${y}" y2="${y}" stroke="#d0d7de" stroke-width="1"/>
<text x="${pad.left - 6}" y="${y + 4}" text-anchor="end">${Math.round(maxValue * tick)}</text>`;
})}`;
}

/** Calls per day stacked by terminal status; a table alternative is given by the caller. */
export function stackedBars(days: string[], series: Record<string, number[]>, label: string): Html {
  const totals = days.map((_, index) =>
    Object.values(series).reduce((sum, values) => sum + (values[index] ?? 0), 0),
  );
  const maxValue = niceMax(Math.max(0, ...totals));
  const plotWidth = width - pad.left - pad.right;
  const plotHeight = height - pad.top - pad.bottom;
  const slot = plotWidth / Math.max(1, days.length);
  const barWidth = Math.max(2, slot * 0.7);
  const bars: Html[] = [];
  days.forEach((day, index) => {
    let base = 0;
    for (const [status, values] of Object.entries(series)) {
      const value = values[index] ?? 0;
      if (value === 0) continue;
      const y = pad.top + plotHeight * (1 - (base + value) / maxValue);
      const h = (plotHeight * value) / maxValue;
      bars.push(
        html`<rect x="${(pad.left + index * slot + (slot - barWidth) / 2).toFixed(1)}" y="${y.toFixed(1)}" width="${barWidth.toFixed(1)}" height="${h.toFixed(1)}" fill="${terminalColours[status] ?? '#57606a'}"><title>${day}: ${value} ${status}</title></rect>`,
      );
      base += value;
    }
  });
  const labelEvery = Math.ceil(days.length / 8);
  return html`<svg class="chart" viewBox="0 0 ${width} ${height}" role="img" aria-label="${label}">
${axis(maxValue, 'calls')}${bars}
${days.map((day, index) =>
  index % labelEvery === 0
    ? html`<text x="${(pad.left + index * slot + slot / 2).toFixed(1)}" y="${height - pad.bottom + 16}" text-anchor="middle">${day.slice(5)}</text>`
    : '',
)}
</svg>`;
}

/** Response latency per call over time, as a line with dots. */
export function latencyLine(points: { at: string; value: number }[], label: string): Html {
  const plotWidth = width - pad.left - pad.right;
  const plotHeight = height - pad.top - pad.bottom;
  const maxValue = niceMax(Math.max(0, ...points.map((point) => point.value)));
  const times = points.map((point) => Date.parse(point.at));
  const first = Math.min(...times);
  const span = Math.max(1, Math.max(...times) - first);
  const xy = points.map((point, index) => ({
    x:
      pad.left +
      (points.length === 1 ? plotWidth / 2 : (plotWidth * ((times[index] ?? first) - first)) / span),
    y: pad.top + plotHeight * (1 - point.value / maxValue),
    point,
  }));
  return html`<svg class="chart" viewBox="0 0 ${width} ${height}" role="img" aria-label="${label}">
${axis(maxValue, 'voice-to-voice, ms')}
<polyline fill="none" stroke="#0a58ca" stroke-width="2" points="${xy.map((entry) => `${entry.x.toFixed(1)},${entry.y.toFixed(1)}`).join(' ')}"/>
${xy.map((entry) => html`<circle cx="${entry.x.toFixed(1)}" cy="${entry.y.toFixed(1)}" r="3" fill="#0a58ca"><title>${entry.point.at}: ${entry.point.value} ms</title></circle>`)}
<text x="${pad.left}" y="${height - pad.bottom + 16}">${points[0]?.at.slice(0, 16).replace('T', ' ') ?? ''}</text>
<text x="${width - pad.right}" y="${height - pad.bottom + 16}" text-anchor="end">${points.at(-1)?.at.slice(0, 16).replace('T', ' ') ?? ''}</text>
</svg>`;
}
