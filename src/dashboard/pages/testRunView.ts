import type { TestResult, TestResultStatus, TestRunReport } from '../../agentTests/testRuns.js';
import type { RunDiff, TurnSide } from '../../domain/callReplay.js';
import { type Html, html } from '../html.js';
import { formatTime, idCode } from '../layout.js';
import { transcriptList } from '../transcript.js';

/**
 * A test run's page body: the summary, one row per call with why it failed, the transcript of
 * each failed call and, for a replay, the turn-by-turn comparison with the call it replays.
 */

export const runRefreshMs = 1500;

const resultBadges: Record<TestResultStatus, Html> = {
  passed: html`<span class="badge status-completed">PASS</span>`,
  failed: html`<span class="badge status-failed">FAIL</span>`,
  running: html`<span class="badge status-in_progress">running</span>`,
};

const none = html`<span class="muted">—</span>`;

function percent(rate: number | null): string | null {
  return rate === null ? null : `${Math.round(rate * 1000) / 10} %`;
}

function milliseconds(value: number | null | undefined): Html | string {
  return value === null || value === undefined ? none : `${value} ms`;
}

function resultLabel(result: TestResult, repeats: number): string {
  return repeats > 1 ? `${result.scenario} #${result.repeat}` : result.scenario;
}

function summarySection(report: TestRunReport): Html {
  const { summary } = report;
  const live = report.status === 'running';
  return html`<section class="panel" aria-labelledby="run-summary-title">
<h2 id="run-summary-title">Summary</h2>
<dl class="facts" data-testid="run-summary">
  <dt>Status</dt><dd><span data-testid="run-status" class="badge status-${live ? 'in_progress' : 'completed'}">${report.status}</span>${live ? html` <span class="muted">(updating live)</span>` : ''}</dd>
  <dt>Passed</dt><dd>${summary.passed} of ${summary.total}</dd>
  <dt>Failed</dt><dd>${summary.failed}</dd>
  <dt>Running</dt><dd>${summary.running}</dd>
  <dt>Pass rate</dt><dd>${percent(summary.pass_rate) ?? html`<span class="muted">none ended yet</span>`}</dd>
  <dt>Started</dt><dd>${formatTime(report.created_at)}</dd>
  ${report.replay_of ? html`<dt>Replays</dt><dd>call <a href="/calls/${report.replay_of}">${idCode(report.replay_of)}</a></dd>` : ''}
</dl>
<p class="muted">Run ${idCode(report.id)}.</p>
</section>`;
}

function scenariosTable(report: TestRunReport): Html | string {
  if (!report.scenarios.some((scenario) => scenario.runs > 1)) return '';
  return html`<section class="panel" aria-labelledby="run-scenarios-title">
<h2 id="run-scenarios-title">Each scenario over its repeats</h2>
<div class="table-wrap"><table class="responsive" data-testid="scenarios-table">
<thead><tr><th scope="col">Scenario</th><th scope="col">Runs</th><th scope="col">Passed</th><th scope="col">Failed</th><th scope="col">Pass rate</th></tr></thead>
<tbody>${report.scenarios.map(
    (
      scenario,
    ) => html`<tr><td data-label="Scenario">${scenario.name}</td><td data-label="Runs">${scenario.runs}</td>
<td data-label="Passed">${scenario.passed}</td><td data-label="Failed">${scenario.failed}</td>
<td data-label="Pass rate">${percent(scenario.pass_rate) ?? none}</td></tr>`,
  )}</tbody></table></div>
</section>`;
}

function resultsTable(report: TestRunReport): Html {
  return html`<section class="panel" aria-labelledby="run-results-title">
<h2 id="run-results-title">Results</h2>
<div class="table-wrap"><table class="responsive" data-testid="results-table">
<thead><tr><th scope="col">Scenario</th><th scope="col">Repeat</th><th scope="col">Result</th><th scope="col">Duration</th><th scope="col">Slowest reply</th><th scope="col">Reasons</th><th scope="col">Call</th></tr></thead>
<tbody>${report.results.map(
    (result) => html`<tr data-testid="result-row">
  <td data-label="Scenario">${result.scenario}</td>
  <td data-label="Repeat">${result.repeat}</td>
  <td data-label="Result">${resultBadges[result.status]}${result.status === 'running' && result.call_status ? html` <span class="muted">${result.call_status.replace('_', ' ')}</span>` : ''}</td>
  <td data-label="Duration">${result.duration_s === null ? none : `${result.duration_s} s`}</td>
  <td data-label="Slowest reply">${milliseconds(result.max_latency_ms)}</td>
  <td data-label="Reasons">${result.failures.length === 0 ? none : html`<ul class="reasons">${result.failures.map((failure) => html`<li>${failure}</li>`)}</ul>`}</td>
  <td data-label="Call"><a href="/calls/${result.call_id}">${idCode(result.call_id)}</a></td>
</tr>`,
  )}</tbody></table></div>
</section>`;
}

