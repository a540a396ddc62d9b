import type { FastifyInstance } from 'fastify';
import {
  describeWebhookEndpoint,
  listEvents,
  openWebhookEndpoint,
  resendEvent,
  rotateWebhookSecret,
  setWebhookEnabled,
  setWebhookEndpoint,
  setWebhookEventTypes,
  showEvent,
} from '../../admin/webhooks.js';
import { optionalEventTypes } from '../../domain/statusEvents.js';
import {
  type DashboardOptions,
  field,
  formOf,
  redirectTo,
  secretBoxOf,
  sendPage,
  type Viewer,
  viewerOf,
} from '../context.js';
import { type Html, html } from '../html.js';
import { csrfField, formatTime, idCode, page, statusBadge } from '../layout.js';

const notices: Record<string, string> = {
  saved: 'Endpoint saved with a new signing secret.',
  rotated: 'Secret rotated. The previous secret keeps signing for 24 hours, so your receiver can switch.',
  enabled: 'Endpoint enabled: waiting events are being delivered.',
  disabled: 'Endpoint disabled: events wait until you enable it again.',
  resent: 'Event queued to be sent again.',
  events: 'Saved: the endpoint receives the chosen events from now on.',
};

const eventTypeHints: Record<(typeof optionalEventTypes)[number], string> = {
  'call.ringing': 'the phone rings',
  'call.answered': 'answered, with who answered (person or machine)',
  'call.transferred': 'a transfer reached its target',
  'campaign.completed': 'every contact of a campaign is done',
  'campaign.paused': 'a campaign paused (asked for, or its API key was revoked)',
  'campaign.canceled': 'a campaign was canceled',
  'number.rested': "a campaign rested a caller ID answered far less than the pool's",
};

function eventTypesForm(token: string, chosen: readonly string[]): Html {
  return html`<form method="post" action="/webhook/event-types" aria-label="Events sent">
  ${csrfField(token)}
  <fieldset><legend>Events sent <span class="hint">call.completed is always sent</span></legend>
  ${optionalEventTypes.map(
    (type) =>
      html`<label class="inline"><input type="checkbox" name="events" value="${type}"${chosen.includes(type) ? html` checked` : ''}> <code>${type}</code> <span class="hint">${eventTypeHints[type]}</span></label>`,
  )}
  </fieldset>
  <button type="submit" class="secondary">Save events</button>
</form>`;
}

function endpointSection(
  viewer: Viewer,
  endpoint: ReturnType<typeof describeWebhookEndpoint> | null,
  reveal: boolean,
): Html {
  const token = viewer.session.csrfToken;
  return html`<section class="panel" aria-labelledby="endpoint-title"><h2 id="endpoint-title">Endpoint</h2>
<form method="post" action="/webhook" class="row">
  ${csrfField(token)}
  <label for="webhook-url">URL <span class="hint">https; events are POSTed here, signed</span>
    <input id="webhook-url" name="url" type="url" required value="${endpoint?.url ?? ''}"></label>
  <button type="submit">${endpoint ? 'Replace endpoint' : 'Set endpoint'}</button>
</form>
${
  endpoint
    ? html`<dl class="facts">
  <dt>State</dt><dd>${endpoint.enabled ? 'enabled' : html`disabled <span class="muted">(${endpoint.disabled_reason ?? ''})</span>`}</dd>
  <dt>Signing secret</dt><dd>${
    reveal
      ? html`<code id="webhook-secret">${endpoint.secret}</code> <button type="button" class="secondary" data-copy-target="webhook-secret">Copy</button> <a href="/webhook">Hide</a>`
      : html`<span class="mono">whsec_••••••••</span> <a href="/webhook?reveal=1">Reveal</a>`
  }</dd>
  <dt>Previous secret</dt><dd>${endpoint.previous_secret_expires_at ? html`still signing until ${formatTime(endpoint.previous_secret_expires_at)}` : 'none'}</dd>
  <dt>Updated</dt><dd>${formatTime(endpoint.updated_at)}</dd>
</dl>
${eventTypesForm(token, endpoint.events)}
<form method="post" action="/webhook/rotate" class="inline">${csrfField(token)}<button type="submit" class="secondary">Rotate secret</button></form>
<form method="post" action="/webhook/enabled" class="inline">${csrfField(token)}
  <input type="hidden" name="enabled" value="${endpoint.enabled ? '0' : '1'}">
  <button type="submit" class="secondary">${endpoint.enabled ? 'Disable' : 'Enable'}</button></form>`
    : html`<p>No endpoint yet: events are kept and sent once you set one.</p>`
}
</section>`;
}

type EventDetail = Awaited<ReturnType<typeof showEvent>>;

