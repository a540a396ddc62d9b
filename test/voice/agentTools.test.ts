import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { setWebhookEndpoint } from '../../src/admin/webhooks.js';
import type { CallRecord } from '../../src/domain/records.js';
import {
  type FakeChatDelta,
  type FakeOpenAiServer,
  fakeToolCallDelta,
} from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { attachFakeRealtime, type FakeRealtime } from '../fakes/openAiRealtimeServer.js';
import { type startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';
import { startLlmTestService } from '../helpers/llmService.js';

/**
 * An llm agent's own tools, end to end: the model (a fake of OpenAI's streamed chat protocol)
 * calls a tool mid-call, callwright POSTs it — signed like a webhook — to a real HTTP server
 * standing for the customer's, and the model's next request carries the answer (or the error it
 * must talk around). One agent with a tool per behaviour of the customer's server; each call's
 * variables tell the model which one to call.
 */

interface ToolRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  signatureValid: boolean;
}

let fake: FakeOpenAiServer;
let toolServer: Server;
let toolBaseUrl: string;
const toolRequests: ToolRequest[] = [];
let webhookSecret: string;
let service: Awaited<ReturnType<typeof startFullService>>;
let key: string;
let accountId: string;
let agentId: string;
let realtimeAgentId: string;
let realtime: FakeRealtime;