function failedTranscripts(report: TestRunReport): Html | string {
  const failed = report.results.filter((result) => result.status === 'failed');
  if (failed.length === 0) return '';
  const repeats = Math.max(...report.scenarios.map((scenario) => scenario.runs));
  return html`<section class="panel" aria-labelledby="run-transcripts-title">
<h2 id="run-transcripts-title">What was said on the failed calls</h2>
${failed.map(
  (result) => html`<h3>${resultLabel(result, repeats)}</h3>
${
  result.transcript && result.transcript.length > 0
    ? transcriptList(result.transcript)
    : html`<p class="muted">No words were transcribed on this call.</p>`
}`,
)}
</section>`;
}

function latencyChange(before: TurnSide | null, after: TurnSide | null): Html {
  return html`${milliseconds(before?.latency_ms)} → ${milliseconds(after?.latency_ms)}`;
}

function dataChanges(diff: RunDiff): Html | string {
  if (diff.data.length === 0) return '';
  return html`<h4>Extracted data that changed</h4>
<div class="table-wrap"><table class="responsive" data-testid="diff-data">
<thead><tr><th scope="col">Field</th><th scope="col">Before</th><th scope="col">After</th></tr></thead>
<tbody>${diff.data.map(
    (entry) => html`<tr><td data-label="Field">${entry.field}</td>
<td data-label="Before"><code>${JSON.stringify(entry.before)}</code></td>
<td data-label="After"><code>${JSON.stringify(entry.after)}</code></td></tr>`,
  )}</tbody></table></div>`;
}

function diffOf(label: string, diff: RunDiff): Html {
  return html`<h3>${label}</h3>
<p class="muted"><a href="/calls/${diff.before_call_id}">the replayed call</a> → <a href="/calls/${diff.after_call_id}">this run's call</a></p>
<ul data-testid="diff-summary">${diff.summary.map((line) => html`<li>${line}</li>`)}</ul>
${
  diff.turns.length === 0
    ? html`<p class="muted">Neither call had a callee turn after the agent spoke.</p>`
    : html`<div class="table-wrap"><table class="responsive" data-testid="diff-table">
<thead><tr><th scope="col">Turn</th><th scope="col">Callee said</th><th scope="col">Latency before → after</th><th scope="col">Agent said after</th><th scope="col">Changes</th></tr></thead>
<tbody>${diff.turns.map(
        (turn) => html`<tr>
  <td data-label="Turn">${turn.turn}</td>
  <td data-label="Callee said">${turn.after?.callee_text ?? turn.before?.callee_text ?? ''}</td>
  <td data-label="Latency">${latencyChange(turn.before, turn.after)}</td>
  <td data-label="Agent said after">${turn.after?.agent_text || none}</td>
  <td data-label="Changes">${turn.changes.length === 0 ? html`<span class="muted">no change</span>` : html`<ul class="reasons">${turn.changes.map((change) => html`<li>${change}</li>`)}</ul>`}</td>
</tr>`,
      )}</tbody></table></div>`
}
${dataChanges(diff)}`;
}

function diffSection(report: TestRunReport): Html | string {
  if (report.replay_of === null) return '';
  const compared = report.results.filter((result) => result.diff);
  const repeats = Math.max(...report.scenarios.map((scenario) => scenario.runs));
  return html`<section class="panel" aria-labelledby="run-diff-title">
<h2 id="run-diff-title">Turn by turn, against the replayed call</h2>
${
  compared.length === 0
    ? html`<p class="muted">The comparison appears when the replay's call ends.</p>`
    : compared.map((result) => diffOf(resultLabel(result, repeats), result.diff as RunDiff))
}
</section>`;
}

/** The run page's live region: re-fetched every `runRefreshMs` while any call is still running. */
export function testRunView(report: TestRunReport): Html {
  const live = report.status === 'running';
  return html`<div id="run-live" aria-live="polite"${live ? html` data-live-refresh="${runRefreshMs}"` : ''}>
${summarySection(report)}
${scenariosTable(report)}
${resultsTable(report)}
${diffSection(report)}
${failedTranscripts(report)}
</div>`;
}
