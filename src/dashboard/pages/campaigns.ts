import type { FastifyInstance } from 'fastify';
import { keyForCallsPlacedBy } from '../../admin/apiKeys.js';
import {
  type CampaignResource,
  campaignOf,
  campaignResource,
  campaignResources,
  changeCampaign,
  describeContacts,
} from '../../campaigns/campaignControl.js';
import { createCampaign } from '../../campaigns/createCampaign.js';
import { parseCampaignCsv } from '../../domain/campaignCsv.js';
import type { CampaignRecord } from '../../domain/campaigns.js';
import { AppError, isAppError, type RowError } from '../../domain/errors.js';
import { isIdOf } from '../../domain/ids.js';
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
import { csrfField, formatTime, page, statusBadge } from '../layout.js';
import {
  addContactsForm,
  type ContactFormState,
  contactsTable,
  registerCampaignContactPages,
} from './campaignContacts.js';
import { figuresPanel } from './campaignResults.js';
import {
  type EditFormState,
  editSettingsForm,
  fieldValueOf,
  paceFields,
  registerCampaignEditPage,
  retryFields,
  ruleFields,
  rulesBodyOf,
  scheduleBodyOf,
  weekdayNames,
  windowFields,
} from './campaignSettingsForm.js';

/** Campaigns started from the dashboard are recorded under this key (made on first use, never usable). */
export const dashboardCampaignKeyName = 'Dashboard campaigns';
const liveRefreshMs = 2_000;
const contactsShown = 200;

function finishedCount(progress: CampaignResource['progress']): number {
  return progress.done + progress.expired + progress.do_not_call + progress.canceled;
}

function progressBar(resource: CampaignResource): Html {
  const finished = finishedCount(resource.progress);
  return html`<progress max="${resource.contact_count}" value="${finished}" aria-label="Contacts finished">${finished} of ${resource.contact_count}</progress> <span class="muted">${finished} of ${resource.contact_count} finished</span>`;
}

async function createForm(options: DashboardOptions, viewer: Viewer, form?: URLSearchParams): Promise<Html> {
  const [agents, numbers] = await Promise.all([
    options.store.agents.list(viewer.account.id),
    options.store.numbers.list(viewer.account.id),
  ]);
  const value = fieldValueOf(form);
  const days = form ? form.getAll('weekdays') : ['1', '2', '3', '4', '5'];
  if (agents.length === 0 || numbers.length === 0)
    return html`<p>Add an agent and a phone number first: a campaign calls with one agent from your numbers.</p>`;
  return html`<form method="post" action="/campaigns" class="stack" aria-labelledby="new-title">
  ${csrfField(viewer.session.csrfToken)}
  <label for="campaign-name">Name<input id="campaign-name" name="name" type="text" maxlength="100" value="${value('name', '')}"></label>
  <label for="campaign-agent">Agent<select id="campaign-agent" name="agent_id">${agents
    .filter((agent) => agent.active)
    .map(
      (agent) =>
        html`<option value="${agent.id}"${value('agent_id', '') === agent.id ? ' selected' : ''}>${agent.name}</option>`,
    )}</select></label>
  <label for="campaign-from">Caller ID<select id="campaign-from" name="from_number">${numbers.map(
    (entry) =>
      html`<option${value('from_number', '') === entry.number ? ' selected' : ''}>${entry.number}</option>`,
  )}</select></label>
  ${windowFields(value, days, '')}
  <label for="campaign-zone">Time zone of contacts whose own is unknown <span class="hint">IANA name, e.g. America/New_York</span>
    <input id="campaign-zone" name="time_zone" type="text" required value="${value('time_zone', 'America/New_York')}"></label>
  ${paceFields(value, 'campaign-')}
  ${retryFields(value)}
  <details${form && (field(form, 'max_calls_per_hour') || field(form, 'max_calls_per_day') || form.getAll('holiday_countries').length > 0 || field(form, 'holiday_dates')) ? ' open' : ''}><summary>More rules: caps, holidays, caller-ID health</summary>
  <div class="stack">${ruleFields(value, form ? form.getAll('holiday_countries') : [], 'campaign-')}</div>
  </details>
  <label for="campaign-csv">Contacts (CSV) <span class="hint">header <code>to_number</code>, optional <code>first_message</code>, <code>context</code>, <code>time_zone</code>, and one column per agent variable; every row is checked before anything is dialled</span>
    <input type="file" accept=".csv,text/csv" data-fill-target="campaign-csv" aria-label="Read the contacts from a CSV file">
    <textarea id="campaign-csv" name="csv" rows="10" required>${value('csv', '')}</textarea></label>
  <button type="submit">Start the campaign</button>
</form>`;
}

