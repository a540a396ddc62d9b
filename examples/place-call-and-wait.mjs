// Place one call and wait for its signed call.completed event.
//
//   npm run build
//   CALLWRIGHT_URL=http://localhost:3000 CALLWRIGHT_API_KEY=cw_live_… AGENT_ID=agt_… FROM_NUMBER=+15550009999 \
//   TO_NUMBER=+15550100002 WEBHOOK_SECRET=whsec_… RECEIVER_PORT=4000 \
//   VARIABLES='{"customer_name":"Ann"}' node examples/place-call-and-wait.mjs
//
// VARIABLES is the call's `variables` as a JSON object: the README's Appointments agent requires
// customer_name (`--variable 'customer_name!'`), and refuses a call without it.
// The account's webhook must point at http://127.0.0.1:$RECEIVER_PORT/hook
// (`callwright webhook set http://127.0.0.1:4000/hook`, with CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE=true on the service).
// In your own project import from 'callwright/client' and 'callwright/webhooks' instead of ../dist.
// Anything that goes wrong is one line on standard error and exit status 1.
import { createServer } from 'node:http';
import { CallwrightClient, CallwrightError } from '../dist/client/index.js';
import { verifyWebhook } from '../dist/webhooks/verify.js';

/** A mistake to report in one line (no stack trace): what went wrong and what to do. */
class ExampleError extends Error {}

/** The one line a person reads: the API's refusal with its status and code, or our own message. */
function describeError(error) {
  if (error instanceof CallwrightError)
    return `the API refused (${error.status} ${error.code}): ${error.message}`;
  return error instanceof ExampleError ? error.message : String(error?.message ?? error);
}

// Every failure ends here: one line on stderr, exit status 1.
function fail(error) {
  console.error(`place-call-and-wait: ${describeError(error).replace(/\s+/g, ' ').trim()}`);
  process.exit(1);
}
process.on('uncaughtException', fail);
process.on('unhandledRejection', fail);

const env = (name, fallback) => {
  const value = process.env[name] ?? fallback;
  if (value === undefined || value === '')
    throw new ExampleError(`set ${name} (see the usage at the top of this file)`);
  return value;
};

/** VARIABLES: the call's variables as a JSON object, or none. */
function variablesOf(text) {
  if (text === undefined || text === '') return undefined;
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ExampleError(`VARIABLES is not JSON: give an object, e.g. VARIABLES='{"customer_name":"Ann"}'`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ExampleError(`VARIABLES must be a JSON object, e.g. VARIABLES='{"customer_name":"Ann"}'`);
  return value;
}

const timeoutMs = Number(env('WAIT_TIMEOUT_MS', '60000'));
const variables = variablesOf(process.env.VARIABLES);
const secret = env('WEBHOOK_SECRET');
const apiKey = env('CALLWRIGHT_API_KEY');
const baseUrl = env('CALLWRIGHT_URL');
const agentId = env('AGENT_ID');
const fromNumber = env('FROM_NUMBER');

// Events can arrive before we know our call_id (or for other calls): keep them by call_id.
const events = new Map();
const waiters = new Map();
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    let event;
    try {
      event = verifyWebhook(secret, req.headers, Buffer.concat(chunks));
    } catch (error) {
      res.writeHead(400).end(error.message);
      return;
    }
    res.writeHead(204).end(); // answer first, work after
    events.set(event.data.call_id, event);
    waiters.get(event.data.call_id)?.(event);
  });
});
await new Promise((resolve) => receiver.listen(Number(env('RECEIVER_PORT', '4000')), '127.0.0.1', resolve));

const client = new CallwrightClient({ apiKey, baseUrl });
try {
  const call = await client.calls.createOutbound({
    agent_id: agentId,
    from_number: fromNumber,
    to_number: env('TO_NUMBER', '+15550100002'),
    variables,
  });
  console.log(JSON.stringify({ queued: call.call_id }));

  const event = await new Promise((resolve, reject) => {
    if (events.has(call.call_id)) return resolve(events.get(call.call_id));
    const timer = setTimeout(
      () =>
        reject(
          new ExampleError(`no call.completed within ${timeoutMs} ms (is the webhook set to this receiver?)`),
        ),
      timeoutMs,
    );
    waiters.set(call.call_id, (received) => {
      clearTimeout(timer);
      resolve(received);
    });
  });
  const record = await client.calls.get(call.call_id);
  console.log(
    JSON.stringify({
      event_id: event.id,
      call_id: event.data.call_id,
      status: event.data.status,
      end_reason: event.data.end_reason,
      duration_seconds: event.data.duration_seconds,
      record_status: record.status,
    }),
  );
} catch (error) {
  fail(error); // exits: the receiver goes with the process
} finally {
  receiver.close();
}
