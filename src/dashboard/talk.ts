import type { FastifyInstance } from 'fastify';
import { keyForCallsPlacedBy } from '../admin/apiKeys.js';
import { variablesProblem } from '../domain/agentVariables.js';
import { AppError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import type { AccountRecord, AgentRecord, TranscriptEntry } from '../domain/records.js';
import type { VariableValue } from '../domain/templates.js';
import { newWebCallToken, webCallTokenHash, webCallTokenTtlMs } from '../domain/webCalls.js';
import { type DashboardOptions, field, formOf, viewerOf } from './context.js';
import { type Html, html } from './html.js';
import { testCallKeyName, testCallVariables } from './testCall.js';

/**
 * "Talk" on the agent page: the dashboard creates a web call for the signed-in account (recorded
 * under the same "Dashboard test calls" key as a test call) and hands its one-use token to the
 * page's script, which connects through the public POST /v1/web-calls/connect like any browser.
 */
export async function createTalkWebCall(
  options: DashboardOptions,
  account: AccountRecord,
  agent: AgentRecord,
  variables: Record<string, VariableValue>,
): Promise<{ callId: string; token: string }> {
  if (!agent.active) throw new AppError('not_found', `agent ${agent.id} is inactive`);
  const problem = variablesProblem(agent.variables, variables);
  if (problem) throw problem;
  const key = await keyForCallsPlacedBy(options.store, account.id, testCallKeyName);
  const token = newWebCallToken();
  const now = new Date();
  const call = await options.store.webCalls.create({
    id: newId('call'),
    accountId: account.id,
    agentId: agent.id,
    apiKeyId: key.id,
    variables,
    metadata: { source: 'dashboard_talk' },
    tokenHash: webCallTokenHash(token),
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + webCallTokenTtlMs).toISOString(),
  });
  return { callId: call.id, token };
}

/** Each agent turn's latency from the transcript: its start minus the end of the callee's turn before it. */
export function turnLatencies(
  transcript: TranscriptEntry[],
): Array<TranscriptEntry & { latency_ms: number | null }> {
  let calleeEndMs: number | null = null;
  return transcript.map((entry) => {
    let latency: number | null = null;
    if (entry.role === 'callee' && !entry.event) calleeEndMs = entry.end_ms;
    else if (entry.role === 'agent' && !entry.event && calleeEndMs !== null) {
      latency = Math.max(0, entry.start_ms - calleeEndMs);
      calleeEndMs = null;
    }
    return { ...entry, latency_ms: latency };
  });
}

/** The Talk panel: the variables as the test-call form has them; the script in /assets/talk.js. */
export function talkPanel(agent: AgentRecord, csrfToken: string): Html {
  return html`<section class="panel" aria-labelledby="talk-title"><h2 id="talk-title">Talk</h2>
<form id="talk-form" class="row" data-agent="${agent.id}">
  <input type="hidden" name="csrf_token" value="${csrfToken}">
  ${agent.variables.map(
    (variable) =>
      html`<div><label for="talk_var_${variable.name}">${variable.name}</label><input id="talk_var_${variable.name}" name="var_${variable.name}"></div>`,
  )}
  <button type="submit" id="talk-start">Talk</button>
  <button type="button" id="talk-hangup" disabled>Hang up</button>
</form>
<p id="talk-status" role="status" aria-live="polite"></p>
<ol id="talk-transcript" class="transcript" aria-live="polite"></ol>
<script type="module" src="/assets/talk.js"></script></section>`;
}

/**
 * The Talk page script, a module on `callwright/web` (the SDK customers' pages use, served by the
 * service at /v1/web-calls/sdk.js): the microphone (echo cancellation on), the call, the live
 * transcript polled from the dashboard.
 */
export const talkJs = `
import { startWebCall } from '/v1/web-calls/sdk.js';

const form = document.getElementById('talk-form');
if (form) {
  const status = document.getElementById('talk-status');
  const list = document.getElementById('talk-transcript');
  const hangup = document.getElementById('talk-hangup');
  const start = document.getElementById('talk-start');
  const audio = new Audio();
  let call = null, timer = null, callId = null;
  const say = (text) => { status.textContent = text; };
  const terminal = ['completed', 'failed', 'canceled', 'no_answer', 'busy'];
  function stopPolling() { if (timer) clearInterval(timer); timer = null; }
  function render(data) {
    list.textContent = '';
    for (const turn of data.transcript) {
      const li = document.createElement('li');
      li.className = turn.role;
      li.textContent = turn.role + ': ' + turn.text + (turn.latency_ms === null ? '' : ' (' + turn.latency_ms + ' ms)');
      list.appendChild(li);
    }
    say('Call ' + data.status);
    if (terminal.includes(data.status)) { stopPolling(); hangup.disabled = true; start.disabled = false; }
  }
  function poll() {
    fetch('/agents/' + form.dataset.agent + '/talk/' + callId, { credentials: 'same-origin' })
      .then((r) => r.json()).then(render).catch(() => {});
  }
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    start.disabled = true;
    say('Asking for the microphone…');
    try {
      const created = await fetch('/agents/' + form.dataset.agent + '/talk', {
        method: 'POST', body: new URLSearchParams(new FormData(form)), credentials: 'same-origin',
      });
      if (!created.ok) throw new Error('the call could not be created');
      const { call_id, token, ice_servers } = await created.json();
      callId = call_id;
      call = await startWebCall({
        baseUrl: location.origin, token, agentId: form.dataset.agent, iceServers: ice_servers, audioElement: audio,
        onStatus: (s) => { if (s === 'connecting') say('Connecting…'); },
      });
      say('Connected: talk now.');
      hangup.disabled = false;
      timer = setInterval(poll, 1000);
      call.ended.then(() => { hangup.disabled = true; setTimeout(poll, 500); });
    } catch (error) {
      say(String(error.message || error));
      stopPolling();
      start.disabled = false;
    }
  });
  hangup.addEventListener('click', () => {
    say('Hanging up…');
    hangup.disabled = true;
    if (call) call.hangUp();
  });
}
`;

/** POST /agents/:id/talk (session + CSRF, as every dashboard form) and GET its live transcript. */
export function registerTalkRoutes(app: FastifyInstance, options: DashboardOptions): void {
  app.post<{ Params: { id: string } }>('/agents/:id/talk', async (request, reply) => {
    const account = viewerOf(request).account;
    const agent = await options.store.agents.get(account.id, request.params.id);
    if (!agent) throw new AppError('not_found', 'no such agent');
    const form = formOf(request);
    const variables = testCallVariables(agent, (name) => field(form, `var_${name}`));
    const created = await createTalkWebCall(options, account, agent, variables);
    request.log.info({ callId: created.callId, accountId: account.id }, 'dashboard started a Talk web call');
    return reply
      .header('Cache-Control', 'no-store')
      .send({ call_id: created.callId, token: created.token, ice_servers: options.webCallIceServers ?? [] });
  });
  app.get<{ Params: { id: string; callId: string } }>('/agents/:id/talk/:callId', async (request, reply) => {
    const account = viewerOf(request).account;
    const call = await options.store.calls.get(account.id, request.params.callId);
    if (!call || call.agentId !== request.params.id) throw new AppError('not_found', 'no such call');
    return reply.send({ call_id: call.id, status: call.status, transcript: turnLatencies(call.transcript) });
  });
}

/** The Talk script, served like the dashboard's own (CSP script-src 'self'). */
export function registerTalkAsset(app: FastifyInstance): void {
  app.get('/assets/talk.js', async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('Cache-Control', 'public, max-age=300').send(talkJs),
  );
}
