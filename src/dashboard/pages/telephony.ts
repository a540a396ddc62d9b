import type { FastifyInstance } from 'fastify';
import { addPhoneNumber, removePhoneNumber, sandboxRoute } from '../../admin/numbers.js';
import { addTrunk, describeTrunk, removeTrunk } from '../../admin/trunks.js';
import { AppError } from '../../domain/errors.js';
import { isE164 } from '../../domain/phone.js';
import type { PhoneNumberRecord, TrunkRecord } from '../../domain/records.js';
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

const notices: Record<string, string> = {
  'number-added': 'Number added.',
  'number-removed': 'Number removed.',
  'trunk-added': 'Trunk added. Its password is stored encrypted and is never shown.',
  'trunk-removed': 'Trunk removed.',
};

/** Binds a number to the sandbox, or to one of the account's trunks. */
async function addNumber(options: DashboardOptions, accountId: string, number: string, route: string) {
  if (route === sandboxRoute) return addPhoneNumber(options.store, accountId, number, route);
  if (!isE164(number))
    throw new AppError('invalid_phone', 'Give the number in E.164 form, such as +14155550123.');
  const trunk = await options.store.trunks.get(accountId, route);
  if (!trunk) throw new AppError('validation_error', 'Choose the sandbox or one of your trunks.');
  return options.store.numbers.add({ accountId, number, route: trunk.id });
}

function routeLabel(route: string, trunks: TrunkRecord[]): string {
  if (route === sandboxRoute) return 'sandbox';
  return `trunk ${trunks.find((trunk) => trunk.id === route)?.name ?? route}`;
}

function numbersSection(viewer: Viewer, numbers: PhoneNumberRecord[], trunks: TrunkRecord[]): Html {
  return html`<section aria-labelledby="numbers-title"><h2 id="numbers-title">Phone numbers</h2>
<form method="post" action="/numbers" class="row">
  ${csrfField(viewer.session.csrfToken)}
  <label for="number">Number (E.164)<input id="number" name="number" type="text" inputmode="tel" placeholder="+14155550123" required></label>
  <label for="route">Route<select id="route" name="route">
    <option value="sandbox">sandbox (built-in test carrier)</option>
    ${trunks.map((trunk) => html`<option value="${trunk.id}">trunk ${trunk.name}</option>`)}
  </select></label>
  <button type="submit">Add number</button>
</form>
${
  numbers.length === 0
    ? html`<p>No numbers yet. Calls need a caller ID configured here.</p>`
    : html`<div class="table-wrap"><table class="responsive"><thead><tr><th scope="col">Number</th><th scope="col">Route</th><th scope="col">Added</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${numbers.map(
        (
          entry,
        ) => html`<tr><td data-label="Number">${entry.number}</td><td data-label="Route">${routeLabel(entry.route, trunks)}</td>
<td data-label="Added">${formatTime(entry.createdAt)}</td>
<td data-label=""><form method="post" action="/numbers/remove" class="inline">${csrfField(viewer.session.csrfToken)}
<input type="hidden" name="number" value="${entry.number}"><button type="submit" class="link" aria-label="Remove ${entry.number}">Remove</button></form></td></tr>`,
      )}</tbody></table></div>`
}
<p class="muted">To bind a number to another route, remove it and add it again.</p></section>`;
}

/** TCP, UDP, or TLS with how its certificate is checked. */
function transportLabel(shown: ReturnType<typeof describeTrunk>): string {
  if (shown.transport !== 'tls') return (shown.transport ?? 'unusable URI').toUpperCase();
  if (!shown.tls_verify) return 'TLS (any certificate)';
  return shown.tls_ca ? 'TLS (own CA)' : 'TLS';
}

/** Whether the trunk registers, and how its last attempt went. */
function registrationLabel(shown: ReturnType<typeof describeTrunk>): string {
  if (!shown.register) return '—';
  const state = shown.registration?.state;
  if (state === 'registered') return `registered (${String(shown.registration?.expiresS)} s)`;
  if (state === 'failed') return `failed: ${String(shown.registration?.status ?? 'no answer')}`;
  return typeof state === 'string' ? state : 'not yet';
}

