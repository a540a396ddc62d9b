import type { FastifyInstance } from 'fastify';
import {
  addCredential,
  describeCredential,
  removeCredential,
  testCredential,
} from '../../admin/credentials.js';
import { credentialProviders } from '../../domain/agentVoiceSettings.js';
import { AppError } from '../../domain/errors.js';
import type { ProviderCredentialRecord } from '../../domain/records.js';
import { checkPrices, defaultPrices, defaultPricesDate, type Price } from '../../domain/usage.js';
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
import { csrfField, formatTime, page } from '../layout.js';

/** What each vendor is used for, for the add form. */
const providerUses: Record<(typeof credentialProviders)[number], string> = {
  deepgram: 'Deepgram: live speech-to-text',
  elevenlabs: 'ElevenLabs: text-to-speech',
  cartesia: 'Cartesia: text-to-speech',
  openai: 'OpenAI or compatible: language model, speech, Realtime',
};

function credentialsTable(viewer: Viewer, credentials: ProviderCredentialRecord[]): Html {
  if (credentials.length === 0)
    return html`<p>No keys of your own yet: calls use the service's keys, where the operator set them.</p>`;
  return html`<div class="table-wrap"><table class="responsive">
<caption class="muted">Vendor keys of ${viewer.account.name}</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Provider</th><th scope="col">Key</th><th scope="col">Base URL</th><th scope="col">Added</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>
${credentials.map((credential) => {
  const shown = describeCredential(credential);
  return html`<tr data-credential-id="${credential.id}">
  <td data-label="Name">${credential.name}</td>
  <td data-label="Provider">${credential.provider}</td>
  <td data-label="Key"><code>••••${shown.api_key_last4}</code></td>
  <td data-label="Base URL">${credential.baseUrl ? html`<code>${credential.baseUrl}</code>` : html`<span class="muted">the vendor's own</span>`}</td>
  <td data-label="Added">${formatTime(credential.createdAt)}</td>
  <td data-label="">
    <form method="post" action="/providers/${credential.id}/test" class="inline">
      ${csrfField(viewer.session.csrfToken)}
      <button type="submit" class="secondary" aria-label="Test ${credential.name}">Test</button>
    </form>
    <a href="/providers/${credential.id}/remove" aria-label="Remove ${credential.name}">Remove…</a>
  </td>
</tr>`;
})}
</tbody></table></div>`;
}

function addForm(viewer: Viewer, canSeal: boolean): Html {
  if (!canSeal)
    return html`<p class="muted">Keys cannot be added from this process (no secret key loaded).</p>`;
  return html`<form method="post" action="/providers" class="stack" aria-labelledby="add-title" autocomplete="off">
  ${csrfField(viewer.session.csrfToken)}
  <label for="credential-name">Name <span class="hint">letters, digits, dots, dashes; e.g. "deepgram-main"</span>
    <input id="credential-name" name="name" type="text" required maxlength="64" pattern="[A-Za-z0-9_.\\-]{1,64}"></label>
  <label for="credential-provider">Provider
    <select id="credential-provider" name="provider" required>
      ${credentialProviders.map((provider) => html`<option value="${provider}">${providerUses[provider]}</option>`)}
    </select></label>
  <label for="credential-key">API key <span class="hint">sealed before it is stored; only its last 4 characters are ever shown</span>
    <input id="credential-key" name="api_key" type="password" required minlength="8" maxlength="500" autocomplete="new-password"></label>
  <label for="credential-base-url">Base URL <span class="hint">optional: a proxy, a regional or self-hosted endpoint</span>
    <input id="credential-base-url" name="base_url" type="url" maxlength="500"></label>
  <button type="submit">Add key</button>
</form>`;
}

const priceExample = JSON.stringify(
  [
    { stage: 'tts', provider: 'elevenlabs', model: null, unit: 'characters', usd: 0.03, per: 1000 },
    { stage: 'telephony', provider: 'trunk', model: null, unit: 'minutes', usd: 0.009, per: 1 },
  ],
  null,
  1,
);

function priceRows(prices: readonly Price[], source: string): Html[] {
  return prices.map(
    (price) =>
      html`<tr><td>${price.stage}</td><td>${price.provider}${price.model ? html` <span class="muted">${price.model}</span>` : ''}</td><td>$${String(price.usd)} per ${String(price.per)} ${price.unit}</td><td class="muted">${source}</td></tr>`,
  );
}

/** The prices calls are costed at (the account's first, then the defaults) and the form to set them. */
function pricesSection(viewer: Viewer, own: Price[]): Html {
  return html`<h2 id="prices-title">Prices</h2>
<p>Each call's usage (audio seconds, characters, tokens, minutes) is priced with these to give its cost,
shown on the call and sent in its <code>call.completed</code> event. Your own prices come first; the
defaults are vendors' public list prices of ${defaultPricesDate}.</p>
<div class="table-wrap"><table class="responsive" data-testid="prices">
<thead><tr><th scope="col">Stage</th><th scope="col">Provider</th><th scope="col">Price</th><th scope="col">Source</th></tr></thead>
<tbody>${priceRows(own, 'yours')}${priceRows(defaultPrices, 'default')}</tbody></table></div>
<form method="post" action="/providers/prices" class="stack" aria-labelledby="prices-title">
  ${csrfField(viewer.session.csrfToken)}
  <label for="prices-json">Your prices (JSON list; empty for none) <span class="hint">stage, provider, model (null: every model; for a trunk its id), unit, usd per "per" units</span>
    <textarea id="prices-json" name="prices" rows="8" class="mono" placeholder="${priceExample}">${own.length ? JSON.stringify(own, null, 1) : ''}</textarea></label>
  <button type="submit">Save prices</button>
</form>`;
}

