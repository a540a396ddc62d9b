// Place a batch of calls from a CSV, paced under the account's rate limit.
//
// The CSV's columns after to_number are the agent's variables; examples/calls.csv fits the example
// appointment agent:
//   npx callwright agents create --name "Appointments" --prompt "Confirm appointments." \
//     --script examples/agents/appointment-confirmation.json \
//     --variable customer_name --variable appointment_day=Tuesday --variable reschedule_to=
//
//   npm run build
//   CALLWRIGHT_URL=http://localhost:3000 CALLWRIGHT_API_KEY=cw_live_… AGENT_ID=agt_… FROM_NUMBER=+15550009999 \
//   node examples/batch-from-csv.mjs examples/calls.csv
//
// The CSV has a header row: `to_number` and, in the other columns, the agent's variables.
// RATE_LIMIT (default 100/10s, the service default) paces the requests on our side, so the service
// never has to refuse one; the client still retries a 429 (after Retry-After) if another process
// shares the key. Every created call is printed as one JSON line; failures are reported, not retried:
// createOutbound has no de-duplication, so a call whose outcome is unknown must be checked by hand.
import { readFileSync } from 'node:fs';
import { CallwrightClient, CallwrightError, NetworkError } from '../dist/client/index.js';

const env = (name, fallback) => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`set ${name}`);
  return value;
};

/** A small CSV reader: commas, double-quoted fields with "" escapes, no multi-line fields. */
function parseCsv(text) {
  const rows = [];
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') continue;
    const fields = [];
    let field = '';
    let quoted = false;
    for (let i = 0; i < line.length; i++) {
      const char = line[i];
      if (quoted && char === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') quoted = !quoted;
      else if (char === ',' && !quoted) {
        fields.push(field);
        field = '';
      } else field += char;
    }
    fields.push(field);
    rows.push(fields.map((value) => value.trim()));
  }
  const [header = [], ...body] = rows;
  return body.map((fields) => Object.fromEntries(header.map((name, i) => [name, fields[i] ?? ''])));
}

/**
 * Client-side pacing at 90% of `requests` per `windowS` seconds, evenly spaced from the first
 * request: no opening burst, so the service's whole bucket is left to absorb requests that the
 * network or a busy server bunches together on arrival (a burst of 90% of it left 10%, and a
 * loaded test machine once used that up).
 */
function pacer(spec) {
  const match = /^(\d+)\/(\d+)s$/.exec(spec);
  if (!match) throw new Error(`RATE_LIMIT must look like 100/10s, got ${spec}`);
  const intervalMs = (Number(match[2]) * 1000) / (Number(match[1]) * 0.9);
  let nextAtMs = Date.now();
  return async function take() {
    const nowMs = Date.now();
    const atMs = Math.max(nextAtMs, nowMs);
    nextAtMs = atMs + intervalMs;
    if (atMs > nowMs) await new Promise((resolve) => setTimeout(resolve, atMs - nowMs));
  };
}

const file = process.argv[2] ?? new URL('./calls.csv', import.meta.url);
const rows = parseCsv(readFileSync(file, 'utf8'));
const client = new CallwrightClient({
  apiKey: env('CALLWRIGHT_API_KEY'),
  baseUrl: env('CALLWRIGHT_URL'),
  onRetry: ({ retry, delayMs, error }) =>
    console.error(`retry ${retry} in ${delayMs} ms after ${error.code}`),
});
const take = pacer(env('RATE_LIMIT', '100/10s'));
const concurrency = Number(env('CONCURRENCY', '4'));

let placed = 0;
let failed = 0;
let next = 0;
async function worker() {
  while (next < rows.length) {
    const row = rows[next++];
    const { to_number, ...variables } = row;
    await take();
    try {
      const call = await client.calls.createOutbound({
        agent_id: env('AGENT_ID'),
        from_number: env('FROM_NUMBER'),
        to_number,
        ...(Object.keys(variables).length > 0 ? { variables } : {}),
      });
      placed++;
      console.log(JSON.stringify({ to_number, call_id: call.call_id }));
    } catch (error) {
      failed++;
      const unknown = error instanceof NetworkError; // the call may exist: do not place it again blindly
      const detail = error instanceof CallwrightError ? { status: error.status, code: error.code } : {};
      console.log(JSON.stringify({ to_number, error: error.message, ...detail, outcome_unknown: unknown }));
    }
  }
}
await Promise.all(Array.from({ length: concurrency }, worker));
console.log(JSON.stringify({ placed, failed }));
process.exitCode = failed > 0 ? 1 : 0;
