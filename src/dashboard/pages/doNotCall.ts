import type { FastifyInstance } from 'fastify';
import { parseDoNotCallCsv } from '../../domain/doNotCallCsv.js';
import { AppError } from '../../domain/errors.js';
import { isE164 } from '../../domain/phone.js';
import type { DoNotCallEntry } from '../../domain/records.js';
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
import { csrfField, formatTime, page } from '../layout.js';

const pageSize = 200;

function addForm(viewer: Viewer, text = ''): Html {
  return html`<form method="post" action="/do-not-call" aria-labelledby="add-title">
  ${csrfField(viewer.session.csrfToken)}
  <label for="dnc-numbers">Numbers <span class="hint">one per line in E.164 (+14155550123), or CSV rows <code>number,reason</code>; every row is checked before any is added</span>
    <textarea id="dnc-numbers" name="numbers" rows="8" required>${text}</textarea></label>
  <label for="dnc-reason">Reason for numbers without one <span class="hint">optional</span>
    <input id="dnc-reason" name="reason" type="text" maxlength="200"></label>
  <button type="submit">Add to the list</button>
</form>`;
}

function entriesTable(viewer: Viewer, entries: DoNotCallEntry[]): Html {
  if (entries.length === 0) return html`<p>No numbers on the list.</p>`;
  return html`<div class="table-wrap"><table class="responsive" data-testid="dnc-table">
<caption class="muted">Numbers ${viewer.account.name} never dials</caption>
<thead><tr><th scope="col">Number</th><th scope="col">Reason</th><th scope="col">Added by</th><th scope="col">Added</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>
${entries.map(
  (entry) => html`<tr>
  <td data-label="Number"><code>${entry.number}</code></td>
  <td data-label="Reason">${entry.reason ?? html`<span class="muted">—</span>`}</td>
  <td data-label="Added by">${entry.source === 'callee_request' ? 'the callee, on a call' : entry.source}</td>
  <td data-label="Added">${formatTime(entry.createdAt)}</td>
  <td data-label=""><form method="post" action="/do-not-call/remove" class="inline">
    ${csrfField(viewer.session.csrfToken)}<input type="hidden" name="number" value="${entry.number}">
    <button type="submit" class="secondary" aria-label="Take ${entry.number} off the list">Remove</button></form></td>
</tr>`,
)}
</tbody></table></div>`;
}

async function listPage(
  options: DashboardOptions,
  viewer: Viewer,
  after: string | undefined,
  extra: { report?: Html; text?: string; notice?: string } = {},
): Promise<Html> {
  const rows = await options.store.doNotCall.list(viewer.account.id, {
    limit: pageSize + 1,
    ...(after ? { afterNumber: after } : {}),
  });
  const shown = rows.slice(0, pageSize);
  const next = rows.length > pageSize ? shown.at(-1)?.number : undefined;
  return page(
    viewer,
    '/do-not-call',
    'Do-not-call list',
    html`<p>Calls to these numbers are accepted by the API but never dialled: they end at once as
<code>canceled</code> / <code>do_not_call</code>. Callees who ask the agent to stop calling are added here by the agent.</p>
${extra.report ?? ''}
<h2 id="add-title">Add numbers</h2>
${addForm(viewer, extra.text)}
<h2>On the list</h2>
${entriesTable(viewer, shown)}
${next ? html`<p><a href="/do-not-call?after=${encodeURIComponent(next)}">Next ${pageSize}</a></p>` : ''}`,
    extra.notice,
  );
}

export function registerDoNotCallPages(app: FastifyInstance, options: DashboardOptions): void {
  const notices: Record<string, string> = { removed: 'The number was taken off the list.' };

  app.get<{ Querystring: { after?: string; notice?: string; added?: string } }>(
    '/do-not-call',
    async (request, reply) => {
      const after = request.query.after;
      if (after !== undefined && !isE164(after))
        throw new AppError('validation_error', 'after must be an E.164 number');
      const added = Number(request.query.added);
      const notice =
        notices[String(request.query.notice ?? '')] ??
        (Number.isInteger(added) && added >= 0 ? `${added} new numbers added.` : undefined);
      return sendPage(reply, await listPage(options, viewerOf(request), after, notice ? { notice } : {}));
    },
  );

  app.post('/do-not-call', async (request, reply) => {
    const viewer = viewerOf(request);
    const form = formOf(request);
    const text = field(form, 'numbers');
    const reason = field(form, 'reason').trim().slice(0, 200) || null;
    const parsed = await parseDoNotCallCsv(text);
    if (parsed.problems.length > 0) {
      const report = html`<section class="error" role="alert" aria-labelledby="report-title">
<h2 id="report-title">Nothing was added: ${parsed.problems.length} ${parsed.problems.length === 1 ? 'row needs' : 'rows need'} fixing</h2>
<ul data-testid="dnc-report">${parsed.problems.slice(0, 100).map((problem) => html`<li>Line ${problem.line}: ${problem.message}</li>`)}</ul>
</section>`;
      return sendPage(
        reply,
        await listPage(options, viewer, undefined, { report, text: text.slice(0, 100_000) }),
        400,
      );
    }
    const added = await options.store.doNotCall.add(
      viewer.account.id,
      parsed.entries.map((entry) => ({
        ...entry,
        reason: entry.reason ?? reason,
        source: 'dashboard' as const,
      })),
    );
    request.log.info({ added, accountId: viewer.account.id }, 'dashboard added do-not-call numbers');
    return redirectTo(reply, `/do-not-call?added=${added}`);
  });

  app.post('/do-not-call/remove', async (request, reply) => {
    const viewer = viewerOf(request);
    const number = field(formOf(request), 'number');
    if (!isE164(number) || !(await options.store.doNotCall.remove(viewer.account.id, number)))
      throw new AppError('not_found', 'That number is not on the list.');
    request.log.info({ accountId: viewer.account.id }, 'dashboard took a number off the do-not-call list');
    return redirectTo(reply, '/do-not-call?notice=removed');
  });
}
