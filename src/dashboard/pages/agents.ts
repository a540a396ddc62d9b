import type { FastifyInstance } from 'fastify';
import {
  agentFormText,
  createAgentFromForm,
  formWithoutTypedSecrets,
  updateAgentFromForm,
} from '../../admin/agentSettings.js';
import { setAgentActive } from '../../admin/agents.js';
import { isAppError } from '../../domain/errors.js';
import type { AgentRecord } from '../../domain/records.js';
import { sandboxPersonas } from '../../telephony/sandbox/personas.js';
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
import { csrfField, errorBox, formatTime, idCode, page } from '../layout.js';
import { talkPanel } from '../talk.js';
import { placeTestCall, testCallVariables } from '../testCall.js';
import { agentForm, agentFormFrom, emptyAgentForm } from './agentForm.js';
import { agentOf, agentTabs } from './agentTabs.js';

const notices: Record<string, string> = {
  created: 'Agent created.',
  saved: 'Agent saved.',
  activated: 'Agent activated: calls may use it.',
  deactivated: 'Agent deactivated: new calls that name it get 404.',
};

async function testCallForm(options: DashboardOptions, viewer: Viewer, agent: AgentRecord): Promise<Html> {
  const numbers = (await options.store.numbers.list(viewer.account.id)).filter(
    (entry) => entry.route === 'sandbox',
  );
  if (numbers.length === 0) {
    return html`<p>Add a phone number bound to the sandbox on <a href="/numbers">Numbers &amp; trunks</a> to place test calls.</p>`;
  }
  if (!agent.active) return html`<p>Activate the agent to place a test call.</p>`;
  return html`<p>Places a call to the built-in sandbox carrier (no real phone rings) and opens it live.</p>
<form method="post" action="/agents/${agent.id}/test-call" class="row">
  ${csrfField(viewer.session.csrfToken)}
  <label for="test-from">From<select id="test-from" name="from_number">${numbers.map((entry) => html`<option>${entry.number}</option>`)}</select></label>
  <label for="test-to">Sandbox callee<select id="test-to" name="to_number">${sandboxPersonas.map(
    (persona) => html`<option value="${persona.number}">${persona.number} · ${persona.name}</option>`,
  )}</select></label>
  ${agent.variables.map((variable) => {
    const mustGive = variable.required && variable.default === null;
    return html`<label for="test-var-${variable.name}">${variable.name}${mustGive ? ' (required)' : ''}<input id="test-var-${variable.name}" name="var_${variable.name}" placeholder="${variable.default ?? ''}"${mustGive ? html` required` : ''}></label>`;
  })}
  <button type="submit">Test call</button>
</form>`;
}

async function agentPage(
  options: DashboardOptions,
  viewer: Viewer,
  agent: AgentRecord,
  error?: string,
  notice?: string,
  formText = agentFormText(agent),
) {
  return page(
    viewer,
    '/agents',
    `Agent ${agent.name}`,
    html`${agentTabs(agent, 'settings')}
<p>${idCode(agent.id)} · ${agent.active ? html`<span class="badge status-completed">active</span>` : html`<span class="badge">inactive</span>`} · updated ${formatTime(agent.updatedAt)}</p>
<form method="post" action="/agents/${agent.id}/active" class="inline">
  ${csrfField(viewer.session.csrfToken)}
  <input type="hidden" name="active" value="${agent.active ? '0' : '1'}">
  <button type="submit" class="secondary">${agent.active ? 'Deactivate' : 'Activate'}</button>
</form>
<section class="panel" aria-labelledby="test-title"><h2 id="test-title">Test call</h2>${await testCallForm(options, viewer, agent)}</section>
${agent.active ? talkPanel(agent, viewer.session.csrfToken) : ''}
<h2>Edit</h2>
${errorBox(error)}
${agentForm(`/agents/${agent.id}`, viewer.session.csrfToken, formText, 'Save agent')}`,
    notice,
  );
}

