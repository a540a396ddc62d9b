import type { FastifyInstance } from 'fastify';

/** The dashboard's only stylesheet: served by us, no CDN, no build step. */
export const dashboardCss = `
:root { --fg:#1b1f24; --muted:#57606a; --bg:#fff; --panel:#f6f8fa; --line:#d0d7de; --accent:#0a58ca;
  --ok:#1a7f37; --bad:#cf222e; --warn:#9a6700; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
* { box-sizing: border-box; }
body { margin:0; color:var(--fg); background:var(--bg); line-height:1.5; font-size:16px; }
a { color:var(--accent); }
:focus-visible { outline:3px solid #f5a623; outline-offset:2px; }
.skip { position:absolute; left:-999px; top:0; background:#000; color:#fff; padding:.5rem 1rem; z-index:10; }
.skip:focus { left:0; }
header.top { display:flex; flex-wrap:wrap; gap:.5rem 1.5rem; align-items:center; padding:.75rem 1rem;
  border-bottom:1px solid var(--line); background:var(--panel); }
.brand a { font-weight:700; text-decoration:none; color:var(--fg); font-size:1.1rem; }
.account { color:var(--muted); font-size:.9rem; margin-left:.25rem; }
nav ul { list-style:none; display:flex; flex-wrap:wrap; gap:.25rem .9rem; margin:0; padding:0; }
nav a { text-decoration:none; padding:.25rem 0; }
nav a[aria-current="page"] { font-weight:700; border-bottom:3px solid var(--accent); color:var(--fg); }
.signout { margin-left:auto; font-size:.9rem; color:var(--muted); }
main { padding:1rem; max-width:1100px; margin:0 auto; }
main.narrow { max-width:28rem; margin-top:3rem; }
main:focus { outline:none; }
h1 { font-size:1.5rem; margin:.5rem 0 1rem; }
h2 { font-size:1.2rem; margin:1.5rem 0 .5rem; }
.foot { color:var(--muted); font-size:.8rem; text-align:center; padding:1rem; }
table { border-collapse:collapse; width:100%; font-size:.92rem; }
th, td { text-align:left; padding:.45rem .5rem; border-bottom:1px solid var(--line); vertical-align:top; }
th { background:var(--panel); font-weight:600; }
.table-wrap { overflow-x:auto; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size:.88em; overflow-wrap:anywhere; }
code.id, .id { white-space:nowrap; overflow-wrap:normal; }
form.stack { display:grid; gap:.75rem; max-width:40rem; }
form.stack > button { justify-self:start; }
form.inline { display:inline; }
form.row { display:flex; flex-wrap:wrap; gap:.5rem; align-items:flex-end; }
label { font-weight:600; display:block; }
.hint { font-weight:400; color:var(--muted); font-size:.85rem; display:block; }
input:not([type]), input[type=text], input[type=email], input[type=password], input[type=url], input[type=number], input[type=date], input[type=time], select, textarea {
  width:100%; padding:.5rem; border:1px solid #8c959f; border-radius:6px; font:inherit; background:#fff; color:inherit; }
label > input:not([type=checkbox]):not([type=radio]), label > select, label > textarea { display:block; margin-top:.25rem; }
input[type=time] { width:auto; min-width:8rem; }
fieldset { border:1px solid var(--line); border-radius:6px; padding:.5rem .75rem .75rem; margin:0; min-width:0; }
legend { font-weight:600; padding:0 .25rem; }
label.inline { display:inline-flex; flex-wrap:wrap; align-items:center; gap:0 .3rem; font-weight:400; margin:.25rem 1rem 0 0; }
label.inline > code { white-space:nowrap; overflow-wrap:normal; }
.fields { display:flex; flex-wrap:wrap; gap:.5rem 1rem; align-items:flex-end; margin-bottom:.5rem; }
details > summary { cursor:pointer; font-weight:600; }
details[open] > summary { margin-bottom:.5rem; }
label.unit-field { display:inline-flex; align-items:center; gap:.35rem; font-weight:400; }
label.unit-field > input.short { display:inline-block; margin:0; width:5.5rem; }
.retry-rule { display:flex; flex-wrap:wrap; align-items:center; gap:.25rem 1rem; padding:.3rem 0; border-bottom:1px solid var(--line); }
.retry-rule:last-child { border-bottom:none; }
.retry-outcome { font-weight:600; min-width:6.5rem; }
.actions { display:flex; flex-wrap:wrap; align-items:center; gap:.75rem; margin:.5rem 0 1rem; }
textarea { min-height:6rem; font-family: ui-monospace, Menlo, Consolas, monospace; font-size:.9rem; }
form.row label { flex:1 1 10rem; }
button, .button { font:inherit; padding:.45rem .9rem; border-radius:6px; border:1px solid var(--accent); background:var(--accent);
  color:#fff; cursor:pointer; text-decoration:none; display:inline-block; }
button.secondary, .button.secondary { background:#fff; color:var(--accent); }
button.danger, .button.danger { background:var(--bad); border-color:var(--bad); color:#fff; }
button.link { background:none; border:none; color:var(--accent); padding:0; text-decoration:underline; }
.notice { background:#ddf4ff; border:1px solid #54aeff; padding:.6rem .8rem; border-radius:6px; }
.error { background:#ffebe9; border:1px solid #ff8182; padding:.6rem .8rem; border-radius:6px; }
.secret { background:#fff8c5; border:1px solid #d4a72c; padding:.8rem; border-radius:6px; }
.secret output, .secret code { display:block; font-size:1rem; margin:.4rem 0; }
.muted { color:var(--muted); }
.flag { display:inline-block; font-size:.78rem; padding:.05rem .4rem; border-radius:999px; background:#fff8c5;
  border:1px solid #d4a72c; color:#4d2d00; margin:.1rem .2rem 0 0; }
.badge { display:inline-block; font-size:.8rem; padding:.05rem .5rem; border-radius:999px; border:1px solid var(--line); background:var(--panel); }
.status-completed, .status-delivered { background:#dafbe1; border-color:#4ac26b; }
.status-failed, .status-busy { background:#ffebe9; border-color:#ff8182; }
.status-no_answer, .status-canceled { background:#fff8c5; border-color:#d4a72c; }
.status-dialing, .status-ringing, .status-in_progress, .status-queued { background:#ddf4ff; border-color:#54aeff; }
.cards { display:grid; grid-template-columns:repeat(auto-fit, minmax(9rem, 1fr)); gap:.75rem; }
.card { border:1px solid var(--line); border-radius:8px; padding:.75rem; background:var(--panel); }
.card strong { display:block; font-size:1.5rem; }
.panel { border:1px solid var(--line); border-radius:8px; padding:1rem; margin:1rem 0; }
.panel > h2:first-child { margin-top:0; }
.transcript { list-style:none; padding:0; }
.transcript li { padding:.4rem .6rem; border-radius:6px; margin:.3rem 0; background:var(--panel); }
.transcript li.callee { background:#ddf4ff; }
dl.facts { display:grid; grid-template-columns:max-content 1fr; gap:.3rem 1rem; }
dl.facts dt { font-weight:600; }
dl.facts dd { margin:0; }
svg.chart { width:100%; height:auto; max-width:720px; }
svg.chart text { font-size:11px; fill:#57606a; }
svg.chart text.axis-title { font-weight:600; }
.legend { display:flex; flex-wrap:wrap; gap:.75rem; list-style:none; padding:0; font-size:.85rem; }
.legend span { display:inline-block; width:.8rem; height:.8rem; border-radius:2px; margin-right:.3rem; vertical-align:middle; }
.swatch-completed { background:#2da44e; } .swatch-busy { background:#cf222e; } .swatch-no_answer { background:#d4a72c; }
.swatch-failed { background:#8250df; } .swatch-canceled { background:#8c959f; }
.visually-hidden { position:absolute; width:1px; height:1px; overflow:hidden; clip:rect(0 0 0 0); white-space:nowrap; }
audio { width:100%; max-width:32rem; }
@media (max-width: 640px) {
  header.top { flex-direction:column; align-items:flex-start; }
  .signout { margin-left:0; }
  table.responsive thead { position:absolute; left:-9999px; }
  table.responsive tr { display:block; border:1px solid var(--line); border-radius:8px; margin:.5rem 0; padding:.25rem; }
  table.responsive td { display:grid; grid-template-columns:7rem minmax(0, 1fr); gap:0 .5rem; border:none; padding:.25rem .5rem; }
  table.responsive td:has(.id) { grid-template-columns:minmax(0, 1fr); }
  table.responsive td > .badge { justify-self:start; }
  table.responsive td::before { content: attr(data-label); font-weight:600; color:var(--muted); }
  table.responsive th[scope=row] { display:block; border:none; background:none; padding:.25rem .5rem; }
  table.responsive caption { text-align:left; font-weight:600; }
  /* A log row in three lines: what and its state; for what, and the action; its attempts. */
  table.responsive.log tr { display:grid; grid-template-columns:minmax(0, 1fr) auto; gap:.15rem .5rem; }
  table.responsive.log td { display:block; padding:.1rem .25rem; }
  table.responsive.log td::before { content:none; }
  table.responsive.log td.log-state, table.responsive.log td.log-action { text-align:right; }
  table.responsive.log td.log-what { grid-area:1 / 1; }
  table.responsive.log td.log-state { grid-area:1 / 2; }
  table.responsive.log td.log-for { grid-area:2 / 1; }
  table.responsive.log td.log-action { grid-area:2 / 2 / span 2; align-self:end; }
  table.responsive.log td.log-attempts { grid-area:3 / 1; }
  dl.facts { grid-template-columns:1fr; }
}
`;

