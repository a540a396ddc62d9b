import { createReadStream, existsSync, statSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { type CallStatus, callStatuses, isTerminal } from '../../domain/callStatus.js';
import { AppError, isAppError } from '../../domain/errors.js';
import { isIdOf } from '../../domain/ids.js';
import type { AgentRecord, CallRecord, EventAttemptRecord, EventRecord } from '../../domain/records.js';
import { turnTakingLimits } from '../../domain/turnTakingSettings.js';
import { toCallResource } from '../../presentation/callResource.js';
import type { CallFilter } from '../../store/types.js';
import { currentTurnTaking, replayOverrides, startDashboardTestRun } from '../agentTestRuns.js';
import { formatDuration, metricsTable, plainOutcome } from '../callText.js';
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
import { csrfField, formatTime, idCode, page, statusBadge } from '../layout.js';
import { transcriptList } from '../transcript.js';
import { turnsOf, turnWaterfall } from '../turnWaterfall.js';
import { understandingOf, understandingTable } from '../understandingTable.js';

const datePattern = /^\d{4}-\d{2}-\d{2}$/;
const liveRefreshMs = 1500;

function callsTable(calls: CallRecord[], agentNames: Map<string, string>): Html {
  if (calls.length === 0) return html`<p>No calls match.</p>`;
  return html`<div class="table-wrap"><table class="responsive" data-testid="calls-table">
<thead><tr><th scope="col">Call</th><th scope="col">Status</th><th scope="col">How it ended</th><th scope="col">Agent</th><th scope="col">To</th><th scope="col">Duration</th><th scope="col">Created</th></tr></thead>
<tbody>${calls.map(
    (call) => html`<tr>
  <td data-label="Call"><a href="/calls/${call.id}">${idCode(call.id)}</a></td>
  <td data-label="Status">${statusBadge(call.status)}</td>
  <td data-label="How it ended">${isTerminal(call.status) ? plainOutcome(call.status, call.endReason) : html`<span class="muted">${plainOutcome(call.status, null)}</span>`}</td>
  <td data-label="Agent">${agentNames.get(call.agentId) ?? idCode(call.agentId)}</td>
  <td data-label="To">${call.direction === 'inbound' ? html`<span class="badge" data-testid="inbound">inbound</span> from ${call.fromNumber || 'a withheld number'}` : call.toNumber}</td>
  <td data-label="Duration">${formatDuration(toCallResource(call).duration_seconds) ?? html`<span class="muted">—</span>`}</td>
  <td data-label="Created">${formatTime(call.createdAt)}</td>
</tr>`,
  )}</tbody></table></div>`;
}

function filterForm(status: string, from: string, to: string): Html {
  return html`<form method="get" action="/calls" class="row" role="search" aria-label="Filter calls">
  <label for="status">Status<select id="status" name="status">
    <option value="">any</option>
    ${callStatuses.map((entry) => html`<option value="${entry}"${entry === status ? html` selected` : ''}>${entry.replace('_', ' ')}</option>`)}
  </select></label>
  <label for="from">From day<input id="from" name="from" type="date" value="${from}"></label>
  <label for="to">To day (inclusive)<input id="to" name="to" type="date" value="${to}"></label>
  <button type="submit">Filter</button>
</form>`;
}

async function webhookAttempts(
  options: DashboardOptions,
  viewer: Viewer,
  call: CallRecord,
): Promise<{ event: EventRecord; attempts: EventAttemptRecord[] } | null> {
  const eventId = await options.store.dashboard.eventIdForCall(viewer.account.id, call.id);
  const event = eventId ? await options.store.events.get(viewer.account.id, eventId) : null;
  return event ? { event, attempts: await options.store.events.attempts(event.id) } : null;
}

export function attemptsTable(attempts: EventAttemptRecord[]): Html {
  if (attempts.length === 0) return html`<p class="muted">No delivery attempt yet.</p>`;
  return html`<div class="table-wrap"><table class="responsive">
<thead><tr><th scope="col">Attempted</th><th scope="col">URL</th><th scope="col">Status</th><th scope="col">Latency</th><th scope="col">Response or error</th></tr></thead>
<tbody>${attempts.map(
    (attempt) => html`<tr>
  <td data-label="Attempted">${formatTime(attempt.attemptedAt)}</td>
  <td data-label="URL"><code>${attempt.url}</code></td>
  <td data-label="Status">${attempt.statusCode ?? '—'}</td>
  <td data-label="Latency">${attempt.latencyMs} ms</td>
  <td data-label="Response">${attempt.error ?? attempt.responseExcerpt}</td>
</tr>`,
  )}</tbody></table></div>`;
}

function facts(entries: [string, Html | string | number | null][]): Html {
  return html`<dl class="facts">${entries.map(
    ([label, value]) =>
      html`<dt>${label}</dt><dd>${value === null || value === '' ? html`<span class="muted">—</span>` : value}</dd>`,
  )}</dl>`;
}

/** The post-call analysis: its status (and why it failed or was skipped), summary and success. */
function analysisFacts(call: CallRecord): Html | string {
  const analysis = call.analysis;
  if (!analysis) return '';
  return facts([
    [
      'Analysis',
      html`<span data-testid="analysis-status">${analysis.status}</span>${analysis.reason ? html` <span class="muted">— ${analysis.reason}</span>` : ''}`,
    ],
    ...(analysis.summary ? [['Summary', analysis.summary] as [string, string]] : []),
    ...(analysis.success
      ? [
          [
            'Success',
            html`${analysis.success.passed ? 'passed' : 'not passed'} <span class="muted">— ${analysis.success.explanation}</span>`,
          ] as [string, Html],
        ]
      : []),
  ]);
}

interface ReplayFormText {
  error?: string;
  waitMs: string;
  overrides: string;
}

/**
 * A completed call answered by a person, with its recording, can be replayed: its callee's
 * recorded words played to the agent again (with other settings, say) as a test run.
 */
function replaySection(
  viewer: Viewer,
  call: CallRecord,
  agent: AgentRecord | null,
  form: ReplayFormText = { waitMs: '', overrides: '' },
): Html | string {
  if (call.status !== 'completed' || call.answeredBy !== 'human' || !call.recordingPath || !agent) return '';
  const turnTaking = currentTurnTaking(agent.settings);
  return html`<section class="panel" aria-labelledby="replay-title">
<h2 id="replay-title">Replay</h2>
<p>Plays this call's callee back to the agent from the recording, as a test call to the sandbox, and compares the two conversations turn by turn. The agent itself is not changed.</p>
${form.error ? html`<p class="error" role="alert" data-testid="replay-error">Nothing was started: ${form.error}</p>` : ''}
<form method="post" action="/calls/${call.id}/replay" class="stack">
  ${csrfField(viewer.session.csrfToken)}
  <div><label for="replay-wait">End-of-turn wait in ms (optional) <span class="hint">the silence the agent waits for after every callee turn in the replay (all three <code>end_of_turn</code> waits), ${turnTakingLimits.waitMinMs} to ${turnTakingLimits.waitMaxMs}; the agent now waits ${turnTaking.minWaitMs} ms after a complete answer, ${turnTaking.waitMs} ms otherwise, ${turnTaking.maxWaitMs} ms after an unfinished one</span></label>
    <input id="replay-wait" name="wait_ms" type="number" min="${turnTakingLimits.waitMinMs}" max="${turnTakingLimits.waitMaxMs}" step="1" value="${form.waitMs}"></div>
  <div><label for="replay-overrides">Agent overrides (JSON, optional) <span class="hint">a prompt or settings the replay runs with, e.g. <code>{"settings":{"turn_taking":{"interruptions":{"min_words":3}}}}</code></span></label>
    <textarea id="replay-overrides" name="agent_overrides" rows="3">${form.overrides}</textarea></div>
  <div><button type="submit">Replay this call</button></div>
</form>
</section>`;
}

async function callDetail(
  options: DashboardOptions,
  viewer: Viewer,
  call: CallRecord,
  replayForm?: ReplayFormText,
): Promise<Html> {
  const resource = toCallResource(call);
  const agent = await options.store.agents.get(viewer.account.id, call.agentId);
  const webhook = await webhookAttempts(options, viewer, call);
  const live = !isTerminal(call.status);
  const metrics = Object.entries(call.metrics ?? {});
  const extracted = Object.entries(call.extractedData);
  return html`<div id="call-live" aria-live="polite"${live ? html` data-live-refresh="${liveRefreshMs}"` : ''}>
<section class="panel" aria-labelledby="summary-title">
<h2 id="summary-title">Summary</h2>
${facts([
  [
    'Status',
    html`<span data-testid="call-status">${statusBadge(call.status)}</span>${live ? html` <span class="muted">(updating live)</span>` : ''}`,
  ],
  [
    'How it ended',
    live
      ? null
      : html`${plainOutcome(call.status, call.endReason)}${call.endReason ? html` <span class="muted">(<code>${call.endReason}</code>)</span>` : ''}`,
  ],
  ['Answered by', answeredByText(call.answeredBy, call.metrics)],
  ['Call ID', idCode(call.id)],
  ['Agent', agent ? html`<a href="/agents/${agent.id}">${agent.name}</a>` : call.agentId],
  ['Direction', call.direction === 'inbound' ? 'Inbound: the caller rang this number' : 'Outbound'],
  [
    'Calling back',
    call.callbackOf
      ? html`<a href="/calls/${call.callbackOf}" data-testid="callback-of">${idCode(call.callbackOf)}</a>`
      : null,
  ],
  ['To', call.toNumber],
  ['From', call.fromNumber],
  ['Duration', formatDuration(resource.duration_seconds)],
])}
${
  live
    ? html`<form method="post" action="/calls/${call.id}/hang-up" class="row">
  ${csrfField(viewer.session.csrfToken)}
  <button type="submit" class="danger">${call.status === 'in_progress' ? 'Hang up' : 'Cancel the call'}</button>
</form>`
    : ''
}
</section>
<section class="panel" aria-labelledby="timeline-title">
<h2 id="timeline-title">Timeline</h2>
<ol>${resource.timeline.map((entry) => html`<li>${statusBadge(entry.status)} ${formatTime(entry.at)}</li>`)}</ol>
</section>
<section class="panel" aria-labelledby="transcript-title">
<h2 id="transcript-title">Transcript</h2>
${
  call.transcript.length === 0
    ? html`<p class="muted">${live ? 'The transcript appears as the call goes on.' : 'No words were transcribed on this call.'}</p>`
    : transcriptList(call.transcript)
}
</section>
<section class="panel" aria-labelledby="recording-title">
<h2 id="recording-title">Recording</h2>
${
  call.recordingPath
    ? html`<audio controls preload="none" src="/calls/${call.id}/recording">Your browser cannot play this recording.</audio>
       <p><a href="/calls/${call.id}/recording" download>Download the recording</a></p>`
    : html`<p class="muted">No recording.</p>`
}
</section>
${replaySection(viewer, call, agent, replayForm)}
<section class="panel" aria-labelledby="extracted-title">
<h2 id="extracted-title">Extracted data</h2>
${analysisFacts(call)}
${extracted.length === 0 ? html`<p class="muted">Nothing extracted.</p>` : facts(extracted.map(([name, value]) => [name, JSON.stringify(value)]))}
</section>
${
  turnsOf(call.metrics ?? {}).length === 0
    ? ''
    : html`<section class="panel" aria-labelledby="waterfall-title">
<h2 id="waterfall-title">Each turn, as the callee heard it</h2>
${turnWaterfall(turnsOf(call.metrics ?? {}))}
</section>`
}
${
  understandingOf(call.metrics ?? {}).length === 0
    ? ''
    : html`<section class="panel" aria-labelledby="understanding-title">
<h2 id="understanding-title">What the agent understood</h2>
${understandingTable(understandingOf(call.metrics ?? {}))}
</section>`
}
<section class="panel" aria-labelledby="latency-title">
<h2 id="latency-title">Latency and other figures</h2>
${metrics.length === 0 ? html`<p class="muted">${live ? 'Figures appear when the call ends.' : 'No figures recorded.'}</p>` : metricsTable(call.metrics ?? {})}
</section>
<section class="panel" aria-labelledby="webhook-title">
<h2 id="webhook-title">Webhook attempts</h2>
${
  webhook
    ? html`<p>Event ${idCode(webhook.event.id)}: ${webhook.event.status}, ${webhook.event.attempts} attempt(s). <a href="/webhook">Webhook settings</a></p>${attemptsTable(webhook.attempts)}`
    : html`<p class="muted">The call.completed event is written when the call ends.</p>`
}
</section>
</div>`;
}

async function callOf(options: DashboardOptions, viewer: Viewer, id: string): Promise<CallRecord> {
  const call = isIdOf('call', id) ? await options.store.calls.get(viewer.account.id, id) : null;
  if (!call) throw new AppError('not_found', 'No such call in this account.');
  return call;
}

function dayStartIso(day: string, plusDays = 0): string {
  return new Date(Date.parse(`${day}T00:00:00.000Z`) + plusDays * 86_400_000).toISOString();
}

export function registerCallPages(app: FastifyInstance, options: DashboardOptions): void {
  app.get<{ Querystring: { status?: string; from?: string; to?: string } }>(
    '/calls',
    async (request, reply) => {
      const viewer = viewerOf(request);
      const status = String(request.query.status ?? '');
      const from = String(request.query.from ?? '');
      const to = String(request.query.to ?? '');
      const filter: CallFilter = { limit: 200 };
      if (status && (callStatuses as readonly string[]).includes(status))
        filter.status = status as CallStatus;
      if (datePattern.test(from)) filter.fromIso = dayStartIso(from);
      if (datePattern.test(to)) filter.toIso = dayStartIso(to, 1);
      const [calls, agents] = await Promise.all([
        options.store.dashboard.listCalls(viewer.account.id, filter),
        options.store.agents.list(viewer.account.id),
      ]);
      const agentNames = new Map(agents.map((agent) => [agent.id, agent.name]));
      const anyLive = calls.some((call) => !isTerminal(call.status));
      return sendPage(
        reply,
        page(
          viewer,
          '/calls',
          'Calls',
          html`${filterForm(status, datePattern.test(from) ? from : '', datePattern.test(to) ? to : '')}
<div id="calls-live" aria-live="polite"${anyLive ? html` data-live-refresh="${liveRefreshMs}"` : ''}>
<p class="muted">${calls.length} call(s)${calls.length === 200 ? ' (the newest 200)' : ''}${anyLive ? ', live ones updating' : ''}.</p>
${callsTable(calls, agentNames)}
</div>`,
        ),
      );
    },
  );

  app.get<{ Params: { id: string } }>('/calls/:id', async (request, reply) => {
    const viewer = viewerOf(request);
    const call = await callOf(options, viewer, request.params.id);
    return sendPage(reply, page(viewer, '/calls', callTitle(call), await callDetail(options, viewer, call)));
  });

  // Starts a test run that replays the call's callee (src/agentTests/testRuns.ts), then shows it.
  app.post<{ Params: { id: string } }>('/calls/:id/replay', async (request, reply) => {
    const viewer = viewerOf(request);
    const call = await callOf(options, viewer, request.params.id);
    const agent = await options.store.agents.get(viewer.account.id, call.agentId);
    if (!agent) throw new AppError('not_found', 'The agent of this call no longer exists.');
    const form = formOf(request);
    const text: ReplayFormText = {
      waitMs: field(form, 'wait_ms'),
      overrides: field(form, 'agent_overrides'),
    };
    try {
      const overrides = replayOverrides(text.waitMs, text.overrides);
      const report = await startDashboardTestRun(options, viewer.account, agent.id, {
        replay_of: call.id,
        agent_overrides: overrides,
      });
      request.log.info({ runId: report.id, callId: call.id }, 'dashboard started a replay');
      return redirectTo(reply, `/agents/${agent.id}/tests/${report.id}`);
    } catch (error) {
      if (!isAppError(error) || error.status >= 500) throw error;
      const detail = await callDetail(options, viewer, call, { ...text, error: error.message });
      return sendPage(reply, page(viewer, '/calls', callTitle(call), detail), 400);
    }
  });

  // Hangs up a live call (or cancels a queued one) through the same path as the API's cancel.
  app.post<{ Params: { id: string } }>('/calls/:id/hang-up', async (request, reply) => {
    const viewer = viewerOf(request);
    const call = await callOf(options, viewer, request.params.id);
    if (!isTerminal(call.status)) {
      if (!options.callControl) throw new AppError('unavailable', 'This process does not place calls.');
      await options.callControl.cancel(call);
      request.log.info({ callId: call.id, accountId: viewer.account.id }, 'dashboard hung up a call');
    }
    return redirectTo(reply, `/calls/${call.id}`);
  });

  app.get<{ Params: { id: string } }>('/calls/:id/recording', async (request, reply) => {
    const viewer = viewerOf(request);
    const id = request.params.id;
    const call = isIdOf('call', id) ? await options.store.calls.get(viewer.account.id, id) : null;
    if (!call?.recordingPath || !options.dataDir)
      throw new AppError('not_found', 'No recording for this call.');
    const path = resolve(options.dataDir, call.recordingPath);
    const inside = relative(resolve(options.dataDir), path);
    if (inside.startsWith('..') || !existsSync(path))
      throw new AppError('not_found', 'No recording for this call.');
    const type = path.endsWith('.wav')
      ? 'audio/wav'
      : path.endsWith('.mp3')
        ? 'audio/mpeg'
        : 'application/octet-stream';
    return reply
      .type(type)
      .header('Content-Length', String(statSync(path).size))
      .header('Cache-Control', 'private, no-store')
      .send(createReadStream(path));
  });
}

/** The page's heading: whom the call was to (the id, one long word, is in the summary). */
function callTitle(call: CallRecord): string {
  if (call.direction === 'inbound') return `Call from ${call.fromNumber || 'a withheld number'}`;
  return `Call to ${call.toNumber}`;
}

/** What the early answering-machine check heard, in words (`metrics.answering_machine.reason`). */
const answeringReasonTexts: Record<string, string> = {
  beep: "a recorder's beep",
  greeting_words: 'words only a recorded greeting says',
  long_greeting: 'a greeting that ran on without a pause',
  short_greeting: 'a short hello, then a pause',
  backchannel: 'a short "uh huh" while the agent spoke',
  silence: 'nothing said',
  reply: 'the callee answered the agent',
  agent: 'the agent judged it a recording',
};

/**
 * Who answered, and how the early check (src/voice/answeringMachineDetector.ts) came to it:
 * "machine (82 % sure, 2.7 s after the answer: a greeting that ran on without a pause)". A check
 * that gave up on a silent line decided nothing (its "unknown" is not a 50 % guess), so a person
 * who then spoke reads "human (spoke after the early check gave up: nothing said in the first 3.0 s)".
 */
export function answeredByText(
  answeredBy: string | null,
  metrics: Record<string, unknown> | null,
): string | null {
  const decision = (metrics?.answering_machine ?? null) as {
    answered_by?: unknown;
    confidence?: unknown;
    decision_ms?: unknown;
    reason?: unknown;
  } | null;
  if (answeredBy === null || !decision || typeof decision.decision_ms !== 'number') return answeredBy;
  const seconds = `${(decision.decision_ms / 1000).toFixed(1)} s`;
  const heard =
    typeof decision.reason === 'string'
      ? (answeringReasonTexts[decision.reason] ?? decision.reason.replaceAll('_', ' '))
      : null;
  const decided = typeof decision.answered_by === 'string' ? decision.answered_by : answeredBy;
  if (decided === 'unknown') {
    const why =
      decision.reason === 'silence' ? `nothing said in the first ${seconds}` : `undecided at ${seconds}`;
    return answeredBy === 'unknown'
      ? `unknown (the early check gave up: ${why})`
      : `${answeredBy} (spoke after the early check gave up: ${why})`;
  }
  const sure =
    typeof decision.confidence === 'number' ? `${Math.round(decision.confidence * 100)} % sure, ` : '';
  const how = `${sure}${seconds} after the answer${heard ? `: ${heard}` : ''}`;
  return decided === answeredBy
    ? `${answeredBy} (${how})`
    : `${answeredBy} (the early check said ${decided}, ${how})`;
}
