// npm run bench:campaign — a campaign end to end: BENCH_CONTACTS (10,000) contacts against the
// sandbox carrier over real SIP and RTP, short calls of three kinds (people who answer and hang up
// after 2 s, busy lines, lines that ring out after the 5 s ring timeout). Prints the achieved
// calls per minute against the configured pace, the most calls live at once (sampled every 100 ms,
// from the call records) against the cap, and the campaign's total time. Then it measures how long
// a BENCH_ACCEPT_CONTACTS (100,000) contact campaign takes to be accepted over the API, as JSON and
// as a CSV file (the CLI's path), and the process's extra RSS. BENCH_PACE (calls/min, 1200),
// BENCH_CONCURRENCY (60), DATABASE_URL (PostgreSQL instead of embedded SQLite).
// First (issue 37) the due-contact figures: a BENCH_DUE_CONTACTS (100,000) contact campaign in 8
// zones, the one zone whose window is open listed last, and how soon its first contact is called;
// then the process's CPU while campaigns of 1,000 and of 100,000 contacts have nothing due.
// BENCH_ONLY=due runs only that part.
import { keyForCallsPlacedBy } from '../dist/admin/apiKeys.js';
import { createCampaign } from '../dist/campaigns/createCampaign.js';
import { isWindowOpen } from '../dist/domain/callingWindow.js';
import { parseCampaignCsv } from '../dist/domain/campaignCsv.js';
import { startCampaignBenchService } from './benchService.mjs';

const contactCount = Number(process.env.BENCH_CONTACTS ?? 10_000);
const acceptCount = Number(process.env.BENCH_ACCEPT_CONTACTS ?? 100_000);
const pace = Number(process.env.BENCH_PACE ?? 1_200);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 60);
const kinds = [
  { name: 'answers, hangs up after 2 s', persona: '+15550100006', share: 0.4 },
  { name: 'busy', persona: '+15550100002', share: 0.3 },
  { name: 'rings out (5 s)', persona: '+15550100003', share: 0.3 },
];

const bench = await startCampaignBenchService({ name: 'campaign', concurrency, callerIds: ['+15550009999'] });
const { service, account, key, agent } = bench;

// ---- Due contacts found in O(due): the first call of a 100k-contact campaign in 8 zones ----
const dueContactCount = Number(process.env.BENCH_DUE_CONTACTS ?? 100_000);
const zones = [
  'Pacific/Honolulu',
  'America/Los_Angeles',
  'America/New_York',
  'Europe/London',
  'Europe/Berlin',
  'Asia/Kolkata',
  'Asia/Tokyo',
  'Australia/Sydney',
];
const localClock = (zone, ms) =>
  new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).format(new Date(ms));
