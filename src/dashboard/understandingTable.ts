import { type Html, html } from './html.js';

/**
 * What the agent understood of each answer (a script agent's `listen` rules): the words heard, the
 * rule that matched — or none — and why, one row per answer, from the call's `understanding`
 * metrics. Beside the turn waterfall on the call page.
 */

export interface UnderstoodTurn {
  node: string;
  heard: string;
  option: number | null;
  phrase: string | null;
  match: string | null;
  reason: string;
}

function isUnderstoodTurn(value: unknown): value is UnderstoodTurn {
  if (typeof value !== 'object' || value === null) return false;
  const entry = value as Record<string, unknown>;
  return (
    typeof entry.node === 'string' &&
    typeof entry.heard === 'string' &&
    typeof entry.reason === 'string' &&
    (entry.option === null || typeof entry.option === 'number')
  );
}

export function understandingOf(metrics: Record<string, unknown>): UnderstoodTurn[] {
  return Array.isArray(metrics.understanding) ? metrics.understanding.filter(isUnderstoodTurn) : [];
}

/** "rule 1 (“yes that works”, among other words)" or "none". */
export function matchedRuleText(turn: UnderstoodTurn): string {
  if (turn.option === null) return 'none';
  const how =
    turn.match === 'exact' ? 'exactly' : turn.match === 'variant' ? 'in other words' : 'among other words';
  return `option ${turn.option + 1} (“${turn.phrase ?? ''}”, ${how})`;
}

export function understandingTable(turns: readonly UnderstoodTurn[]): Html {
  return html`<div class="table-wrap"><table class="figures" data-testid="understanding">
<thead><tr><th scope="col">Answer</th><th scope="col">Step</th><th scope="col">Heard</th><th scope="col">Rule matched</th><th scope="col">Why</th></tr></thead>
<tbody>${turns.map(
    (turn, index) =>
      html`<tr><th scope="row">${String(index + 1)}</th><td><code>${turn.node}</code></td><td>${turn.heard === '' ? html`<span class="muted">[unclear]</span>` : turn.heard}</td><td>${turn.option === null ? html`<strong>none</strong>` : matchedRuleText(turn)}</td><td>${turn.reason}</td></tr>`,
  )}</tbody></table></div>`;
}
