import { createHmac } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { setWebhookEndpoint } from '../../src/admin/webhooks.js';
import type { CallRecord } from '../../src/domain/records.js';
import {
  type FakeChatDelta,
  type FakeOpenAiServer,
  fakeToolCallDelta,
} from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { type startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall, request } from '../helpers/http.js';
import { startLlmTestService } from '../helpers/llmService.js';

/**
 * Tools a business can plug in (issue 35), end to end on the sandbox: an agent saved over the API
 * with tools that use GET, PATCH, DELETE and POST, static query parameters, plain and secret
 * headers and each kind of per-tool auth; a real HTTP server standing for the business checks what
 * arrives. The secrets are sealed in the database, shown as {"sealed": true} and never logged; the
 * answer's values land in the call's variables (the next tool request and call.completed carry
 * them); the tool's messages are said only while it is really pending, and on failure.
 */

interface ToolRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  atMs: number;
}

const secrets = {
  shopKey: 'shop-key-SECRET-1a2b',
  bearer: 'bearer-SECRET-3c4d',
  basicPassword: 'basic-SECRET-5e6f',
  headerToken: 'header-SECRET-7a8b',
};

let fake: FakeOpenAiServer;
let toolServer: Server;
let toolBaseUrl: string;
const toolRequests: ToolRequest[] = [];
let webhookSecret: string;
let service: Awaited<ReturnType<typeof startFullService>>;
let key: string;
let accountId: string;
let agentId: string;