async function providersPage(options: DashboardOptions, viewer: Viewer, extra: Html, notice?: string) {
  const credentials = await options.store.credentials.list(viewer.account.id);
  const prices = await options.store.prices.get(viewer.account.id);
  return page(
    viewer,
    '/providers',
    'Voice providers',
    html`${extra}
<p>Your own keys for the speech and language vendors your agents choose (their settings name the
provider of each stage). Calls use them before the service's keys.</p>
<h2>Keys</h2>
${credentialsTable(viewer, credentials)}
<h2 id="add-title">Add a key</h2>
${addForm(viewer, options.secretBox !== null)}
${pricesSection(viewer, prices)}`,
    notice,
  );
}

export function registerProviderPages(app: FastifyInstance, options: DashboardOptions): void {
  const notices: Record<string, string> = {
    added: 'The key is stored, sealed. Test it to see that the vendor accepts it.',
    removed: 'The key is deleted: calls no longer use it.',
    prices: 'Your prices are saved: calls that end from now on are costed with them.',
  };
  const allowPrivate = () => ({ allowPrivate: options.providerAllowPrivate === true });

  app.get<{ Querystring: { notice?: string } }>('/providers', async (request, reply) => {
    const notice = notices[String(request.query.notice ?? '')];
    return sendPage(reply, await providersPage(options, viewerOf(request), html``, notice));
  });

  app.post('/providers', async (request, reply) => {
    const viewer = viewerOf(request);
    const form = formOf(request);
    const baseUrl = field(form, 'base_url').trim();
    const credential = await addCredential(
      options.store,
      secretBoxOf(options),
      viewer.account.id,
      {
        name: field(form, 'name'),
        provider: field(form, 'provider'),
        apiKey: field(form, 'api_key').trim(),
        baseUrl: baseUrl === '' ? null : baseUrl,
      },
      allowPrivate(),
    );
    request.log.info(
      { credentialId: credential.id, provider: credential.provider },
      'dashboard stored a vendor key',
    );
    return redirectTo(reply, '/providers?notice=added');
  });

  app.post('/providers/prices', async (request, reply) => {
    const viewer = viewerOf(request);
    const text = field(formOf(request), 'prices').trim();
    let parsed: unknown = [];
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new AppError('validation_error', 'the prices are not valid JSON');
      }
    }
    await options.store.prices.set(viewer.account.id, checkPrices(parsed));
    request.log.info({ accountId: viewer.account.id }, 'dashboard saved the account prices');
    return redirectTo(reply, '/providers?notice=prices');
  });

  app.post<{ Params: { id: string } }>('/providers/:id/test', async (request, reply) => {
    const viewer = viewerOf(request);
    const { credential, result } = await testCredential(
      options.store,
      secretBoxOf(options),
      viewer.account.id,
      request.params.id,
      allowPrivate(),
    );
    request.log.info(
      { credentialId: credential.id, ok: result.ok, status: result.status },
      'dashboard tested a vendor key',
    );
    const outcome = html`<section class="panel ${result.ok ? 'ok' : 'error'}" role="status" aria-labelledby="test-title">
<h2 id="test-title">${result.ok ? 'It works' : 'It does not work'}: ${credential.name}</h2>
<p>${result.message} <span class="muted">(${result.latencyMs} ms)</span></p>
</section>`;
    return sendPage(reply, await providersPage(options, viewer, outcome));
  });

  app.get<{ Params: { id: string } }>('/providers/:id/remove', async (request, reply) => {
    const viewer = viewerOf(request);
    const credential = await options.store.credentials.get(viewer.account.id, request.params.id);
    if (!credential) throw new AppError('not_found', 'No such key in this account.');
    return sendPage(
      reply,
      page(
        viewer,
        '/providers',
        'Remove vendor key',
        html`<p>Remove <strong>${credential.name}</strong> (${credential.provider}, <code>••••${credential.apiKeyLast4}</code>)?
Calls will use the service's key for ${credential.provider}, if there is one. This cannot be undone.</p>
<form method="post" action="/providers/${credential.id}/remove" class="row">
  ${csrfField(viewer.session.csrfToken)}
  <button type="submit" class="danger">Remove ${credential.name}</button>
  <a class="button secondary" href="/providers">Cancel</a>
</form>`,
      ),
    );
  });

  app.post<{ Params: { id: string } }>('/providers/:id/remove', async (request, reply) => {
    const viewer = viewerOf(request);
    const removed = await removeCredential(options.store, viewer.account.id, request.params.id);
    request.log.info({ credentialId: removed.id }, 'dashboard removed a vendor key');
    return redirectTo(reply, '/providers?notice=removed');
  });
}