/** A window open now in `openZone` only (or in none), checked against the other zones. */
function windowFor(openZone, shiftMs, minutes) {
  const window = {
    start: localClock(openZone, Date.now() + shiftMs),
    end: localClock(openZone, Date.now() + shiftMs + minutes * 60_000),
  };
  const normalised = { ...window, weekdays: [1, 2, 3, 4, 5, 6, 7] };
  return { window, open: zones.filter((zone) => isWindowOpen(normalised, [zone], Date.now())) };
}
const rawApi = async (path, init = {}) => {
  const response = await fetch(`${service.url}/v1${path}`, {
    method: init.method ?? 'GET',
    headers: { 'X-API-Key': key, ...(init.body ? { 'Content-Type': 'application/json' } : {}) },
    ...(init.body ? { body: init.body } : {}),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(body).slice(0, 500)}`);
  return body;
};
function zonedBody(window, count, openZone) {
  // The closed zones first, the open zone's contacts last: the worst order for a scan.
  const perZone = Math.floor(count / zones.length);
  const ordered = [...zones.filter((zone) => zone !== openZone), ...(openZone ? [openZone] : [])];
  const rows = [];
  ordered.forEach((zone, zoneIndex) => {
    for (let index = 0; index < perZone; index += 1) {
      const number =
        zone === openZone
          ? `+1555010000${index < 10_000 ? 6 : 7}${String(index % 10_000).padStart(4, '0')}`
          : `+1212${zoneIndex}${String(index).padStart(6, '0')}`;
      rows.push(`{"to_number":"${number}","time_zone":"${zone}"}`);
    }
  });
  return `{"name":"due bench","agent_id":"${agent.id}","from_number":"+15550009999","calling_window":${JSON.stringify(window)},"time_zone":"UTC","max_concurrency":10,"calls_per_minute":600,"contacts":[${rows.join(',')}]}`;
}
async function cpuMsPerSecond(spanMs) {
  const before = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, spanMs));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / (spanMs / 1000);
}
{
  const openZone = zones[6];
  const { window, open } = windowFor(openZone, -5 * 60_000, 60);
  const body = zonedBody(window, dueContactCount, openZone);
  const postedAt = Date.now();
  const created = await rawApi('/campaigns', { method: 'POST', body });
  const acceptedAt = Date.now();
  let firstClaimAt = null;
  let firstInviteAt = null;
  while (firstInviteAt === null && Date.now() - acceptedAt < 120_000) {
    if (firstClaimAt === null) {
      const [calling] = await service.store.campaigns.listContacts(created.campaign_id, {
        limit: 1,
        state: 'calling',
      });
      if (calling) firstClaimAt = Date.now();
    }
    if (firstClaimAt !== null) {
      const [contact] = await service.store.campaigns.listContacts(created.campaign_id, {
        limit: 1,
        state: 'calling',
      });
      const call = contact?.callId ? await service.store.calls.getById(contact.callId) : null;
      if (call?.dialingAt) firstInviteAt = Date.parse(call.dialingAt);
      if (call && call.status !== 'queued' && !call.dialingAt) firstInviteAt = Date.now();
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await rawApi(`/campaigns/${created.campaign_id}/cancel`, { method: 'POST' });
  console.log(
    `bench:campaign (due) — ${dueContactCount} contacts in ${zones.length} zones on ${process.env.DATABASE_URL ? 'PostgreSQL' : 'SQLite'}; window open in ${open.join(', ')} (listed last)`,
  );
  console.log(`  accepted: ${acceptedAt - postedAt} ms`);
  console.log(
    `  first due contact claimed ${firstClaimAt === null ? 'never (120 s)' : `${firstClaimAt - acceptedAt} ms`} after the 201; ` +
      `its call dialling ${firstInviteAt === null ? 'never' : `${firstInviteAt - acceptedAt} ms`} after it`,
  );
  // Idle: campaigns whose every contact waits for its window. The CPU of the whole process.
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const baseline = await cpuMsPerSecond(10_000);
  const shut = windowFor(openZone, 6 * 3_600_000 + 17 * 60_000, 1);
  const small = await rawApi('/campaigns', { method: 'POST', body: zonedBody(shut.window, 1_000, null) });
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const idleSmall = await cpuMsPerSecond(10_000);
  await rawApi(`/campaigns/${small.campaign_id}/cancel`, { method: 'POST' });
  const large = await rawApi('/campaigns', {
    method: 'POST',
    body: zonedBody(shut.window, dueContactCount, null),
  });
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const idleLarge = await cpuMsPerSecond(10_000);
  await rawApi(`/campaigns/${large.campaign_id}/cancel`, { method: 'POST' });
  console.log(
    `  idle CPU (whole process, ms per s; window open in: ${shut.open.join(', ') || 'none'}): no campaign ${baseline.toFixed(1)}, ` +
      `1,000 contacts ${idleSmall.toFixed(1)}, ${dueContactCount} contacts ${idleLarge.toFixed(1)}`,
  );
}
if (process.env.BENCH_ONLY === 'due') {
  await bench.close();
  process.exit(0);
}

const contacts = [];
for (const kind of kinds) {
  const count = Math.round(contactCount * kind.share);
  for (let index = 0; index < count; index += 1) {
    contacts.push({ to_number: `${kind.persona}${String(index).padStart(4, '0')}` });
  }
}
// Interleaved, as a real list would be.
contacts.sort((a, b) => a.to_number.slice(-4).localeCompare(b.to_number.slice(-4)));

const api = async (path, init = {}) => {
  const response = await fetch(`${service.url}/v1${path}`, {
    method: init.method ?? 'GET',
    headers: { 'X-API-Key': key, ...(init.body ? { 'Content-Type': 'application/json' } : {}) },
    ...(init.body ? { body: init.body } : {}),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(body).slice(0, 500)}`);
  return body;
};

const startedAt = Date.now();
const campaign = await api('/campaigns', {
  method: 'POST',
  body: JSON.stringify({
    name: 'bench',
    agent_id: agent.id,
    from_number: '+15550009999',
    calling_window: { start: '00:00', end: '23:59' },
    time_zone: 'UTC',
    max_concurrency: concurrency,
    calls_per_minute: pace,
    contacts,
  }),
});
const acceptedMs = Date.now() - startedAt;