function signatureValid(headers: IncomingHttpHeaders, signed: string): boolean {
  const key = Buffer.from(webhookSecret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key)
    .update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${signed}`)
    .digest('base64');
  return String(headers['webhook-signature']).split(' ').includes(`v1,${expected}`);
}

function startToolServer(): Promise<Server> {
  const server = createServer((incoming, response) => {
    const parts: Buffer[] = [];
    incoming.on('data', (part: Buffer) => parts.push(part));
    incoming.on('end', () => {
      const path = incoming.url ?? '';
      toolRequests.push({
        method: incoming.method ?? '',
        path,
        headers: incoming.headers,
        body: Buffer.concat(parts).toString('utf8'),
        atMs: Date.now(),
      });
      const answer = (status: number, body: unknown, delayMs = 0) =>
        setTimeout(() => {
          if (response.destroyed) return;
          response.writeHead(status, { 'content-type': 'application/json' });
          response.end(JSON.stringify(body));
        }, delayMs);
      if (path.startsWith('/orders/status'))
        answer(
          200,
          { status: 'shipped', delivery: { eta: 'Tuesday', days: 2 }, items: [{ sku: 'SKU-9' }], note: null },
          // Long enough for the start message and the delayed one to be heard before it, on a
          // loaded machine too (the delayed one is said only while the tool is pending); within
          // the tool's 6 s timeout.
          5_000,
        );
      else if (path.startsWith('/orders/update')) answer(200, { updated: true }, 20);
      else if (path.startsWith('/orders/cancel')) answer(200, { cancelled: true });
      else answer(500, { error: 'database down' });
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/**
 * The model: `check` looks the order up (slow, GET), then updates it (PATCH) with what it learned;
 * `cancel` cancels it (DELETE); `broken` calls a tool that fails. Given the last answer it speaks
 * and hangs up.
 */
function playModel(chat: { messages: Array<Record<string, unknown>> }): FakeChatDelta[] | undefined {
  const last = chat.messages.at(-1);
  const system = String(chat.messages[0]?.content ?? '');
  const toolCase = /Case: (\w+)/.exec(system)?.[1] ?? 'check';
  if (last?.role === 'tool') {
    if (last.tool_call_id === 'call_check_order' && toolCase === 'handoff')
      return [
        { delta: { role: 'assistant', content: 'Let me put you through.' } },
        fakeToolCallDelta('transfer_call', JSON.stringify({ target: 'human' })),
      ];
    if (last.tool_call_id === 'call_check_order')
      return [fakeToolCallDelta('update_order', JSON.stringify({ note: 'customer informed' }))];
    const words = String(last.content).includes('"error"') ? 'I will call you back.' : 'All done.';
    return [
      { delta: { role: 'assistant', content: `${words} Goodbye!` } },
      fakeToolCallDelta('end_call', '{}'),
    ];
  }
  const tool =
    { check: 'check_order', handoff: 'check_order', cancel: 'cancel_order', broken: 'broken_tool' }[
      toolCase
    ] ?? 'check_order';
  return [fakeToolCallDelta(tool, JSON.stringify({ order_id: 'A-1001', tags: ['a', 'b'] }))];
}

const orderParameters = {
  type: 'object',
  properties: { order_id: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } },
  required: ['order_id'],
};

function agentTools() {
  return [
    {
      name: 'check_order',
      description: 'Looks an order up.',
      parameters: orderParameters,
      url: `${toolBaseUrl}/orders/status?source=callwright`,
      method: 'GET',
      query: { api_version: '2' },
      headers: { 'X-Shop': 'eu', 'X-Api-Key': { secret: secrets.shopKey } },
      auth: { type: 'bearer', token: secrets.bearer },
      timeout_ms: 6_000,
      response_variables: {
        order_status: '$.status',
        eta: '$.delivery.eta',
        eta_days: '$.delivery.days',
        first_sku: '$.items[0].sku',
        missing: '$.nothing.here',
        note: '$.note',
      },
      messages: {
        start: 'One moment, let me check.',
        delayed_after_ms: 700,
        delayed: 'Still looking.',
        failed: 'Sorry, I cannot reach our order system.',
      },
    },
    {
      name: 'update_order',
      description: 'Updates an order.',
      parameters: { type: 'object', properties: { note: { type: 'string' } } },
      url: `${toolBaseUrl}/orders/update`,
      method: 'PATCH',
      auth: { type: 'header', name: 'X-Token', value: secrets.headerToken },
      // Answered in 20 ms: neither message may be heard.
      messages: { start: 'Updating your order.', delayed_after_ms: 300, delayed: 'Nearly there.' },
    },
    {
      name: 'cancel_order',
      description: 'Cancels an order.',
      parameters: orderParameters,
      url: `${toolBaseUrl}/orders/cancel`,
      method: 'DELETE',
      auth: { type: 'basic', username: 'shop-user', password: secrets.basicPassword },
    },
    {
      name: 'broken_tool',
      description: 'Fails.',
      parameters: orderParameters,
      url: `${toolBaseUrl}/broken`,
      messages: { failed: 'Sorry, I cannot reach our order system.' },
    },
  ];
}

const api = (path: string, init: { method?: string; body?: unknown } = {}) =>
  request(`${service.url}/v1${path}`, {
    method: init.method ?? 'GET',
    headers: { 'X-API-Key': key, ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });

beforeAll(async () => {
  toolServer = await startToolServer();
  toolBaseUrl = `http://127.0.0.1:${(toolServer.address() as AddressInfo).port}`;
  ({ fake, service, key, accountId } = await startLlmTestService(
    { chatStreamFor: playModel },
    { CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true' },
  ));
  webhookSecret = (
    await setWebhookEndpoint(service.store, service.secretBox, accountId, `${toolBaseUrl}/events`, {
      allowPrivate: true,
    })
  ).secret;
  const created = await api('/agents', {
    method: 'POST',
    body: {
      name: 'Order desk',
      prompt: 'You help {{customer_name}} with an order. Case: {{tool_case}}',
      variables: ['customer_name', 'tool_case'],
      brain: 'llm',
      settings: {
        llm: { model: 'test-model' },
        tools: agentTools(),
        // A warm transfer's whisper is rendered with the variables the tools' answers set.
        transfer: {
          targets: { human: '+15550100015' },
          warm: true,
          whisper: 'Order {{order_status}}, due {{eta}}.',
        },
      },
      max_duration_s: 90,
    },
  });
  expect(created.status).toBe(200);
  agentId = (created.body as { agent_id: string }).agent_id;
  await addPhoneNumber(service.store, accountId, '+15550009998');
});

afterAll(async () => {
  await service?.dispose();
  await fake?.close();
  toolServer?.closeAllConnections();
  toolServer?.close();
});