function trunksSection(viewer: Viewer, trunks: TrunkRecord[], canAdd: boolean): Html {
  return html`<section aria-labelledby="trunks-title"><h2 id="trunks-title">SIP trunks</h2>
${
  canAdd
    ? html`<form method="post" action="/trunks" class="stack">
  ${csrfField(viewer.session.csrfToken)}
  <div class="row">
    <label for="trunk-name">Name<input id="trunk-name" name="name" type="text" required pattern="[A-Za-z0-9_.\\-]{1,64}"></label>
    <label for="trunk-uri">URI <span class="hint">sips: or ;transport=tls for TLS, ;transport=tcp for TCP</span><input id="trunk-uri" name="uri" type="text" placeholder="sip:sip.carrier.example:5060" required></label>
  </div>
  <div class="row">
    <label for="trunk-username">Username <span class="hint">optional</span><input id="trunk-username" name="username" type="text" autocomplete="off"></label>
    <label for="trunk-password">Password <span class="hint">write-only: never shown again</span><input id="trunk-password" name="password" type="password" autocomplete="new-password"></label>
    <label for="trunk-domain">From domain <span class="hint">optional</span><input id="trunk-domain" name="from_domain" type="text"></label>
    <label for="trunk-proxy">Outbound proxy <span class="hint">optional SIP URI every request goes through</span><input id="trunk-proxy" name="outbound_proxy" type="text"></label>
    <label for="trunk-public-address">Public address <span class="hint">optional IP this carrier reaches callwright at (NAT)</span><input id="trunk-public-address" name="public_address" type="text"></label>
  </div>
  <div class="row">
    <label for="trunk-tls-ca">TLS CA <span class="hint">optional PEM, for a PBX whose certificate no public CA signed</span><textarea id="trunk-tls-ca" name="tls_ca" rows="3"></textarea></label>
    <label for="trunk-tls-insecure" class="inline"><input id="trunk-tls-insecure" name="tls_insecure" type="checkbox" value="on"> Accept any TLS certificate <span class="hint">not for the public internet</span></label>
  </div>
  <div class="row">
    <label for="trunk-symmetric-rtp" class="inline"><input id="trunk-symmetric-rtp" name="symmetric_rtp" type="checkbox" value="on"> Symmetric RTP <span class="hint">send media back where it comes from (far end behind NAT)</span></label>
    <label for="trunk-asserted-identity" class="inline"><input id="trunk-asserted-identity" name="asserted_identity" type="checkbox" value="on"> P-Asserted-Identity</label>
    <label for="trunk-privacy" class="inline"><input id="trunk-privacy" name="privacy" type="checkbox" value="on"> Withhold caller ID <span class="hint">Privacy: id</span></label>
    <label for="trunk-srtp">SRTP <span class="hint">media encryption (SDES)</span><select id="trunk-srtp" name="srtp"><option value="">default: required over TLS, else off</option><option value="off">off</option><option value="optional">optional</option><option value="required">required</option></select></label>
    <label for="trunk-register" class="inline"><input id="trunk-register" name="register" type="checkbox" value="on"> Register <span class="hint">REGISTER with the username and password</span></label>
  </div>
  <div><button type="submit">Add trunk</button></div>
</form>`
    : html`<p class="muted">Trunks cannot be added from this process (no secret key loaded).</p>`
}
${
  trunks.length === 0
    ? html`<p>No trunks. Numbers on the sandbox route reach the built-in test carrier.</p>`
    : html`<div class="table-wrap"><table class="responsive"><thead><tr><th scope="col">Name</th><th scope="col">URI</th><th scope="col">Transport</th><th scope="col">SRTP</th><th scope="col">Registration</th><th scope="col">Username</th><th scope="col">Password</th><th scope="col">Added</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${trunks.map((trunk) => {
        const shown = describeTrunk(trunk);
        return html`<tr><td data-label="Name">${trunk.name}</td><td data-label="URI"><code>${trunk.uri}</code></td>
<td data-label="Transport">${transportLabel(shown)}</td>
<td data-label="SRTP">${shown.srtp}</td>
<td data-label="Registration">${registrationLabel(shown)}</td>
<td data-label="Username">${shown.username ?? '—'}</td><td data-label="Password">${shown.password ? 'set' : 'none'}</td>
<td data-label="Added">${formatTime(trunk.createdAt)}</td>
<td data-label=""><form method="post" action="/trunks/remove" class="inline">${csrfField(viewer.session.csrfToken)}
<input type="hidden" name="trunk" value="${trunk.id}"><button type="submit" class="link" aria-label="Remove trunk ${trunk.name}">Remove</button></form></td></tr>`;
      })}</tbody></table></div>`
}</section>`;
}