/** The last attempt in a few words ("200 in 41 ms"), the earlier ones folded away beneath it. */
function attemptsCell(event: EventDetail): Html {
  const last = event.attempt_log.at(-1);
  if (!last) return html`<span class="muted">no attempt yet</span>`;
  const summary = html`${event.attempts} attempt${event.attempts === 1 ? '' : 's'}, last ${formatTime(last.attempted_at)}: ${last.status_code ?? 'no answer'} in ${last.latency_ms} ms`;
  const next = event.next_attempt_at
    ? html`<br><span class="muted">next ${formatTime(event.next_attempt_at)}</span>`
    : '';
  if (event.attempt_log.length === 1 && !last.error) return html`${summary}${next}`;
  return html`<details><summary>${summary}</summary><ol>${event.attempt_log.map(
    (attempt) =>
      html`<li>${formatTime(attempt.attempted_at)}: ${attempt.status_code ?? 'no answer'} in ${attempt.latency_ms} ms${attempt.error ? html` <span class="muted">${attempt.error}</span>` : ''}</li>`,
  )}</ol></details>${next}`;
}

/** One row per event: what, for which call or campaign, its state and its attempts, a Resend button. */
function deliveryLog(token: string, details: EventDetail[]): Html {
  return html`<div class="table-wrap"><table class="responsive log" data-testid="delivery-log">
<thead><tr><th scope="col">Event</th><th scope="col">For</th><th scope="col">State</th><th scope="col">Attempts</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead>
<tbody>${details.map(
    (event) => html`<tr>
  <td data-label="Event" class="log-what"><code class="id">${event.type}</code><br><span class="muted">${idCode(event.event_id)}</span></td>
  <td data-label="For" class="log-for">${
    event.campaign_id
      ? html`campaign <a href="/campaigns/${event.campaign_id}">${idCode(event.campaign_id)}</a>`
      : html`call <a href="/calls/${event.call_id ?? ''}">${idCode(event.call_id ?? '')}</a>`
  }</td>
  <td data-label="State" class="log-state">${statusBadge(event.status)}</td>
  <td data-label="Attempts" class="log-attempts">${attemptsCell(event)}</td>
  <td data-label="Action" class="log-action"><form method="post" action="/webhook/events/${event.event_id}/resend" class="inline">${csrfField(token)}<button type="submit" class="secondary" aria-label="Resend ${event.event_id}">Resend</button></form></td>
</tr>`,
  )}</tbody></table></div>`;
}

export function registerWebhookPages(app: FastifyInstance, options: DashboardOptions): void {
  app.get<{ Querystring: { notice?: string; reveal?: string; cursor?: string } }>(
    '/webhook',
    async (request, reply) => {
      const viewer = viewerOf(request);
      const accountId = viewer.account.id;
      const stored = await options.store.webhookEndpoints.get(accountId);
      const endpoint = stored
        ? describeWebhookEndpoint(openWebhookEndpoint(stored, secretBoxOf(options)))
        : null;
      const cursor = request.query.cursor;
      const events = await listEvents(options.store, accountId, { limit: 25, ...(cursor ? { cursor } : {}) });
      const details = await Promise.all(
        events.data.map((event) => showEvent(options.store, accountId, event.event_id)),
      );
      const log = html`<section aria-labelledby="log-title"><h2 id="log-title">Delivery log</h2>
${details.length === 0 ? html`<p>No events yet.</p>` : deliveryLog(viewer.session.csrfToken, details)}
${events.next_cursor ? html`<p><a href="/webhook?cursor=${events.next_cursor}">Older events</a></p>` : ''}
</section>`;
      return sendPage(
        reply,
        page(
          viewer,
          '/webhook',
          'Webhook',
          html`${endpointSection(viewer, endpoint, request.query.reveal === '1')}${log}`,
          notices[String(request.query.notice ?? '')],
        ),
      );
    },
  );

  app.post('/webhook', async (request, reply) => {
    const viewer = viewerOf(request);
    await setWebhookEndpoint(
      options.store,
      secretBoxOf(options),
      viewer.account.id,
      field(formOf(request), 'url').trim(),
      {
        allowPrivate: options.webhookAllowPrivate,
      },
    );
    return redirectTo(reply, '/webhook?notice=saved');
  });

  app.post('/webhook/event-types', async (request, reply) => {
    await setWebhookEventTypes(options.store, viewerOf(request).account.id, formOf(request).getAll('events'));
    return redirectTo(reply, '/webhook?notice=events');
  });

  app.post('/webhook/rotate', async (request, reply) => {
    await rotateWebhookSecret(options.store, secretBoxOf(options), viewerOf(request).account.id);
    return redirectTo(reply, '/webhook?notice=rotated&reveal=1');
  });

  app.post('/webhook/enabled', async (request, reply) => {
    const enabled = field(formOf(request), 'enabled') === '1';
    await setWebhookEnabled(
      options.store,
      viewerOf(request).account.id,
      enabled,
      enabled ? null : 'disabled in the dashboard',
    );
    return redirectTo(reply, `/webhook?notice=${enabled ? 'enabled' : 'disabled'}`);
  });

  app.post<{ Params: { id: string } }>('/webhook/events/:id/resend', async (request, reply) => {
    await resendEvent(options.store, viewerOf(request).account.id, request.params.id);
    return redirectTo(reply, '/webhook?notice=resent');
  });
}
