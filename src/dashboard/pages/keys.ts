import type { FastifyInstance } from 'fastify';
import { apiKeyNameMaxChars, createApiKey, describeApiKey, revokeApiKey } from '../../admin/apiKeys.js';
import { AppError } from '../../domain/errors.js';
import { isIdOf } from '../../domain/ids.js';
import type { ApiKeyRecord } from '../../domain/records.js';
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

const dayMs = 24 * 3600 * 1000;
export const rotateAfterDays = 90;
export const unusedAfterDays = 30;

/** The spec's recommended practice flags: keys due for rotation, keys nobody uses. */
export function keyFlags(key: ApiKeyRecord, nowMs: number): string[] {
  if (key.revokedAt) return [];
  const flags: string[] = [];
  if (nowMs - Date.parse(key.createdAt) > rotateAfterDays * dayMs)
    flags.push(`older than ${rotateAfterDays} days: rotate it`);
  const lastActivity = Date.parse(key.lastUsedAt ?? key.createdAt);
  if (nowMs - lastActivity > unusedAfterDays * dayMs) flags.push(`unused for ${unusedAfterDays} days`);
  return flags;
}

const practice = html`<section class="panel" aria-labelledby="practice-title">
<h2 id="practice-title">Recommended practice</h2>
<ul>
  <li>Use one key per environment or integration (production, staging, each service), so one can be revoked alone.</li>
  <li>Load keys from environment variables or a secrets manager. Never put them in client-side code or version control.</li>
  <li>Rotate every key at least every ${rotateAfterDays} days: create the new key, switch your integration to it, then revoke the old one.</li>
  <li>Revocation takes effect on the very next API request.</li>
</ul>
</section>`;

function keysTable(viewer: Viewer, keys: ApiKeyRecord[]): Html {
  if (keys.length === 0) return html`<p>No keys yet.</p>`;
  const nowMs = Date.now();
  return html`<div class="table-wrap"><table class="responsive">
<caption class="muted">Keys of ${viewer.account.name}</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Revoked</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>
${keys.map((key) => {
  const shown = describeApiKey(key);
  return html`<tr data-key-id="${key.id}">
  <td data-label="Name">${key.name}${keyFlags(key, nowMs).map((flag) => html`<br><span class="flag">${flag}</span>`)}</td>
  <td data-label="Key"><code>${shown.display}</code></td>
  <td data-label="Created">${formatTime(key.createdAt)}</td>
  <td data-label="Last used">${key.lastUsedAt ? formatTime(key.lastUsedAt) : html`<span class="muted">never</span>`}</td>
  <td data-label="Revoked">${formatTime(key.revokedAt)}</td>
  <td data-label="">${key.revokedAt ? '' : html`<a href="/keys/${key.id}/revoke" aria-label="Revoke ${key.name}">Revoke…</a>`}</td>
</tr>`;
})}
</tbody></table></div>`;
}

function createForm(viewer: Viewer): Html {
  return html`<form method="post" action="/keys" class="row" aria-labelledby="create-title">
  ${csrfField(viewer.session.csrfToken)}
  <label for="key-name">Name <span class="hint">what uses it, e.g. "production backend"</span>
    <input id="key-name" name="name" type="text" required maxlength="${apiKeyNameMaxChars}"></label>
  <button type="submit">Create key</button>
</form>`;
}

async function keysPage(options: DashboardOptions, viewer: Viewer, extra: Html, notice?: string) {
  const keys = await options.store.apiKeys.list(viewer.account.id);
  return page(
    viewer,
    '/keys',
    'API keys',
    html`${extra}
<h2 id="create-title">Create a key</h2>
${createForm(viewer)}
<h2>Keys</h2>
${keysTable(viewer, keys)}
${practice}`,
    notice,
  );
}

export function registerKeyPages(app: FastifyInstance, options: DashboardOptions): void {
  const notices: Record<string, string> = {
    revoked: 'The key is revoked: requests that use it now get 401.',
  };

  app.get<{ Querystring: { notice?: string } }>('/keys', async (request, reply) => {
    const notice = notices[String(request.query.notice ?? '')];
    return sendPage(reply, await keysPage(options, viewerOf(request), html``, notice));
  });

  app.post('/keys', async (request, reply) => {
    const viewer = viewerOf(request);
    const { record, key } = await createApiKey(
      options.store,
      viewer.account.id,
      field(formOf(request), 'name'),
    );
    request.log.info({ keyId: record.id, accountId: viewer.account.id }, 'dashboard created an API key');
    const shown = html`<section class="secret" aria-labelledby="new-key-title">
<h2 id="new-key-title">Your new key "${record.name}"</h2>
<p><strong>Copy it now: you will not see this again.</strong> Only its hash is stored.</p>
<code id="new-key" class="mono">${key}</code>
<button type="button" class="secondary" data-copy-target="new-key">Copy to clipboard</button>
</section>`;
    reply.header('Cache-Control', 'no-store');
    return sendPage(reply, await keysPage(options, viewer, shown));
  });

  app.get<{ Params: { id: string } }>('/keys/:id/revoke', async (request, reply) => {
    const viewer = viewerOf(request);
    const key = (await options.store.apiKeys.list(viewer.account.id)).find(
      (entry) => entry.id === request.params.id,
    );
    if (!key || !isIdOf('apiKey', key.id)) throw new AppError('not_found', 'No such key in this account.');
    return sendPage(
      reply,
      page(
        viewer,
        '/keys',
        'Revoke API key',
        html`<p>Revoke <strong>${key.name}</strong> (<code>${describeApiKey(key).display}</code>)? Every request that uses it
will get 401 from now on. This cannot be undone.</p>
<form method="post" action="/keys/${key.id}/revoke" class="row">
  ${csrfField(viewer.session.csrfToken)}
  <button type="submit" class="danger">Revoke ${key.name}</button>
  <a class="button secondary" href="/keys">Cancel</a>
</form>`,
      ),
    );
  });

  app.post<{ Params: { id: string } }>('/keys/:id/revoke', async (request, reply) => {
    const viewer = viewerOf(request);
    const revoked = await revokeApiKey(options.store, viewer.account.id, request.params.id);
    request.log.info({ keyId: revoked.id, accountId: viewer.account.id }, 'dashboard revoked an API key');
    return redirectTo(reply, '/keys?notice=revoked');
  });
}
