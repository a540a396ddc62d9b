import type { FastifyInstance } from 'fastify';
import { type TestRunReport, testRunReport } from '../../agentTests/testRuns.js';
import { AppError, isAppError } from '../../domain/errors.js';
import { isIdOf } from '../../domain/ids.js';
import type { AgentRecord } from '../../domain/records.js';
import { scenarioLimits } from '../../domain/scenarios.js';
import {
  overridesFromText,
  repeatFromText,
  scenariosFromText,
  startDashboardTestRun,
} from '../agentTestRuns.js';
import {
  type DashboardOptions,
  field,
  formOf,
  redirectTo,
  sendPage,
  type Viewer,
  viewerOf,
} from '../context.js';
import { type Html, html } from '../html.js';
import { csrfField, formatTime, idCode, page } from '../layout.js';
import { agentOf, agentTabs } from './agentTabs.js';
import { testRunView } from './testRunView.js';

/**
 * An agent's Test tab: paste scenarios (and optional overrides) to run them as sandbox calls, see
 * the agent's recent runs, and follow one run live to its results (src/agentTests/testRuns.ts).
 */

const runsShown = 30;
const exampleOverrides = '{"settings":{"turn_taking":{"end_of_turn":{"wait_ms":1200}}}}';
const scenarioPlaceholder = `[{"name": "confirms",
  "call": {"variables": {"customer_name": "Ann"}},
  "callee": {"answers": "human", "turns": [{"say": "Yes, that works."}]},
  "expect": {"status": "completed", "data": {"confirmed": true}}}]`;

interface TestFormText {
  scenarios: string;
  repeat: string;
  overrides: string;
}

const emptyTestForm: TestFormText = { scenarios: '', repeat: '1', overrides: '' };

async function runForm(
  options: DashboardOptions,
  viewer: Viewer,
  agent: AgentRecord,
  form: TestFormText,
): Promise<Html> {
  if (!agent.active) return html`<p>Activate the agent to run tests: test calls use it as calls do.</p>`;
  const numbers = await options.store.numbers.list(viewer.account.id);
  if (!numbers.some((entry) => entry.route === 'sandbox'))
    return html`<p>Add a phone number bound to the sandbox on <a href="/numbers">Numbers &amp; trunks</a>: tests call from one.</p>`;
  return html`<p>Each scenario is a real call to the built-in sandbox carrier (no real phone rings), whose callee says what the scenario says; each call is judged against the scenario's expectations when it ends. Nothing is dialled unless every scenario is valid.</p>
<form method="post" action="/agents/${agent.id}/tests" class="stack">
  ${csrfField(viewer.session.csrfToken)}
  <div><label for="scenarios">Scenarios (JSON) <span class="hint">one scenario object, or a list of up to ${scenarioLimits.scenariosPerRunMax}; the same JSON the API's runAgentTests takes</span></label>
    <textarea id="scenarios" name="scenarios" rows="14" required placeholder="${scenarioPlaceholder}">${form.scenarios}</textarea></div>
  <div><label for="repeat">Repeat <span class="hint">calls per scenario, 1 to ${scenarioLimits.repeatMax} (an LLM agent does not answer the same way twice)</span></label>
    <input id="repeat" name="repeat" type="number" min="1" max="${scenarioLimits.repeatMax}" required value="${form.repeat}"></div>
  <div><label for="overrides">Agent overrides (JSON, optional) <span class="hint">a prompt or settings these calls alone run with; the agent is not changed, e.g. <code>${exampleOverrides}</code></span></label>
    <textarea id="overrides" name="agent_overrides" rows="3">${form.overrides}</textarea></div>
  <div><button type="submit">Run the tests</button></div>
</form>`;
}

/** A run's result in a word, with its counts: PASS (3 of 3), FAIL (1 of 3 failed), or running. */
function runResult(summary: TestRunReport['summary']): Html {
  if (summary.running > 0)
    return html`<span class="badge status-in_progress">running</span> <span class="muted">${summary.passed + summary.failed} of ${summary.total} ended</span>`;
  if (summary.failed > 0)
    return html`<span class="badge status-failed">FAIL</span> <span class="muted">${summary.failed} of ${summary.total} failed</span>`;
  return html`<span class="badge status-completed">PASS</span> <span class="muted">${summary.passed} of ${summary.total} passed</span>`;
}

