import type { FastifyInstance, FastifyReply } from 'fastify';
import { addCampaignContacts, removeCampaignContacts } from '../../campaigns/campaignContactChanges.js';
import { campaignOf, type describeContacts } from '../../campaigns/campaignControl.js';
import { parseCampaignCsv } from '../../domain/campaignCsv.js';
import type { CampaignRecord } from '../../domain/campaigns.js';
import { waitingReasonTexts } from '../../domain/campaignWaits.js';
import { AppError, isAppError, type RowError } from '../../domain/errors.js';
import { isIdOf } from '../../domain/ids.js';
import { type DashboardOptions, field, formOf, redirectTo, type Viewer, viewerOf } from '../context.js';
import { type Html, html } from '../html.js';
import { csrfField, formatTime, statusBadge } from '../layout.js';

/**
 * The contacts of a campaign's page (issue 37): the table with why each contact waits and a
 * Remove button for the ones not finished, and a form that adds contacts to a running or paused
 * campaign — one number per line, or a CSV pasted or read from a file — checked by the same code
 * as the API's CSV upload (`POST /v1/campaigns/{id}/contacts`), line by line, nothing added if a
 * line is wrong.
 */

type ShownContact = Awaited<ReturnType<typeof describeContacts>>[number];

/** What the add form shows again after a refusal: the text sent, and why nothing was added. */
export interface ContactFormState {
  text: string;
  error: AppError;
}

const removableStates = new Set(['pending', 'retry_wait', 'calling']);

export function contactsTable(
  contacts: readonly ShownContact[],
  campaign: CampaignRecord,
  viewer: Viewer,
): Html {
  const changeable = campaign.status === 'running' || campaign.status === 'paused';
  return html`<div class="table-wrap"><table class="responsive" data-testid="contacts-table">
<thead><tr><th scope="col">#</th><th scope="col">Number</th><th scope="col">State</th><th scope="col">Attempts</th><th scope="col">Last outcome</th><th scope="col">Next attempt</th><th scope="col">Why it waits</th>${changeable ? html`<th scope="col"><span class="visually-hidden">Remove</span></th>` : ''}</tr></thead>
<tbody>${contacts.map((contact) => {
    const latestCall = contact.calls.at(-1)?.call_id;
    return html`<tr data-contact-id="${contact.contact_id}">
  <td data-label="#">${contact.position + 1}</td>
  <td data-label="Number"><code>${contact.to_number}</code>${latestCall ? html` <a href="/calls/${latestCall}">latest call</a>` : ''}</td>
  <td data-label="State">${statusBadge(contact.state)}</td>
  <td data-label="Attempts">${contact.attempts}</td>
  <td data-label="Last outcome">${contact.last_outcome?.replace('_', ' ') ?? html`<span class="muted">—</span>`}</td>
  <td data-label="Next attempt">${formatTime(contact.next_attempt_at)}</td>
  <td data-label="Why it waits" data-waiting-reason="${contact.waiting_reason ?? ''}">${contact.waiting_reason ? waitingReasonTexts[contact.waiting_reason] : html`<span class="muted">—</span>`}</td>${
    changeable
      ? html`
  <td data-label="Remove">${
    removableStates.has(contact.state)
      ? html`<form method="post" action="/campaigns/${campaign.id}/contacts/remove" class="inline">${csrfField(viewer.session.csrfToken)}<input type="hidden" name="contact_id" value="${contact.contact_id}"><button type="submit" class="secondary" aria-label="Remove ${contact.to_number}">Remove</button></form>`
      : html`<span class="muted">—</span>`
  }</td>`
      : ''
  }</tr>`;
  })}</tbody></table></div>`;
}

/** A pasted list without the `to_number` header: one number per line. */
function isBareNumberList(text: string): boolean {
  const first = text.split(/\r?\n/).find((line) => line.trim() !== '');
  return first !== undefined && /^\s*\+?\d/.test(first) && !first.includes(',');
}

function reportOf(state: ContactFormState): Html {
  const rows: RowError[] = state.error.rows ?? [];
  return html`<div class="error" role="alert">
<p><strong>No contact was added: ${state.error.message}</strong></p>
${rows.length > 0 ? html`<ul data-testid="contacts-report">${rows.slice(0, 100).map((row) => html`<li>Line ${row.line ?? (row.index ?? 0) + 1}: ${row.message}</li>`)}</ul>` : ''}
</div>`;
}

