// Place one call and wait for its signed call.completed event.
//
//   npm run build
//   CALLWRIGHT_URL=http://localhost:3000 CALLWRIGHT_API_KEY=cw_live_… AGENT_ID=agt_… FROM_NUMBER=+15550009999 \
//   TO_NUMBER=+15550100002 WEBHOOK_SECRET=whsec_… RECEIVER_PORT=4000 node examples/place-call-and-wait.mjs
//
// The account's webhook must point at http://127.0.0.1:$RECEIVER_PORT/hook
// (`callwright webhook set http://127.0.0.1:4000/hook`, with CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE=true on the service).
// In your own project import from 'callwright/client' and 'callwright/webhooks' instead of ../dist.
import { createServer } from 'node:http';
import { CallwrightClient } from '../dist/client/index.js';
import { verifyWebhook } from '../dist/webhooks/verify.js';

const env = (name, fallback) => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`set ${name}`);
  return value;
};
const timeoutMs = Number(env('WAIT_TIMEOUT_MS', '60000'));

// Events can arrive before we know our call_id (or for other calls): keep them by call_id.
const events = new Map();
const waiters = new Map();
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    let event;
    try {
      event = verifyWebhook(env('WEBHOOK_SECRET'), req.headers, Buffer.concat(chunks));
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

const client = new CallwrightClient({ apiKey: env('CALLWRIGHT_API_KEY'), baseUrl: env('CALLWRIGHT_URL') });
try {
  const call = await client.calls.createOutbound({
    agent_id: env('AGENT_ID'),
    from_number: env('FROM_NUMBER'),
    to_number: env('TO_NUMBER', '+15550100002'),
    variables: process.env.VARIABLES ? JSON.parse(process.env.VARIABLES) : undefined,
  });
  console.log(JSON.stringify({ queued: call.call_id }));

  const event = await new Promise((resolve, reject) => {
    if (events.has(call.call_id)) return resolve(events.get(call.call_id));
    const timer = setTimeout(() => reject(new Error(`no call.completed within ${timeoutMs} ms`)), timeoutMs);
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
} finally {
  receiver.close();
}