export function registerAgentPages(app: FastifyInstance, options: DashboardOptions): void {
  app.get('/agents', async (request, reply) => {
    const viewer = viewerOf(request);
    const agents = await options.store.agents.list(viewer.account.id);
    return sendPage(
      reply,
      page(
        viewer,
        '/agents',
        'Agents',
        html`<p><a class="button" href="/agents/new">New agent</a></p>
${
  agents.length === 0
    ? html`<p>No agents yet.</p>`
    : html`<div class="table-wrap"><table class="responsive">
<thead><tr><th scope="col">Name</th><th scope="col">Agent id</th><th scope="col">Brain</th><th scope="col">State</th><th scope="col">Updated</th></tr></thead>
<tbody>${agents.map(
        (agent) => html`<tr><td data-label="Name"><a href="/agents/${agent.id}">${agent.name}</a></td>
<td data-label="Agent id">${idCode(agent.id)}</td><td data-label="Brain">${agent.brain}</td>
<td data-label="State">${agent.active ? 'active' : 'inactive'}</td><td data-label="Updated">${formatTime(agent.updatedAt)}</td></tr>`,
      )}</tbody></table></div>`
}`,
      ),
    );
  });

  app.get('/agents/new', async (request, reply) => {
    const viewer = viewerOf(request);
    return sendPage(
      reply,
      page(
        viewer,
        '/agents',
        'New agent',
        agentForm('/agents', viewer.session.csrfToken, emptyAgentForm, 'Create agent'),
      ),
    );
  });

  app.post('/agents', { bodyLimit: 512 * 1024 }, async (request, reply) => {
    const viewer = viewerOf(request);
    const formText = agentFormFrom(formOf(request));
    try {
      const agent = await createAgentFromForm(options.store, viewer.account.id, formText, options.secretBox);
      return redirectTo(reply, `/agents/${agent.id}?notice=created`);
    } catch (error) {
      if (!isAppError(error) || error.status !== 400) throw error;
      const shown = formWithoutTypedSecrets(formText);
      const body = html`${errorBox(error.message)}${agentForm('/agents', viewer.session.csrfToken, shown, 'Create agent')}`;
      return sendPage(reply, page(viewer, '/agents', 'New agent', body), 400);
    }
  });

  app.get<{ Params: { id: string }; Querystring: { notice?: string } }>(
    '/agents/:id',
    async (request, reply) => {
      const viewer = viewerOf(request);
      const agent = await agentOf(options, viewer, request.params.id);
      return sendPage(
        reply,
        await agentPage(options, viewer, agent, undefined, notices[String(request.query.notice ?? '')]),
      );
    },
  );

  app.post<{ Params: { id: string } }>('/agents/:id', { bodyLimit: 512 * 1024 }, async (request, reply) => {
    const viewer = viewerOf(request);
    const agent = await agentOf(options, viewer, request.params.id);
    const formText = agentFormFrom(formOf(request));
    try {
      await updateAgentFromForm(options.store, viewer.account.id, agent.id, formText, options.secretBox);
      return redirectTo(reply, `/agents/${agent.id}?notice=saved`);
    } catch (error) {
      if (!isAppError(error) || error.status !== 400) throw error;
      return sendPage(
        reply,
        await agentPage(options, viewer, agent, error.message, undefined, formWithoutTypedSecrets(formText)),
        400,
      );
    }
  });

  app.post<{ Params: { id: string } }>('/agents/:id/active', async (request, reply) => {
    const viewer = viewerOf(request);
    const agent = await agentOf(options, viewer, request.params.id);
    const active = field(formOf(request), 'active') === '1';
    await setAgentActive(options.store, viewer.account.id, agent.id, active);
    return redirectTo(reply, `/agents/${agent.id}?notice=${active ? 'activated' : 'deactivated'}`);
  });

  app.post<{ Params: { id: string } }>('/agents/:id/test-call', async (request, reply) => {
    const viewer = viewerOf(request);
    const agent = await agentOf(options, viewer, request.params.id);
    const form = formOf(request);
    const call = await placeTestCall(options, viewer.account, {
      agentId: agent.id,
      fromNumber: field(form, 'from_number'),
      toNumber: field(form, 'to_number'),
      variables: testCallVariables(agent, (name) => field(form, `var_${name}`)),
    });
    request.log.info({ callId: call.id, accountId: viewer.account.id }, 'dashboard placed a test call');
    return redirectTo(reply, `/calls/${call.id}`);
  });
}