export function registerTelephonyPages(app: FastifyInstance, options: DashboardOptions): void {
  app.get<{ Querystring: { notice?: string } }>('/numbers', async (request, reply) => {
    const viewer = viewerOf(request);
    const [numbers, trunks] = await Promise.all([
      options.store.numbers.list(viewer.account.id),
      options.store.trunks.list(viewer.account.id),
    ]);
    return sendPage(
      reply,
      page(
        viewer,
        '/numbers',
        'Numbers & trunks',
        html`${numbersSection(viewer, numbers, trunks)}${trunksSection(viewer, trunks, options.secretBox !== null)}`,
        notices[String(request.query.notice ?? '')],
      ),
    );
  });

  app.post('/numbers', async (request, reply) => {
    const viewer = viewerOf(request);
    const form = formOf(request);
    await addNumber(options, viewer.account.id, field(form, 'number').trim(), field(form, 'route'));
    return redirectTo(reply, '/numbers?notice=number-added');
  });

  app.post('/numbers/remove', async (request, reply) => {
    const viewer = viewerOf(request);
    await removePhoneNumber(options.store, viewer.account.id, field(formOf(request), 'number'));
    return redirectTo(reply, '/numbers?notice=number-removed');
  });

  app.post('/trunks', async (request, reply) => {
    const viewer = viewerOf(request);
    const secretBox = secretBoxOf(options);
    const form = formOf(request);
    const optional = (name: string) => {
      const value = field(form, name).trim();
      return value === '' ? undefined : value;
    };
    const username = optional('username');
    const password = field(form, 'password') === '' ? undefined : field(form, 'password');
    const fromDomain = optional('from_domain');
    const tlsCaPem = optional('tls_ca');
    const outboundProxy = optional('outbound_proxy');
    const publicAddress = optional('public_address');
    await addTrunk(
      options.store,
      secretBox,
      viewer.account.id,
      {
        name: field(form, 'name'),
        uri: field(form, 'uri').trim(),
        ...(username !== undefined ? { username } : {}),
        ...(password !== undefined ? { password } : {}),
        ...(fromDomain !== undefined ? { fromDomain } : {}),
        ...(tlsCaPem !== undefined ? { tlsCaPem } : {}),
        ...(outboundProxy !== undefined ? { outboundProxy } : {}),
        ...(publicAddress !== undefined ? { publicAddress } : {}),
        ...(field(form, 'tls_insecure') === 'on' ? { tlsVerify: false } : {}),
        ...(field(form, 'symmetric_rtp') === 'on' ? { symmetricRtp: true } : {}),
        ...(field(form, 'asserted_identity') === 'on' ? { assertedIdentity: true } : {}),
        ...(field(form, 'privacy') === 'on' ? { privacy: true } : {}),
        ...(field(form, 'register') === 'on' ? { register: true } : {}),
        ...(field(form, 'srtp') !== '' ? { srtp: field(form, 'srtp') } : {}),
      },
      { allowPrivate: options.trunkAllowPrivate === true },
    );
    return redirectTo(reply, '/numbers?notice=trunk-added');
  });

  app.post('/trunks/remove', async (request, reply) => {
    const viewer = viewerOf(request);
    await removeTrunk(options.store, viewer.account.id, field(formOf(request), 'trunk'));
    return redirectTo(reply, '/numbers?notice=trunk-removed');
  });
}
