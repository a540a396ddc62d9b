import type { TurnTiming } from '../domain/turnTiming.js';
import { type Html, html } from './html.js';

/**
 * Each callee turn's latency waterfall on the call page: one row per turn, time running right from
 * the moment the callee stopped speaking, a segment per stage of the reply up to the first sound
 * the callee heard (voice-to-voice), a mark where the callee cut the reply. A table with the same
 * figures follows for screen readers and exact values.
 */

type TurnFigures = TurnTiming;

const stages: { key: keyof TurnFigures; label: string; colour: string }[] = [
  { key: 'end_of_turn_ms', label: 'end-of-turn wait', colour: '#8c959f' },
  { key: 'stt_final_ms', label: 'recogniser final', colour: '#d4a72c' },
  { key: 'llm_first_token_ms', label: 'model first token', colour: '#8250df' },
  { key: 'first_sentence_ms', label: 'first sentence', colour: '#bf3989' },
  { key: 'tts_first_audio_ms', label: 'voice first audio', colour: '#0a58ca' },
  { key: 'first_rtp_ms', label: 'first RTP', colour: '#1b7c83' },
  { key: 'first_audible_ms', label: 'first audible sample', colour: '#2da44e' },
];

function isTurn(value: unknown): value is TurnFigures {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as TurnFigures).turn === 'number' &&
    typeof (value as TurnFigures).end_of_turn_ms === 'number'
  );
}

export function turnsOf(metrics: Record<string, unknown>): TurnFigures[] {
  return Array.isArray(metrics.turns) ? metrics.turns.filter(isTurn) : [];
}

const width = 720;
const rowHeight = 26;
const left = 70;
const right = 16;

export function turnWaterfall(turns: TurnFigures[]): Html {
  const longest = Math.max(
    500,
    ...turns.map((turn) => Math.max(turn.voice_to_voice_ms ?? 0, turn.end_of_turn_ms)),
  );
  const scaleMs = Math.ceil(longest / 250) * 250;
  const x = (ms: number) => left + ((width - left - right) * Math.max(0, ms)) / scaleMs;
  const height = 34 + turns.length * rowHeight + 24;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((fraction) => Math.round(scaleMs * fraction));
  const rows = turns.map((turn, index) => {
    const y = 30 + index * rowHeight;
    let from = 0;
    const segments: Html[] = [];
    for (const stage of stages) {
      const at = turn[stage.key];
      if (typeof at !== 'number' || at < from) continue;
      segments.push(
        html`<rect x="${x(from).toFixed(1)}" y="${y}" width="${Math.max(1, x(at) - x(from)).toFixed(1)}" height="16" fill="${stage.colour}"><title>Turn ${turn.turn}: ${stage.label} at ${at} ms</title></rect>`,
      );
      from = at;
    }
    const v2v = turn.voice_to_voice_ms;
    return html`<text x="4" y="${y + 12}">turn ${turn.turn}${turn.interrupted ? ' ✂' : ''}</text>${segments}
${v2v === null ? html`<text x="${x(from) + 4}" y="${y + 12}">no reply</text>` : html`<text x="${(Math.max(x(v2v), x(from)) + 6).toFixed(1)}" y="${y + 12}">${v2v} ms</text>`}`;
  });
  return html`<figure class="waterfall" data-testid="turn-waterfall">
<svg class="chart" viewBox="0 0 ${width} ${height}" role="img" aria-label="Latency waterfall of each turn: from the end of the callee's speech to the first sound of the agent's reply">
<text x="4" y="14" class="axis-title">ms after the callee stopped speaking</text>
${ticks.map((tick) => html`<line x1="${x(tick).toFixed(1)}" x2="${x(tick).toFixed(1)}" y1="22" y2="${height - 20}" stroke="#d0d7de" stroke-width="1"/><text x="${x(tick).toFixed(1)}" y="${height - 6}" text-anchor="middle">${tick}</text>`)}
${rows}
</svg>
<figcaption><ul class="legend">${stages.map((stage) => html`<li><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" rx="2" fill="${stage.colour}"/></svg> ${stage.label}</li>`)}<li>✂ the callee cut the reply</li></ul></figcaption>
</figure>
<div class="table-wrap"><table class="figures" data-testid="turn-figures">
<thead><tr><th scope="col">Turn</th><th scope="col">Words</th>${stages.map((stage) => html`<th scope="col">${stage.label}</th>`)}<th scope="col">Voice-to-voice</th><th scope="col">Cut</th></tr></thead>
<tbody>${turns.map(
    (turn) =>
      html`<tr><th scope="row">${String(turn.turn)}</th><td>${turn.end_of_turn ?? ''}</td>${stages.map(
        (stage) => {
          const value = turn[stage.key];
          return html`<td>${typeof value === 'number' ? `${value} ms` : '—'}</td>`;
        },
      )}<td><strong>${turn.voice_to_voice_ms === null ? '—' : `${turn.voice_to_voice_ms} ms`}</strong></td><td>${turn.interrupted ? 'yes' : ''}</td></tr>`,
  )}</tbody></table></div>`;
}