/** The add form, outside the live-refreshed part of the page so that a refresh never clears it. */
export function addContactsForm(campaign: CampaignRecord, viewer: Viewer, state?: ContactFormState): Html {
  if (campaign.status !== 'running' && campaign.status !== 'paused') return html``;
  return html`<section class="panel" aria-labelledby="add-contacts-title"><h2 id="add-contacts-title">Add contacts</h2>
${state ? reportOf(state) : ''}
<form method="post" action="/campaigns/${campaign.id}/contacts">
  ${csrfField(viewer.session.csrfToken)}
  <label for="add-contacts">Contacts to add <span class="hint">one number per line (E.164, e.g. +14155550123), or a CSV with the header <code>to_number</code> and the agent's variables, as when the campaign was created; every line is checked and nothing is added if one is wrong</span>
    <input type="file" accept=".csv,text/csv" data-fill-target="add-contacts" aria-label="Read the contacts to add from a CSV file">
    <textarea id="add-contacts" name="contacts" rows="6" required>${state?.text ?? ''}</textarea></label>
  <button type="submit">Add the contacts</button>
</form></section>`;
}

/**
 * The routes of the contact forms. `showRefusal` renders the campaign's page with the add form's
 * report (status 400); a success goes back to the page with a notice.
 */
export function registerCampaignContactPages(
  app: FastifyInstance,
  options: DashboardOptions,
  showRefusal: (
    reply: FastifyReply,
    viewer: Viewer,
    campaign: CampaignRecord,
    state: ContactFormState,
  ) => Promise<FastifyReply>,
): void {
  app.post<{ Params: { id: string } }>(
    '/campaigns/:id/contacts',
    { bodyLimit: 40 * 1024 * 1024 },
    async (request, reply) => {
      const viewer = viewerOf(request);
      if (!isIdOf('campaign', request.params.id)) throw new AppError('not_found', 'No such campaign.');
      const text = field(formOf(request), 'contacts');
      const bare = isBareNumberList(text);
      // A bare list gets the header line; its lines are reported as the user numbered them.
      // (in the list's own line ending: browsers send a text area's lines as CRLF).
      const csv = bare ? `to_number${text.includes('\r\n') ? '\r\n' : '\n'}${text}` : text;
      const file = text.includes('\uFFFD')
        ? {
            rows: [],
            problems: [{ line: 1, message: 'the file is not UTF-8 text (save it as "CSV UTF-8")' }],
          }
        : await parseCampaignCsv(Buffer.from(csv, 'utf8'));
      try {
        const result = await addCampaignContacts(
          options.store,
          viewer.account.id,
          request.params.id,
          { kind: 'csv', file },
          `user:${viewer.user.id}`,
        );
        request.log.info(
          { campaignId: request.params.id, added: result.added },
          'dashboard added contacts to a campaign',
        );
        return redirectTo(reply, `/campaigns/${request.params.id}?notice=contacts-added`);
      } catch (error) {
        if (!isAppError(error) || error.status >= 500 || error.code === 'not_found') throw error;
        const shown =
          bare && error.rows
            ? new AppError(error.code, error.message, {
                rows: error.rows.map((row) => (row.line ? { ...row, line: row.line - 1 } : row)),
              })
            : error;
        const campaign = await campaignOf(options.store, viewer.account.id, request.params.id);
        return showRefusal(reply, viewer, campaign, { text: text.slice(0, 100_000), error: shown });
      }
    },
  );

  app.post<{ Params: { id: string } }>('/campaigns/:id/contacts/remove', async (request, reply) => {
    const viewer = viewerOf(request);
    if (!isIdOf('campaign', request.params.id)) throw new AppError('not_found', 'No such campaign.');
    const contactId = field(formOf(request), 'contact_id');
    const result = await removeCampaignContacts(
      options.store,
      viewer.account.id,
      request.params.id,
      { contact_ids: [contactId] },
      `user:${viewer.user.id}`,
    );
    request.log.info(
      { campaignId: request.params.id, removed: result.removed, onCall: result.on_call },
      'dashboard removed a campaign contact',
    );
    const notice =
      result.removed === 0
        ? 'contact-not-removed'
        : result.on_call > 0
          ? 'contact-removed-on-call'
          : 'contact-removed';
    return redirectTo(reply, `/campaigns/${request.params.id}?notice=${notice}`);
  });
}
