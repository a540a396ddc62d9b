// An agent tool on your own server: the order desk agent (examples/agents/order-desk.settings.json)
// calls POST /tools/lookup-order mid-call. callwright signs the request like a webhook (Standard
// Webhooks, your account's webhook secret): check the signature before anything else, then answer
// with JSON — the model reads it and tells the callee.
//
//   CALLWRIGHT_WEBHOOK_SECRET=whsec_… PORT=8787 node examples/order-lookup-tool.mjs
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const secret = process.env.CALLWRIGHT_WEBHOOK_SECRET ?? '';
if (!secret.startsWith('whsec_')) {
  console.error('set CALLWRIGHT_WEBHOOK_SECRET to your webhook secret (whsec_…)');
  process.exit(1);
}
const key = Buffer.from(secret.slice('whsec_'.length), 'base64');

// Your data; a real tool would ask your order system.
const orders = {
  'A-1001': { status: 'shipped', carrier: 'UPS', delivery_date: '2026-11-27' },
  'A-1002': { status: 'processing', delivery_date: null },
};

/** Standard Webhooks: v1 = base64 HMAC-SHA256 of `id.timestamp.body`, within 5 minutes. */
function verified(headers, body) {
  const id = headers['webhook-id'];
  const timestamp = Number(headers['webhook-timestamp']);
  if (!id || !Number.isInteger(timestamp) || Math.abs(Date.now() / 1000 - timestamp) > 300) return false;
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  return String(headers['webhook-signature'] ?? '')
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => Buffer.from(entry.slice(3), 'base64'))
    .some((given) => given.length === expected.length && timingSafeEqual(given, expected));
}

const server = createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const reply = (status, value) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(value));
    };
    if (request.method !== 'POST' || request.url !== '/tools/lookup-order')
      return reply(404, { error: 'not found' });
    if (!verified(request.headers, body)) return reply(401, { error: 'bad signature' });
    // {call_id, tool, arguments, variables}
    const { arguments: args } = JSON.parse(body);
    const order = orders[String(args.order_id ?? '').toUpperCase()];
    // An answer the model can use either way: found, or not.
    reply(200, order ? { found: true, order_id: args.order_id, ...order } : { found: false });
  });
});
server.listen(Number(process.env.PORT ?? 8787), process.env.HOST ?? '127.0.0.1', () => {
  console.log(
    `order lookup tool on http://${process.env.HOST ?? '127.0.0.1'}:${server.address().port}/tools/lookup-order`,
  );
});
