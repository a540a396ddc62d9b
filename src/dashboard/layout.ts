import type { Viewer } from './context.js';
import { type Html, html } from './html.js';

const sections = [
  { path: '/', label: 'Overview' },
  { path: '/calls', label: 'Calls' },
  { path: '/agents', label: 'Agents' },
  { path: '/numbers', label: 'Numbers & trunks' },
  { path: '/campaigns', label: 'Campaigns' },
  { path: '/do-not-call', label: 'Do not call' },
  { path: '/data-rules', label: 'Data rules' },
  { path: '/keys', label: 'API keys' },
  { path: '/providers', label: 'Providers' },
  { path: '/webhook', label: 'Webhook' },
] as const;

export type Section = (typeof sections)[number]['path'];

function shell(title: string, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · callwright</title>
<link rel="stylesheet" href="/assets/dashboard.css">
<link rel="icon" href="data:,">
<script src="/assets/dashboard.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
${body}
</body>
</html>`;
}

/** A page of the signed-in dashboard: header with navigation and sign-out, then the content. */
export function page(viewer: Viewer, section: Section, title: string, content: Html, notice?: string): Html {
  return shell(
    title,
    html`<header class="top">
  <div class="brand"><a href="/">callwright</a> <span class="account">${viewer.account.name}</span></div>
  <nav aria-label="Dashboard sections"><ul>
    ${sections.map(
      (entry) =>
        html`<li><a href="${entry.path}"${entry.path === section ? html` aria-current="page"` : ''}>${entry.label}</a></li>`,
    )}
  </ul></nav>
  <form method="post" action="/sign-out" class="signout">
    ${csrfField(viewer.session.csrfToken)}
    <span class="who">${viewer.user.email}</span> <button type="submit" class="link">Sign out</button>
  </form>
</header>
<main id="main" tabindex="-1">
<h1>${title}</h1>
${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
${content}
</main>
<footer class="foot"><p>callwright dashboard · account ${idCode(viewer.account.id)}</p></footer>`,
  );
}

/** A page without navigation (sign-in, sign-up, errors before sign-in). */
export function barePage(title: string, content: Html): Html {
  return shell(
    title,
    html`<main id="main" class="narrow" tabindex="-1">
<p class="brand"><a href="/">callwright</a></p>
<h1>${title}</h1>
${content}
</main>`,
  );
}

export function csrfField(token: string): Html {
  return html`<input type="hidden" name="csrf_token" value="${token}">`;
}

export function errorBox(message: string | undefined): Html {
  return message ? html`<p class="error" role="alert">${message}</p>` : html``;
}

export function formatTime(iso: string | null | undefined): Html {
  if (!iso) return html`<span class="muted">—</span>`;
  return html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>`;
}

export function statusBadge(status: string): Html {
  return html`<span class="badge status-${status}">${status.replace('_', ' ')}</span>`;
}

/** An id as one unbroken word (a call, event or run id is copied whole, never read in halves). */
export function idCode(id: string): Html {
  return html`<code class="id">${id}</code>`;
}
