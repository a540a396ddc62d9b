import type { FastifyInstance } from 'fastify';
import { callingWindowProblem, isTimeZone } from '../../domain/callingWindow.js';
import { isAppError } from '../../domain/errors.js';
import { eraseNumber, retentionDaysMax } from '../../privacy/dataRules.js';
import {
  type DashboardOptions,
  field,
  formOf,
  redirectTo,
  sendPage,
  type Viewer,
  viewerOf,
} from '../context.js';
import { html } from '../html.js';
import { csrfField, errorBox, formatTime, page } from '../layout.js';

async function rulesPage(
  options: DashboardOptions,
  viewer: Viewer,
  extra: { notice?: string; error?: string } = {},
) {
  const accountId = viewer.account.id;
  const [days, quiet, audit] = await Promise.all([
    options.store.privacy.retentionDays(accountId),
    options.store.dialRates.quietHours(accountId),
    options.store.privacy.listAudit(accountId, { limit: 50 }),
  ]);
  const csrf = csrfField(viewer.session.csrfToken);
  return page(
    viewer,
    '/data-rules',
    'Data rules',
    html`<h1>Data rules</h1>
${errorBox(extra.error)}
<section class="panel" aria-labelledby="retention-title"><h2 id="retention-title">Retention</h2>
<p>${days === null ? 'Transcripts and recordings are kept.' : `Transcripts and recordings are deleted ${days} days after a call ends; the call records stay.`}</p>
<form method="post" action="/data-rules/retention">${csrf}
  <label for="retention-days">Days to keep transcripts and recordings <span class="hint">empty: keep them</span>
    <input id="retention-days" name="days" type="number" min="1" max="${retentionDaysMax}" value="${days ?? ''}"></label>
  <button type="submit">Save retention</button>
</form></section>
<section class="panel" aria-labelledby="quiet-title"><h2 id="quiet-title">Quiet hours</h2>
<p>No call starts in them, in the callee's local time; calls asked for then wait in the queue.</p>
<form method="post" action="/data-rules/quiet-hours">${csrf}
  <label for="quiet-start">Quiet from<input id="quiet-start" name="start" type="time" value="${quiet?.start ?? ''}"></label>
  <label for="quiet-end">Quiet until<input id="quiet-end" name="end" type="time" value="${quiet?.end ?? ''}"></label>
  <label for="quiet-zone">Time zone of numbers without one<input id="quiet-zone" name="time_zone" type="text" value="${quiet?.timeZone ?? 'UTC'}"></label>
  <button type="submit">Save quiet hours</button> <span class="hint">leave the hours empty to have none</span>
</form></section>
<section class="panel" aria-labelledby="erase-title"><h2 id="erase-title">Erase a number</h2>
<p>Deletes the number's calls with their transcripts, recordings and events, and its campaign contacts. It cannot be undone; an audit entry records it without the number.</p>
<form method="post" action="/data-rules/erase">${csrf}
  <label for="erase-number">Number (E.164)<input id="erase-number" name="number" type="text" required></label>
  <button type="submit" class="secondary">Erase everything about this number</button>
</form></section>
<section class="panel" aria-labelledby="audit-title"><h2 id="audit-title">Audit log</h2>
${
  audit.length === 0
    ? html`<p>Nothing erased yet.</p>`
    : html`<div class="table-wrap"><table class="responsive" data-testid="audit-table">
<thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Number</th><th scope="col">By</th><th scope="col">Removed</th></tr></thead>
<tbody>${audit.map(
        (
          entry,
        ) => html`<tr><td data-label="When">${formatTime(entry.createdAt)}</td><td data-label="What">${entry.action.replace('_', ' ')}</td>
<td data-label="Number"><code>${entry.subject}</code></td><td data-label="By">${entry.actor}</td>
<td data-label="Removed">${Object.entries(entry.detail)
          .map(([name, count]) => `${String(count)} ${name.replace('_', ' ')}`)
          .join(', ')}</td></tr>`,
      )}</tbody></table></div>`
}</section>`,
    extra.notice,
  );
}

/** Retention, quiet hours, erasure of a number and the audit log, for people who use no API. */
export function registerDataRulePages(app: FastifyInstance, options: DashboardOptions): void {
  const notices: Record<string, string> = {
    retention: 'Retention saved.',
    quiet: 'Quiet hours saved.',
  };
  app.get<{ Querystring: { notice?: string; erased?: string } }>('/data-rules', async (request, reply) => {
    const erased = request.query.erased;
    const notice =
      erased !== undefined && /^\d+$/.test(erased)
        ? `Erased: ${erased} calls and what belonged to them.`
        : notices[request.query.notice ?? ''];
    return sendPage(reply, await rulesPage(options, viewerOf(request), notice ? { notice } : {}));
  });

  app.post('/data-rules/retention', async (request, reply) => {
    const viewer = viewerOf(request);
    const text = field(formOf(request), 'days').trim();
    const days = text === '' ? null : Number(text);
    if (days !== null && (!Number.isInteger(days) || days < 1 || days > retentionDaysMax))
      return sendPage(
        reply,
        await rulesPage(options, viewer, { error: `Days must be 1 to ${retentionDaysMax}, or empty.` }),
        400,
      );
    await options.store.privacy.setRetentionDays(viewer.account.id, days, new Date().toISOString());
    request.log.info({ retentionDays: days }, 'dashboard set retention');
    return redirectTo(reply, '/data-rules?notice=retention');
  });

  app.post('/data-rules/quiet-hours', async (request, reply) => {
    const viewer = viewerOf(request);
    const form = formOf(request);
    const [start, end, timeZone] = [
      field(form, 'start'),
      field(form, 'end'),
      field(form, 'time_zone').trim(),
    ];
    if (start === '' && end === '') {
      await options.store.dialRates.setQuietHours(viewer.account.id, null);
    } else {
      if (callingWindowProblem({ start: end, end: start }) || !isTimeZone(timeZone))
        return sendPage(
          reply,
          await rulesPage(options, viewer, {
            error: 'Quiet hours need two different times and an IANA time zone.',
          }),
          400,
        );
      await options.store.dialRates.setQuietHours(viewer.account.id, { start, end, timeZone });
    }
    request.log.info('dashboard set quiet hours');
    return redirectTo(reply, '/data-rules?notice=quiet');
  });

  app.post('/data-rules/erase', async (request, reply) => {
    const viewer = viewerOf(request);
    try {
      const result = await eraseNumber(
        options.store,
        options.recordings?.storage ?? null,
        viewer.account.id,
        field(formOf(request), 'number').trim(),
        `user:${viewer.user.id}`,
      );
      request.log.info({ auditId: result.audit_id }, 'dashboard erased a number');
      return redirectTo(reply, `/data-rules?erased=${result.calls_erased}`);
    } catch (error) {
      if (!isAppError(error) || error.status >= 500) throw error;
      return sendPage(
        reply,
        await rulesPage(options, viewer, { error: error.message }),
        error.status === 409 ? 409 : 400,
      );
    }
  });
}