/**
 * The dashboard's only script, progressive enhancement: pages work without it. It copies a new
 * key to the clipboard, re-fetches regions marked data-live-refresh while calls are live, and reads
 * a chosen CSV file into the text area it names (data-fill-target).
 */
export const dashboardJs = `
'use strict';
document.addEventListener('click', function (event) {
  var button = event.target.closest && event.target.closest('[data-copy-target]');
  if (!button) return;
  var target = document.getElementById(button.getAttribute('data-copy-target'));
  if (!target) return;
  var text = target.textContent.trim();
  var done = function () { button.textContent = 'Copied'; };
  if (navigator.clipboard && navigator.clipboard.writeText) {
    navigator.clipboard.writeText(text).then(done, function () { selectText(target); });
  } else { selectText(target); }
});
function selectText(node) {
  var range = document.createRange(); range.selectNodeContents(node);
  var selection = window.getSelection(); selection.removeAllRanges(); selection.addRange(range);
}
function refresh(region) {
  var delay = Number(region.getAttribute('data-live-refresh')) || 2000;
  setTimeout(function () {
    fetch(window.location.href, { credentials: 'same-origin', headers: { 'Accept': 'text/html' } })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (text) {
        if (text === null) { refresh(region); return; }
        var fresh = new DOMParser().parseFromString(text, 'text/html').getElementById(region.id);
        if (!fresh) return;
        region.innerHTML = fresh.innerHTML;
        if (fresh.hasAttribute('data-live-refresh')) refresh(region);
        else region.removeAttribute('data-live-refresh');
      }, function () { refresh(region); });
  }, delay);
}
document.querySelectorAll('[data-live-refresh]').forEach(refresh);
document.addEventListener('change', function (event) {
  var input = event.target;
  if (!input.matches || !input.matches('input[type=file][data-fill-target]') || !input.files[0]) return;
  var target = document.getElementById(input.getAttribute('data-fill-target'));
  input.files[0].text().then(function (text) { if (target) target.value = text; });
});
`;

export function registerAssets(app: FastifyInstance): void {
  app.get('/assets/dashboard.css', async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('Cache-Control', 'public, max-age=300').send(dashboardCss),
  );
  app.get('/assets/dashboard.js', async (_request, reply) =>
    reply
      .type('text/javascript; charset=utf-8')
      .header('Cache-Control', 'public, max-age=300')
      .send(dashboardJs),
  );
}
