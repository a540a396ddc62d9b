// A call.completed receiver that stores each event once, keyed by webhook-id.
//
//   npm run build
//   WEBHOOK_SECRET=whsec_… PORT=4000 STORE_DIR=./received node examples/idempotent-receiver.mjs
//
// Delivery is at-least-once: a retry (or `events resend`) repeats the same webhook-id and body.
// Each event is written to STORE_DIR/<webhook-id>.json with an exclusive create, which succeeds
// exactly once however many copies arrive, even concurrently — a database would use a unique key
// on the event id (INSERT … ON CONFLICT DO NOTHING). The answer is 2xx for a copy too, so the
// sender stops retrying.
//
// Anyone can reach a receiver, so it reads no more than it must: a request without the three
// webhook headers, or with a body larger than any event, is refused before its body is read; a
// request that has not fully arrived within REQUEST_TIMEOUT_S (default 10) is cut off.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { verifyWebhook } from '../dist/webhooks/verify.js';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) throw new Error('set WEBHOOK_SECRET');
const storeDir = process.env.STORE_DIR ?? './received-events';
mkdirSync(storeDir, { recursive: true });
const maxBodyBytes = 5 * 1024 * 1024;
const requestTimeoutMs = Number(process.env.REQUEST_TIMEOUT_S ?? 10) * 1000;

const server = createServer(
  {
    requestTimeout: requestTimeoutMs,
    headersTimeout: Math.min(requestTimeoutMs, 10_000),
    connectionsCheckingInterval: Math.min(1000, requestTimeoutMs),
  },
  handle,
);

/**
 * Answers and closes without reading the rest of the body. `Connection: close`, or Node would read
 * it all to reuse the connection; and a FIN, then the socket dropped a moment later, because
 * dropping it at once resets a connection whose client is still sending, which then loses the answer.
 */
function refuse(req, res, status) {
  const socket = req.socket;
  // Stop reading now, for good: Node's HTTP server resumes a paused socket to drain a body it
  // expects to be read (and a flowing request asks for more), so resuming is switched off here.
  req.pause();
  socket.pause();
  socket.resume = () => socket;
  socket.destroySoon = () => {
    socket.on('error', () => {});
    socket.end();
    socket.pause();
    setTimeout(() => socket.destroy(), 2000).unref();
  };
  res.writeHead(status, { Connection: 'close' }).end();
}

function handle(req, res) {
  if (req.method !== 'POST') return refuse(req, res, 405);
  const signed = ['webhook-id', 'webhook-timestamp', 'webhook-signature'].every((name) => req.headers[name]);
  if (!signed) return refuse(req, res, 400);
  if (Number(req.headers['content-length'] ?? 0) > maxBodyBytes) return refuse(req, res, 413);
  const chunks = [];
  let receivedBytes = 0;
  req.on('data', (chunk) => {
    receivedBytes += chunk.length;
    if (receivedBytes <= maxBodyBytes) return chunks.push(chunk);
    req.removeAllListeners('data').removeAllListeners('end');
    refuse(req, res, 413);
  });
  req.on('end', () => {
    const rawBody = Buffer.concat(chunks);
    let event;
    try {
      event = verifyWebhook(secret, req.headers, rawBody);
    } catch (error) {
      console.log(JSON.stringify({ refused: error.message }));
      return res.writeHead(400).end();
    }
    const webhookId = req.headers['webhook-id'];
    if (!/^[A-Za-z0-9_-]{1,100}$/.test(webhookId) || webhookId !== event.id) return res.writeHead(400).end();
    try {
      writeFileSync(join(storeDir, `${webhookId}.json`), rawBody, { flag: 'wx' });
      console.log(
        JSON.stringify({ stored: webhookId, call_id: event.data.call_id, status: event.data.status }),
      );
    } catch (error) {
      if (error.code !== 'EEXIST') return res.writeHead(500).end();
      console.log(JSON.stringify({ duplicate: webhookId }));
    }
    res.writeHead(204).end();
  });
}
server.listen(Number(process.env.PORT ?? 4000), '127.0.0.1', () => {
  console.log(JSON.stringify({ listening: server.address().port }));
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