let maxLive = 0;
let maxCalling = 0;
let lastProgress = null;
let lastReport = Date.now();
for (;;) {
  const counts = await service.store.calls.countByStatus(account.id);
  maxLive = Math.max(maxLive, (counts.dialing ?? 0) + (counts.ringing ?? 0) + (counts.in_progress ?? 0));
  if (Date.now() - lastReport > 1_000 || !lastProgress) {
    const now = await api(`/campaigns/${campaign.campaign_id}`);
    lastProgress = now;
    maxCalling = Math.max(maxCalling, now.progress.calling);
    if (Date.now() - lastReport > 15_000) {
      const finished =
        now.progress.done + now.progress.expired + now.progress.do_not_call + now.progress.canceled;
      console.error(`  … ${finished} of ${contactCount} finished, ${now.progress.calling} on a call`);
      lastReport = Date.now();
    }
    if (now.status === 'completed') break;
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
}
const totalMs = Date.now() - startedAt;

// Attempts started over the span from the first to the last start.
const starts = [];
for (let after = -1; ; ) {
  const page = await api(`/campaigns/${campaign.campaign_id}/contacts?limit=500&after=${after}`);
  for (const contact of page.data) for (const call of contact.calls) starts.push(Date.parse(call.created_at));
  if (page.next_after === null) break;
  after = page.next_after;
}
starts.sort((a, b) => a - b);
const spanMs = starts.at(-1) - starts[0];
const achievedPerMinute = ((starts.length - 1) / spanMs) * 60_000;

console.log(
  `bench:campaign — ${contactCount} contacts on ${process.env.DATABASE_URL ? 'PostgreSQL' : 'SQLite'}, sandbox carrier over SIP/RTP`,
);
console.log(`  mix: ${kinds.map((kind) => `${Math.round(kind.share * 100)}% ${kind.name}`).join(', ')}`);
console.log(`  accepted (POST /v1/campaigns, JSON): ${acceptedMs} ms`);
console.log(
  `  pace: ${achievedPerMinute.toFixed(0)} calls/min achieved of ${pace} configured (${starts.length} attempts)`,
);
console.log(
  `  concurrency: at most ${maxLive} calls live (sampled), ${maxCalling} contacts on a call; cap ${concurrency}`,
);
console.log(`  total: ${(totalMs / 1000).toFixed(1)} s from the request to completed`);
console.log(`  outcomes: ${JSON.stringify(lastProgress.progress.outcomes)}`);

// Acceptance of a large list: JSON over the API, then the CSV path (what the CLI and dashboard run).
// The bodies are built as text, not as 100,000 objects, so that the RSS measured is the service's:
// its peak (sampled every 20 ms) above what the process held just before.
const numberAt = (prefix, index) => `${prefix}${String(5_000_000 + index).padStart(7, '0')}`;
const settings = {
  agent_id: agent.id,
  from_number: '+15550009999',
  calling_window: { start: '09:00', end: '17:00' },
  time_zone: 'America/New_York',
  starts_at: new Date(Date.now() + 86_400_000).toISOString(),
};
let contactsJson = '';
for (let index = 0; index < acceptCount; index += 1)
  contactsJson += `${index === 0 ? '' : ','}{"to_number":"${numberAt('+1212', index)}"}`;
const body = `${JSON.stringify(settings).slice(0, -1)},"contacts":[${contactsJson}]}`;
contactsJson = '';
let csvText = 'to_number\n';
for (let index = 0; index < acceptCount; index += 1) csvText += `${numberAt('+1213', index)}\n`;
const csv = Buffer.from(csvText);
csvText = '';

async function measured(work) {
  global.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  const startedAtMs = Date.now();
  const result = await work();
  const ms = Date.now() - startedAtMs;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  return { result, ms, extraMb: (peak - before) / 1e6 };
}

const json = await measured(() => api('/campaigns', { method: 'POST', body }));
await api(`/campaigns/${json.result.campaign_id}/cancel`, { method: 'POST' });
const csvKey = await keyForCallsPlacedBy(service.store, account.id, 'bench csv');
const fromCsv = await measured(() =>
  createCampaign(service.store, { account, apiKeyId: csvKey.id }, settings, {
    kind: 'csv',
    file: parseCampaignCsv(csv),
  }),
);
console.log(
  `  accepted ${acceptCount} contacts: JSON ${json.ms} ms (${(body.length / 1e6).toFixed(1)} MB body), peak RSS +${json.extraMb.toFixed(0)} MB; ` +
    `CSV ${fromCsv.ms} ms (${(csv.length / 1e6).toFixed(1)} MB), peak RSS +${fromCsv.extraMb.toFixed(0)} MB`,
);

await bench.close();