async function callWithCase(
  toolCase: string,
  toNumber = '+15550100007',
  waitMs = 40_000,
): Promise<CallRecord> {
  const result = await postCall(service.url, key, {
    agent_id: agentId,
    from_number: '+15550009998',
    to_number: toNumber,
    variables: { customer_name: 'Ann', tool_case: toolCase },
  });
  expect(result.status).toBe(200);
  return waitForTerminal(service, (result.body as { call_id: string }).call_id, waitMs);
}

const agentSaid = (call: CallRecord) =>
  call.transcript.filter((entry) => entry.role === 'agent' && !entry.event).map((entry) => entry.text);

/** Speech and tool events in the order they were heard (by start time). */
const timeline = (call: CallRecord) =>
  [...call.transcript]
    .sort((a, b) => a.start_ms - b.start_ms)
    .map((entry) => (entry.event ? `[${entry.event}]` : entry.text));

function requestsSince(before: number, pathStart: string): ToolRequest[] {
  return toolRequests.slice(before).filter((entry) => entry.path.startsWith(pathStart));
}

describe('tools a business can plug in (issue 35)', () => {
  it('shows every secret as {"sealed": true} and keeps it when that is sent back', async () => {
    const shown = await api(`/agents/${agentId}`);
    expect(shown.status).toBe(200);
    for (const secret of Object.values(secrets)) expect(shown.text).not.toContain(secret);
    expect(shown.text).not.toContain('v1.');
    const tools = (shown.body as { settings: { tools: Array<Record<string, unknown>> } }).settings.tools;
    expect(tools[0]?.headers).toEqual({ 'X-Shop': 'eu', 'X-Api-Key': { sealed: true } });
    expect(tools[0]?.auth).toEqual({ type: 'bearer', token: { sealed: true } });
    expect(tools[1]?.auth).toEqual({ type: 'header', name: 'X-Token', value: { sealed: true } });
    expect(tools[2]?.auth).toEqual({ type: 'basic', username: 'shop-user', password: { sealed: true } });
    // What was shown, sent back unchanged: the stored secrets stay (the calls below use them).
    const saved = await api(`/agents/${agentId}`, {
      method: 'PATCH',
      body: { settings: (shown.body as { settings: unknown }).settings },
    });
    expect(saved.status).toBe(200);
    expect(saved.text).not.toContain(secrets.shopKey);
  });

  it('stores the secrets sealed: neither the agent row nor the database files hold them in clear', async () => {
    const stored = JSON.stringify((await service.store.agents.get(accountId, agentId))?.settings);
    expect(stored).toContain('"sealed":"v1.');
    const files = readdirSync(service.dataDir, { recursive: true, encoding: 'utf8' }).filter((name) =>
      /\.(db|sqlite|sqlite3)(-wal)?$|-wal$/.test(name),
    );
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const bytes = readFileSync(join(service.dataDir, file));
      for (const secret of Object.values(secrets)) expect(bytes.includes(secret)).toBe(false);
    }
  });

  it('GETs with the query, headers and bearer token; maps the answer into variables the next request and call.completed carry; says start then delayed before the answer', async () => {
    const before = toolRequests.length;
    const call = await callWithCase('check');
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });

    const [get] = requestsSince(before, '/orders/status');
    expect(get?.method).toBe('GET');
    expect(get?.body).toBe('');
    const query = new URL(get?.path ?? '/', 'http://x').searchParams;
    expect(query.get('source')).toBe('callwright');
    expect(query.get('api_version')).toBe('2');
    expect(query.get('order_id')).toBe('A-1001');
    expect(query.getAll('tags')).toEqual(['a', 'b']);
    expect(query.get('call_id')).toBe(call.id);
    expect(get?.headers['x-shop']).toBe('eu');
    expect(get?.headers['x-api-key']).toBe(secrets.shopKey);
    expect(get?.headers.authorization).toBe(`Bearer ${secrets.bearer}`);
    // A bodyless request is signed over its path and query.
    expect(signatureValid(get?.headers ?? {}, get?.path ?? '')).toBe(true);

    const [patch] = requestsSince(before, '/orders/update');
    expect(patch?.method).toBe('PATCH');
    expect(patch?.headers['x-token']).toBe(secrets.headerToken);
    expect(patch?.headers.authorization).toBeUndefined();
    expect(signatureValid(patch?.headers ?? {}, patch?.body ?? '')).toBe(true);
    const mapped = { order_status: 'shipped', eta: 'Tuesday', eta_days: 2, first_sku: 'SKU-9' };
    // The second tool sees what the first one's answer set.
    expect(JSON.parse(patch?.body ?? '{}')).toMatchObject({
      tool: 'update_order',
      arguments: { note: 'customer informed' },
      variables: { customer_name: 'Ann', tool_case: 'check', ...mapped },
    });

    expect(call.variables).toEqual({ customer_name: 'Ann', tool_case: 'check', ...mapped });
    const events = await service.store.events.list(accountId, { limit: 50 });
    const completed = events
      .map(
        (event) => JSON.parse(event.body) as { type: string; data: { call_id: string; variables: unknown } },
      )
      .find((event) => event.type === 'call.completed' && event.data.call_id === call.id);
    expect(completed?.data.variables).toEqual({ customer_name: 'Ann', tool_case: 'check', ...mapped });

    // start at once, delayed after 700 ms, both before the answer; nothing of update_order (20 ms).
    expect(agentSaid(call)).toEqual(['One moment, let me check.', 'Still looking.', 'All done.', 'Goodbye!']);
    expect(timeline(call)).toEqual([
      '[tool_call]',
      'One moment, let me check.',
      'Still looking.',
      '[tool_result]',
      '[tool_call]',
      '[tool_result]',
      'All done.',
      'Goodbye!',
    ]);
    const toolCall = call.transcript.find((entry) => entry.event === 'tool_call');
    const delayed = call.transcript.find((entry) => entry.text === 'Still looking.');
    expect((delayed?.start_ms ?? 0) - (toolCall?.start_ms ?? 0)).toBeGreaterThanOrEqual(650);
  }, 45_000);

  it('DELETEs with basic auth and the arguments as query parameters', async () => {
    const before = toolRequests.length;
    const call = await callWithCase('cancel');
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    const [cancel] = requestsSince(before, '/orders/cancel');
    expect(cancel?.method).toBe('DELETE');
    expect(cancel?.body).toBe('');
    expect(new URL(cancel?.path ?? '/', 'http://x').searchParams.get('order_id')).toBe('A-1001');
    expect(cancel?.headers.authorization).toBe(
      `Basic ${Buffer.from(`shop-user:${secrets.basicPassword}`).toString('base64')}`,
    );
    expect(agentSaid(call)).toEqual(['All done.', 'Goodbye!']);
    // A tool without response_variables leaves the call's variables as the request sent them.
    expect(call.variables).toEqual({ customer_name: 'Ann', tool_case: 'cancel' });
  }, 45_000);

  it('says the failed message when the tool fails, and tells the model the error and what was said', async () => {
    const call = await callWithCase('broken');
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    expect(timeline(call)).toEqual([
      '[tool_call]',
      '[tool_result]',
      'Sorry, I cannot reach our order system.',
      'I will call you back.',
      'Goodbye!',
    ]);
    const answers = fake.requests.flatMap((chat) =>
      ((chat.json as { messages?: Array<Record<string, unknown>> } | undefined)?.messages ?? []).filter(
        (message) => message.role === 'tool' && message.tool_call_id === 'call_broken_tool',
      ),
    );
    expect(JSON.parse(String(answers[0]?.content))).toEqual({
      error: 'the tool answered HTTP 500',
      callee_was_told: 'Sorry, I cannot reach our order system.',
    });
  }, 45_000);

  it("renders a warm transfer's whisper with the variables the tool's answer set", async () => {
    // A bridged call lasts until the two parties are done (~35 s on a quiet machine).
    const call = await callWithCase('handoff', '+15550100012', 80_000);
    expect(call).toMatchObject({ status: 'completed', endReason: 'transferred' });
    const notes = call.transcript.filter((entry) => entry.event === 'transfer').map((entry) => entry.text);
    expect(notes).toEqual(['human: briefed ("Order shipped, due Tuesday.") and bridged (200)']);
  }, 90_000);

  it('never logs a secret', () => {
    const logs = service.logs.text();
    expect(logs).toContain('tool called');
    for (const secret of Object.values(secrets)) expect(logs).not.toContain(secret);
  });
});