async function runsTable(options: DashboardOptions, viewer: Viewer, agent: AgentRecord): Promise<Html> {
  const runs = await options.store.agentTests.listRuns(viewer.account.id, agent.id, runsShown);
  if (runs.length === 0) return html`<p class="muted">No test runs yet.</p>`;
  const reports = await Promise.all(
    runs.map((run) => testRunReport(options.store, viewer.account.id, agent.id, run.runId)),
  );
  return html`<div class="table-wrap"><table class="responsive" data-testid="runs-table">
<thead><tr><th scope="col">Run</th><th scope="col">Result</th><th scope="col">Started</th><th scope="col">Calls</th><th scope="col">Kind</th></tr></thead>
<tbody>${reports.map(
    (report) => html`<tr>
  <td data-label="Run"><a href="/agents/${agent.id}/tests/${report.id}">${idCode(report.id)}</a></td>
  <td data-label="Result" data-testid="run-result">${runResult(report.summary)}</td>
  <td data-label="Started">${formatTime(report.created_at)}</td>
  <td data-label="Calls">${report.summary.total}</td>
  <td data-label="Kind">${report.replay_of ? html`replay of <a href="/calls/${report.replay_of}">${idCode(report.replay_of)}</a>` : 'scenarios'}</td>
</tr>`,
  )}</tbody></table></div>`;
}

async function testsPage(
  options: DashboardOptions,
  viewer: Viewer,
  agent: AgentRecord,
  extra: { error?: string; form?: TestFormText } = {},
): Promise<Html> {
  return page(
    viewer,
    '/agents',
    `Test agent ${agent.name}`,
    html`${agentTabs(agent, 'tests')}
${extra.error ? html`<section class="error" role="alert" aria-labelledby="run-error-title"><h2 id="run-error-title">Nothing was started</h2><p data-testid="run-error">${extra.error}</p></section>` : ''}
<section class="panel" aria-labelledby="new-run-title"><h2 id="new-run-title">Run scenarios</h2>${await runForm(options, viewer, agent, extra.form ?? emptyTestForm)}</section>
<section class="panel" aria-labelledby="runs-title"><h2 id="runs-title">Recent runs</h2>
<p class="muted">A completed call can also be replayed from its recording: open it and use its Replay form.</p>
${await runsTable(options, viewer, agent)}</section>`,
  );
}

export function registerAgentTestPages(app: FastifyInstance, options: DashboardOptions): void {
  app.get<{ Params: { id: string } }>('/agents/:id/tests', async (request, reply) => {
    const viewer = viewerOf(request);
    const agent = await agentOf(options, viewer, request.params.id);
    return sendPage(reply, await testsPage(options, viewer, agent));
  });

  app.post<{ Params: { id: string } }>(
    '/agents/:id/tests',
    { bodyLimit: 4 * 1024 * 1024 },
    async (request, reply) => {
      const viewer = viewerOf(request);
      const agent = await agentOf(options, viewer, request.params.id);
      const form = formOf(request);
      const text: TestFormText = {
        scenarios: field(form, 'scenarios'),
        repeat: field(form, 'repeat'),
        overrides: field(form, 'agent_overrides'),
      };
      try {
        const report = await startDashboardTestRun(options, viewer.account, agent.id, {
          scenarios: scenariosFromText(text.scenarios),
          repeat: repeatFromText(text.repeat),
          agent_overrides: overridesFromText(text.overrides),
        });
        request.log.info(
          { runId: report.id, calls: report.summary.total, accountId: viewer.account.id },
          'dashboard started an agent test run',
        );
        return redirectTo(reply, `/agents/${agent.id}/tests/${report.id}`);
      } catch (error) {
        if (!isAppError(error) || error.status >= 500) throw error;
        const page = await testsPage(options, viewer, agent, { error: error.message, form: text });
        return sendPage(reply, page, 400);
      }
    },
  );

  app.get<{ Params: { id: string; runId: string } }>('/agents/:id/tests/:runId', async (request, reply) => {
    const viewer = viewerOf(request);
    const agent = await agentOf(options, viewer, request.params.id);
    if (!isIdOf('testRun', request.params.runId)) throw new AppError('not_found', 'No such test run.');
    const report = await testRunReport(options.store, viewer.account.id, agent.id, request.params.runId);
    const title = report.replay_of ? `Replay of ${agent.name}` : `Test run of ${agent.name}`;
    return sendPage(
      reply,
      page(
        viewer,
        '/agents',
        title,
        html`${agentTabs(agent, 'tests')}
<p><a href="/agents/${agent.id}/tests">All test runs of this agent</a></p>
${testRunView(report)}`,
      ),
    );
  });
}