function listTable(resources: CampaignResource[]): Html {
  if (resources.length === 0) return html`<p>No campaigns yet.</p>`;
  return html`<div class="table-wrap"><table class="responsive" data-testid="campaigns-table">
<thead><tr><th scope="col">Campaign</th><th scope="col">Status</th><th scope="col">Progress</th><th scope="col">Created</th></tr></thead>
<tbody>${resources.map(
    (resource) => html`<tr>
  <td data-label="Campaign"><a href="/campaigns/${resource.campaign_id}">${resource.name || resource.campaign_id}</a></td>
  <td data-label="Status">${statusBadge(resource.status)}</td>
  <td data-label="Progress">${progressBar(resource)}</td>
  <td data-label="Created">${formatTime(resource.created_at)}</td></tr>`,
  )}</tbody></table></div>`;
}

async function listPage(
  options: DashboardOptions,
  viewer: Viewer,
  extra: { report?: Html; form?: URLSearchParams } = {},
) {
  const campaigns = await options.store.campaigns.list(viewer.account.id, { limit: 50 });
  const resources = await campaignResources(options.store, campaigns);
  return page(
    viewer,
    '/campaigns',
    'Campaigns',
    html`${extra.report ?? ''}
<section class="panel" aria-labelledby="list-title"><h2 id="list-title">Your campaigns</h2>${listTable(resources)}</section>
<section class="panel" aria-labelledby="new-title"><h2 id="new-title">New campaign</h2>${await createForm(options, viewer, extra.form)}</section>`,
  );
}

