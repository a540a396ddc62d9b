import type { FastifyInstance, FastifyReply } from 'fastify';
import { callsPerSecondMax, setDialRate, setQuietHours } from '../../admin/callingRules.js';
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
  const [days, quiet, audit, rates] = await Promise.all([
    options.store.privacy.retentionDays(accountId),
    options.store.dialRates.quietHours(accountId),
    options.store.privacy.listAudit(accountId, { limit: 50 }),
    options.store.dialRates.list(accountId),
  ]);
  const csrf = csrfField(viewer.session.csrfToken);
  return page(
    viewer,
    '/data-rules',
    'Data rules',
    html`${errorBox(extra.error)}
<section class="panel" aria-labelledby="retention-title"><h2 id="retention-title">Retention</h2>
<p>${days === null ? 'Transcripts and recordings are kept.' : `Transcripts and recordings are deleted ${days} days after a call ends; the call records stay.`}</p>
<form method="post" action="/data-rules/retention" class="stack">${csrf}
  <label for="retention-days">Days to keep transcripts and recordings <span class="hint">empty: keep them</span>
    <input id="retention-days" name="days" type="number" min="1" max="${retentionDaysMax}" value="${days ?? ''}"></label>
  <button type="submit">Save retention</button>
</form></section>
<section class="panel" aria-labelledby="quiet-title"><h2 id="quiet-title">Quiet hours</h2>
<p>No call starts in them, in the callee's local time; calls asked for then wait in the queue. Leave both hours empty to have none.</p>
<form method="post" action="/data-rules/quiet-hours" class="stack">${csrf}
  <div class="fields">
  <label for="quiet-start">Quiet from<input id="quiet-start" name="start" type="time" value="${quiet?.start ?? ''}"></label>
  <label for="quiet-end">Quiet until<input id="quiet-end" name="end" type="time" value="${quiet?.end ?? ''}"></label>
  </div>
  <label for="quiet-zone">Time zone of numbers without one<input id="quiet-zone" name="time_zone" type="text" value="${quiet?.timeZone ?? 'UTC'}"></label>
  <button type="submit">Save quiet hours</button>
</form></section>
<section class="panel" aria-labelledby="rates-title"><h2 id="rates-title">Dial rates</h2>
<p>The most calls per second that leave one caller ID or one trunk, single calls and campaigns alike; the others wait in the queue.</p>
${
  rates.length === 0
    ? html`<p>No cap yet.</p>`
    : html`<div class="table-wrap"><table class="responsive" data-testid="dial-rates">
<thead><tr><th scope="col">Caller ID or trunk</th><th scope="col">Calls per second</th></tr></thead>
<tbody>${rates.map(
        (rate) =>
          html`<tr><td data-label="Caller ID or trunk">${rate.scope === 'trunk' ? 'trunk ' : ''}<code>${rate.subject}</code></td><td data-label="Calls per second">${rate.callsPerSecond}</td></tr>`,
      )}</tbody></table></div>`
}
<form method="post" action="/data-rules/dial-rates" class="stack">${csrf}
  <label for="rate-scope">Cap on<select id="rate-scope" name="scope"><option value="caller_id">a caller ID</option><option value="trunk">a trunk</option></select></label>
  <label for="rate-subject">Caller ID (E.164) or trunk name<input id="rate-subject" name="subject" type="text" required></label>
  <label for="rate-per-second">Calls per second <span class="hint">empty: no cap</span><input id="rate-per-second" name="calls_per_second" type="number" min="1" max="${callsPerSecondMax}"></label>
  <button type="submit">Save dial rate</button>
</form></section>
<section class="panel" aria-labelledby="erase-title"><h2 id="erase-title">Erase a number</h2>
<p>Deletes the number's calls with their transcripts, recordings and events, and its campaign contacts. It cannot be undone; an audit entry records it without the number.</p>
<form method="post" action="/data-rules/erase" class="stack">${csrf}
  <label for="erase-number">Number (E.164)<input id="erase-number" name="number" type="text" required></label>
  <button type="submit" class="danger">Erase everything about this number</button>
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
    rates: 'Dial rate saved.',
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

  /** Runs a change; a refusal (4xx) shows the page again with its message. */
  async function changeOrShow<T>(
    viewer: Viewer,
    reply: FastifyReply,
    change: () => Promise<T>,
    doneAt: (result: T) => string,
  ): Promise<FastifyReply> {
    try {
      return redirectTo(reply, doneAt(await change()));
    } catch (error) {
      if (!isAppError(error) || error.status >= 500) throw error;
      return sendPage(
        reply,
        await rulesPage(options, viewer, { error: error.message }),
        error.status === 409 ? 409 : 400,
      );
    }
  }

  app.post('/data-rules/quiet-hours', async (request, reply) => {
    const viewer = viewerOf(request);
    const form = formOf(request);
    const [start, end] = [field(form, 'start'), field(form, 'end')];
    const value =
      start === '' && end === '' ? null : { start, end, time_zone: field(form, 'time_zone').trim() };
    request.log.info('dashboard sets quiet hours');
    return changeOrShow(
      viewer,
      reply,
      () => setQuietHours(options.store, viewer.account.id, value),
      () => '/data-rules?notice=quiet',
    );
  });

  app.post('/data-rules/dial-rates', async (request, reply) => {
    const viewer = viewerOf(request);
    const form = formOf(request);
    const perSecond = field(form, 'calls_per_second').trim();
    const input = {
      scope: field(form, 'scope'),
      subject: field(form, 'subject').trim(),
      calls_per_second: perSecond === '' ? null : Number(perSecond),
    };
    request.log.info({ scope: input.scope }, 'dashboard sets a dial rate');
    return changeOrShow(
      viewer,
      reply,
      () => setDialRate(options.store, viewer.account.id, input),
      () => '/data-rules?notice=rates',
    );
  });

  app.post('/data-rules/erase', async (request, reply) => {
    const viewer = viewerOf(request);
    const number = field(formOf(request), 'number').trim();
    return changeOrShow(
      viewer,
      reply,
      async () => {
        const result = await eraseNumber(
          options.store,
          options.recordings?.storage ?? null,
          viewer.account.id,
          number,
          `user:${viewer.user.id}`,
        );
        request.log.info({ auditId: result.audit_id }, 'dashboard erased a number');
        return result;
      },
      (result) => `/data-rules?erased=${result.calls_erased}`,
    );
  });
}