/** Standard Webhooks, computed here independently of src/webhooks: HMAC-SHA256 of `id.timestamp.body`. */
function signatureValid(headers: IncomingHttpHeaders, body: string): boolean {
  const id = String(headers['webhook-id']);
  const timestamp = String(headers['webhook-timestamp']);
  const key = Buffer.from(webhookSecret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  const fresh = Math.abs(Date.now() / 1000 - Number(timestamp)) < 300;
  return fresh && String(headers['webhook-signature']).split(' ').includes(`v1,${expected}`);
}

function startToolServer(): Promise<Server> {
  const server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      const body = Buffer.concat(parts).toString('utf8');
      const path = request.url ?? '';
      toolRequests.push({
        path,
        headers: request.headers,
        body,
        signatureValid: signatureValid(request.headers, body),
      });
      const answer = (status: number, text: string, delayMs = 0) =>
        setTimeout(() => {
          if (response.destroyed) return;
          response.writeHead(status, { 'content-type': 'application/json' });
          response.end(text);
        }, delayMs);
      if (path === '/ok') answer(200, JSON.stringify({ status: 'shipped', eta: 'tomorrow' }));
      // Slow enough that the waiting line and the filler are both heard first, on a loaded machine too
      // (the filler is said only while the tool is pending: at 1.8 s, a slow synthesis lost it).
      else if (path === '/slow') answer(200, JSON.stringify({ status: 'shipped', eta: 'monday' }), 3_000);
      else if (path === '/timeout' || path === '/stalls') answer(200, '{}', 5_000);
      else if (path === '/quick') answer(200, JSON.stringify({ status: 'shipped', eta: 'today' }), 40);
      else if (path === '/fail') answer(500, JSON.stringify({ error: 'database down' }));
      else answer(200, '<html>not json</html>');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/**
 * The model: asked to open, it calls the tool its case names; given the tool's answer, it says
 * what it learned (or that it could not) and hangs up.
 */
function playModel(request: { messages: Array<Record<string, unknown>> }): FakeChatDelta[] | undefined {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') {
    const answer = String(last.content);
    const words = answer.includes('"error"') ? 'Sorry, I could not look that up.' : 'Your order has shipped.';
    return [
      { delta: { role: 'assistant', content: `${words} Goodbye!` } },
      fakeToolCallDelta('end_call', '{}'),
    ];
  }
  const system = String(request.messages[0]?.content ?? '');
  const toolCase = /Case: (\w+)/.exec(system)?.[1] ?? 'ok';
  return [fakeToolCallDelta(`lookup_${toolCase}`, JSON.stringify({ order_id: 'A-1001' }))];
}

beforeAll(async () => {
  toolServer = await startToolServer();
  toolBaseUrl = `http://127.0.0.1:${(toolServer.address() as AddressInfo).port}`;
  ({ fake, service, key, accountId } = await startLlmTestService(
    { chatStreamFor: playModel },
    { CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true' },
  ));
  realtime = attachFakeRealtime(fake.httpServer, {
    apiKey: 'sk-test',
    replies: [
      { text: 'Let me look that up.', toolCall: { name: 'lookup_ok', arguments: '{"order_id":"A-1001"}' } },
      { text: 'Your order has shipped. Goodbye!', toolCall: { name: 'end_call', arguments: '{}' } },
    ],
  });
  webhookSecret = (
    await setWebhookEndpoint(service.store, service.secretBox, accountId, `${toolBaseUrl}/events`, {
      allowPrivate: true,
    })
  ).secret;
  const tool = (name: string, extra: Record<string, unknown> = {}) => ({
    name: `lookup_${name}`,
    description: 'Looks up an order: its status and delivery date.',
    parameters: {
      type: 'object',
      properties: { order_id: { type: 'string', pattern: '^[A-Z]-[0-9]{4}$' } },
      required: ['order_id'],
      additionalProperties: false,
    },
    url: `${toolBaseUrl}/${name}`,
    ...extra,
  });
  agentId = (
    await createAgent(service.store, accountId, {
      name: 'Order desk',
      prompt: 'You help {{customer_name}} with an order. Case: {{tool_case}}',
      variables: ['customer_name', 'tool_case'].map(parseVariableDeclaration),
      brain: 'llm',
      settings: {
        llm: { model: 'test-model' },
        tools: [
          tool('ok'),
          tool('slow', {
            say_while_waiting: 'One moment please.',
            filler: { after_ms: 600, text: 'Still checking.' },
          }),
          tool('timeout', { timeout_ms: 800 }),
          tool('quick', {
            say_while_waiting: 'One moment, I am looking that up.',
            filler: { after_ms: 300, text: 'Still checking.' },
          }),
          tool('stalls', {
            timeout_ms: 800,
            say_while_waiting: 'One moment please, while I look that up in our order system for you.',
            filler: { after_ms: 600, text: 'Still checking.' },
          }),
          tool('fail'),
          tool('badjson'),
        ],
      },
      maxDurationS: 40,
    })
  ).id;
  realtimeAgentId = (
    await createAgent(service.store, accountId, {
      name: 'Order desk, speech to speech',
      prompt: 'You help {{customer_name}} with an order.',
      variables: ['customer_name'].map(parseVariableDeclaration),
      brain: 'llm',
      settings: { realtime: { provider: 'openai' }, tools: [tool('ok')] },
      maxDurationS: 40,
    })
  ).id;
  await addPhoneNumber(service.store, accountId, '+15550009998');
});

afterAll(async () => {
  await service?.dispose();
  realtime?.close();
  await fake?.close();
  toolServer?.closeAllConnections();
  toolServer?.close();
});

async function callWithCase(toolCase: string): Promise<CallRecord> {
  const result = await postCall(service.url, key, {
    agent_id: agentId,
    from_number: '+15550009998',
    to_number: '+15550100007',
    variables: { customer_name: 'Ann', tool_case: toolCase },
  });
  expect(result.status).toBe(200);
  return waitForTerminal(service, (result.body as { call_id: string }).call_id, 40_000);
}

/** The model's request that carried the answer to `toolCallId`, and that answer. */
function toolAnswerSent(callId: string): string | undefined {
  for (const request of fake.requests) {
    const messages = (request.json as { messages?: Array<Record<string, unknown>> } | undefined)?.messages;
    const system = String(messages?.[0]?.content ?? '');
    const answer = messages?.find((message) => message.role === 'tool' && message.tool_call_id === callId);
    if (answer && system.includes(callId.replace('call_lookup_', 'Case: '))) return String(answer.content);
  }
  return undefined;
}

function events(call: CallRecord): Array<[string, string]> {
  return call.transcript.filter((entry) => entry.event).map((entry) => [entry.event as string, entry.text]);
}

describe("an llm agent's own tools", () => {
  it('calls the tool with a signed request, feeds the answer back to the model, and notes both in the transcript', async () => {
    const call = await callWithCase('ok');
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    const request = toolRequests.find((entry) => entry.path === '/ok');
    expect(request?.signatureValid).toBe(true);
    expect(request?.headers['webhook-id']).toMatch(/^tool_[0-9a-f]{24}$/);
    expect(JSON.parse(request?.body ?? '{}')).toEqual({
      call_id: call.id,
      tool: 'lookup_ok',
      arguments: { order_id: 'A-1001' },
      variables: { customer_name: 'Ann', tool_case: 'ok' },
    });
    expect(JSON.parse(toolAnswerSent('call_lookup_ok') ?? 'null')).toEqual({
      status: 'shipped',
      eta: 'tomorrow',
    });
    expect(events(call)).toEqual([
      ['tool_call', 'lookup_ok {"order_id":"A-1001"}'],
      ['tool_result', '{"status":"shipped","eta":"tomorrow"}'],
    ]);
    const said = call.transcript
      .filter((entry) => entry.role === 'agent' && !entry.event)
      .map((entry) => entry.text);
    expect(said).toEqual(['Your order has shipped.', 'Goodbye!']);
    // The request is timed: the result is noted after the call.
    const [callEntry, resultEntry] = call.transcript.filter((entry) => entry.event);
    expect(resultEntry?.start_ms).toBeGreaterThanOrEqual(callEntry?.start_ms ?? Number.POSITIVE_INFINITY);
  }, 45_000);

  it('says its waiting line at once and its filler when the answer is slow, then uses the answer', async () => {
    const call = await callWithCase('slow');
    const said = call.transcript
      .filter((entry) => entry.role === 'agent' && !entry.event)
      .map((entry) => entry.text);
    expect(said).toEqual(['One moment please.', 'Still checking.', 'Your order has shipped.', 'Goodbye!']);
    expect(JSON.parse(toolAnswerSent('call_lookup_slow') ?? 'null')).toEqual({
      status: 'shipped',
      eta: 'monday',
    });
    const filler = call.transcript.find((entry) => entry.text === 'Still checking.');
    const toolCall = call.transcript.find((entry) => entry.event === 'tool_call');
    // The filler starts about after_ms (600) after the call, not after the waiting line ended.
    expect((filler?.start_ms ?? 0) - (toolCall?.start_ms ?? 0)).toBeGreaterThanOrEqual(550);
  }, 45_000);

  it('says no waiting line for an answer that came at once (issue 35)', async () => {
    const call = await callWithCase('quick');
    const said = call.transcript
      .filter((entry) => entry.role === 'agent' && !entry.event)
      .map((entry) => entry.text);
    expect(said).toEqual(['Your order has shipped.', 'Goodbye!']);
  }, 45_000);

  it('says no filler once the tool has failed, even when it was due while the waiting line played (issue 35)', async () => {
    const call = await callWithCase('stalls');
    const said = call.transcript
      .filter((entry) => entry.role === 'agent' && !entry.event)
      .map((entry) => entry.text);
    expect(said).toEqual([
      'One moment please, while I look that up in our order system for you.',
      'Sorry, I could not look that up.',
      'Goodbye!',
    ]);
  }, 45_000);

  it.each([
    ['timeout', /timed out|deadline|800 ?ms/i],
    ['fail', /HTTP 500/],
    ['badjson', /not JSON/],
  ])(
    'turns a %s into a tool error the model talks around',
    async (toolCase, why) => {
      const call = await callWithCase(toolCase);
      expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
      const answer = JSON.parse(toolAnswerSent(`call_lookup_${toolCase}`) ?? 'null') as { error: string };
      expect(answer.error).toMatch(why);
      const result = call.transcript.find((entry) => entry.event === 'tool_result');
      expect(result?.text).toMatch(/^error: /);
      const said = call.transcript
        .filter((entry) => entry.role === 'agent' && !entry.event)
        .map((entry) => entry.text);
      expect(said).toEqual(['Sorry, I could not look that up.', 'Goodbye!']);
    },
    45_000,
  );

  it('offers the model its tools next to the built-in ones, with their schemas', () => {
    const opening = fake.requests.find((request) => request.path.endsWith('/chat/completions'))?.json as {
      tools: Array<{ function: { name: string; parameters: Record<string, unknown> } }>;
    };
    const names = opening.tools.map((tool) => tool.function.name).sort();
    expect(names).toEqual(
      [
        'add_to_do_not_call',
        'end_call',
        'leave_voicemail',
        'lookup_badjson',
        'lookup_fail',
        'lookup_ok',
        'lookup_quick',
        'lookup_slow',
        'lookup_stalls',
        'lookup_timeout',
        'schedule_callback',
        'send_dtmf',
      ].sort(),
    );
    const ok = opening.tools.find((tool) => tool.function.name === 'lookup_ok');
    expect(ok?.function.parameters).toMatchObject({ required: ['order_id'] });
  });

  it('are offered to a speech-to-speech session too, whose function call is answered with function_call_output', async () => {
    const before = toolRequests.length;
    const result = await postCall(service.url, key, {
      agent_id: realtimeAgentId,
      from_number: '+15550009998',
      to_number: '+15550100007',
      variables: { customer_name: 'Bo' },
    });
    const call = await waitForTerminal(service, (result.body as { call_id: string }).call_id, 40_000);
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    const connection = realtime.connections.at(-1);
    const offered = (connection?.session?.tools ?? []) as Array<{ name?: string; parameters?: unknown }>;
    expect(offered.map((tool) => tool.name).sort()).toEqual([
      'add_to_do_not_call',
      'end_call',
      'leave_voicemail',
      'lookup_ok',
    ]);
    const request = toolRequests.slice(before).find((entry) => entry.path === '/ok');
    expect(request?.signatureValid).toBe(true);
    expect(JSON.parse(request?.body ?? '{}')).toMatchObject({
      call_id: call.id,
      tool: 'lookup_ok',
      arguments: { order_id: 'A-1001' },
      variables: { customer_name: 'Bo' },
    });
    expect(connection?.toolOutputs.map((output) => JSON.parse(output.output))).toEqual([
      { status: 'shipped', eta: 'tomorrow' },
    ]);
    expect(events(call)).toEqual([
      ['tool_call', 'lookup_ok {"order_id":"A-1001"}'],
      ['tool_result', '{"status":"shipped","eta":"tomorrow"}'],
    ]);
    expect(call.transcript.some((entry) => entry.text === 'Your order has shipped. Goodbye!')).toBe(true);
  }, 45_000);
});