async function detailPage(
  options: DashboardOptions,
  viewer: Viewer,
  campaign: CampaignRecord,
  notice?: string,
  contactForm?: ContactFormState,
  editForm?: EditFormState,
) {
  const resource = await campaignResource(options.store, campaign);
  const figures = await figuresPanel(options, campaign);
  const contacts = await describeContacts(
    options.store,
    campaign,
    await options.store.campaigns.listContacts(campaign.id, { limit: contactsShown }),
  );
  const live = campaign.status === 'running' || resource.progress.calling > 0;
  const { progress } = resource;
  const action = (verb: 'pause' | 'resume' | 'cancel', label: string) =>
    html`<form method="post" action="/campaigns/${campaign.id}/${verb}" class="inline">${csrfField(viewer.session.csrfToken)}<button type="submit"${verb === 'cancel' ? html` class="danger"` : ''}>${label}</button></form>`;
  const window = campaign.callingWindow;
  const health = campaign.rules.callerIdHealth;
  return page(
    viewer,
    '/campaigns',
    `Campaign ${campaign.name || campaign.id}`,
    html`<div class="actions">${campaign.status === 'running' ? action('pause', 'Pause') : ''}${campaign.status === 'paused' ? action('resume', 'Resume') : ''}${campaign.status === 'running' || campaign.status === 'paused' ? action('cancel', 'Cancel the campaign') : ''}</div>
<div id="campaign-live" aria-live="polite"${live ? html` data-live-refresh="${liveRefreshMs}"` : ''}>
<section class="panel" aria-labelledby="progress-title"><h2 id="progress-title">Progress</h2>
<p><span data-testid="campaign-status">${statusBadge(campaign.status)}</span> ${progressBar(resource)}</p>
<dl class="facts" data-testid="campaign-progress">
  <dt>Waiting for a first call</dt><dd>${progress.pending}</dd>
  <dt>On a call</dt><dd>${progress.calling}</dd>
  <dt>Waiting to retry</dt><dd>${progress.retry_wait}</dd>
  <dt>Done</dt><dd>${progress.done} <span class="muted">(answered ${progress.outcomes.answered}, voicemail ${progress.outcomes.voicemail}, busy ${progress.outcomes.busy}, no answer ${progress.outcomes.no_answer}, failed ${progress.outcomes.failed})</span></dd>
  <dt>Expired (window never opened in time)</dt><dd>${progress.expired}</dd>
  <dt>On the do-not-call list</dt><dd>${progress.do_not_call}</dd>
  <dt>Canceled</dt><dd>${progress.canceled}</dd>
</dl></section>
${figures}
<section class="panel" aria-labelledby="contacts-title"><h2 id="contacts-title">Contacts${campaign.contactCount > contactsShown ? html` <span class="muted">(the first ${contactsShown})</span>` : ''}</h2>${contactsTable(contacts, campaign, viewer)}</section>
</div>
${addContactsForm(campaign, viewer, contactForm)}
<section class="panel" aria-labelledby="settings-title"><h2 id="settings-title">Settings</h2>
<dl class="facts">
  <dt>Calling window</dt><dd>${window.start}–${window.end} on ${window.weekdays.map((day) => weekdayNames[day - 1]).join(', ')}, callee's local time</dd>
  <dt>Default time zone</dt><dd>${campaign.timeZone}</dd>
  <dt>Calls at once / per minute</dt><dd>${campaign.maxConcurrency} / ${campaign.callsPerMinute}</dd>
  <dt>Caller IDs</dt><dd data-testid="campaign-caller-ids">${(resource.caller_id_status ?? []).map(
    (number, index) =>
      html`${index > 0 ? '; ' : ''}${number.number} ${number.status === 'rested' ? html`rested until ${formatTime(number.rested_until)}` : `active, answered ${number.answer_rate === null ? '—' : `${Math.round(number.answer_rate * 100)}%`} of last ${number.attempts}`}`,
  )}</dd>
  <dt>Retries</dt><dd>${
    Object.entries(campaign.retry)
      .map(
        ([outcome, rule]) =>
          `${outcome.replace('_', ' ')}: after ${rule.after_minutes} min, ${rule.max_attempts} attempts`,
      )
      .join('; ') || 'none'
  }</dd>
  <dt>Campaign caps</dt><dd data-testid="campaign-caps">${campaign.rules.maxCallsPerHour ?? 'no cap'} per hour / ${campaign.rules.maxCallsPerDay ?? 'no cap'} per day</dd>
  <dt>Holidays (callee's date)</dt><dd data-testid="campaign-holidays">${[...campaign.rules.holidays.countries, ...campaign.rules.holidays.dates].join(', ') || 'none'}</dd>
  <dt>Caller-ID health</dt><dd data-testid="campaign-health">${health.minShareOfPool === 0 ? 'off' : `rested below ${health.minShareOfPool} of the pool's answer rate over the last ${health.windowAttempts} attempts (after ${health.minAttempts}), for ${health.restMinutes} min`}</dd>
  <dt>Ends</dt><dd>${formatTime(campaign.endsAt)}</dd>
</dl></section>
${await editSettingsForm(options, viewer, campaign, editForm)}`,
    notice,
  );
}

/** The form's settings as the API's campaign body (the CSV is the contacts). */
function settingsOf(form: URLSearchParams): Record<string, unknown> {
  return {
    name: field(form, 'name').trim(),
    agent_id: field(form, 'agent_id'),
    from_number: field(form, 'from_number'),
    time_zone: field(form, 'time_zone').trim(),
    ...scheduleBodyOf(form),
    ...rulesBodyOf(form),
  };
}

function reportOf(error: AppError): Html {
  const rows: RowError[] = error.rows ?? [];
  return html`<section class="error" role="alert" aria-labelledby="report-title">
<h2 id="report-title">Nothing was started: ${error.message}</h2>
${rows.length > 0 ? html`<ul data-testid="campaign-report">${rows.slice(0, 100).map((row) => html`<li>Line ${row.line ?? (row.index ?? 0) + 1}: ${row.message}</li>`)}</ul>` : ''}
</section>`;
}

export function registerCampaignPages(app: FastifyInstance, options: DashboardOptions): void {
  app.get('/campaigns', async (request, reply) =>
    sendPage(reply, await listPage(options, viewerOf(request))),
  );

  app.post('/campaigns', { bodyLimit: 40 * 1024 * 1024 }, async (request, reply) => {
    const viewer = viewerOf(request);
    const form = formOf(request);
    const text = field(form, 'csv');
    const file = text.includes('\uFFFD')
      ? { rows: [], problems: [{ line: 1, message: 'the file is not UTF-8 text (save it as "CSV UTF-8")' }] }
      : await parseCampaignCsv(Buffer.from(text, 'utf8'));
    const key = await keyForCallsPlacedBy(options.store, viewer.account.id, dashboardCampaignKeyName);
    try {
      const campaign = await createCampaign(
        options.store,
        { account: viewer.account, apiKeyId: key.id },
        settingsOf(form),
        {
          kind: 'csv',
          file,
        },
      );
      request.log.info(
        { campaignId: campaign.id, contacts: campaign.contactCount },
        'dashboard started a campaign',
      );
      return redirectTo(reply, `/campaigns/${campaign.id}?notice=created`);
    } catch (error) {
      if (!isAppError(error) || error.status >= 500) throw error;
      const kept = new URLSearchParams(form);
      if (text.length > 100_000) kept.set('csv', text.slice(0, 100_000));
      return sendPage(reply, await listPage(options, viewer, { report: reportOf(error), form: kept }), 400);
    }
  });

  app.get<{ Params: { id: string }; Querystring: { notice?: string } }>(
    '/campaigns/:id',
    async (request, reply) => {
      const viewer = viewerOf(request);
      if (!isIdOf('campaign', request.params.id)) throw new AppError('not_found', 'No such campaign.');
      const campaign = await campaignOf(options.store, viewer.account.id, request.params.id);
      const notices: Record<string, string> = {
        created: 'The campaign is running: contacts are called within their window.',
        pause: 'Paused: no new calls until you resume.',
        resume: 'Resumed.',
        cancel: 'Canceled: no new calls; queued ones were canceled.',
        'contacts-added':
          'Contacts added: they are called within their window, after the ones already waiting.',
        'contact-removed': 'Contact removed: it will not be called.',
        'contact-not-removed': 'That contact had already finished: nothing was removed.',
        'contact-removed-on-call':
          'Contact removed: its call in progress goes on, and it will not be called again.',
        'settings-changed': 'Settings changed: they hold from the next call placed.',
        'settings-unchanged': 'Nothing was changed: the settings were already those.',
      };
      return sendPage(
        reply,
        await detailPage(options, viewer, campaign, notices[request.query.notice ?? '']),
      );
    },
  );

  registerCampaignContactPages(app, options, async (reply, viewer, campaign, state) =>
    sendPage(reply, await detailPage(options, viewer, campaign, undefined, state), 400),
  );

  registerCampaignEditPage(app, options, async (reply, viewer, campaign, state) =>
    sendPage(reply, await detailPage(options, viewer, campaign, undefined, undefined, state), 400),
  );

  for (const action of ['pause', 'resume', 'cancel'] as const) {
    app.post<{ Params: { id: string } }>(`/campaigns/:id/${action}`, async (request, reply) => {
      const viewer = viewerOf(request);
      if (!isIdOf('campaign', request.params.id)) throw new AppError('not_found', 'No such campaign.');
      // A resume places the calls under the dashboard's key if the campaign's own was revoked.
      const key =
        action === 'resume'
          ? await keyForCallsPlacedBy(options.store, viewer.account.id, dashboardCampaignKeyName)
          : null;
      await changeCampaign(options.store, viewer.account.id, request.params.id, action, {
        ...(key ? { apiKeyId: key.id } : {}),
        logger: options.logger,
      });
      request.log.info({ campaignId: request.params.id, action }, 'dashboard changed a campaign');
      return redirectTo(reply, `/campaigns/${request.params.id}?notice=${action}`);
    });
  }
}
