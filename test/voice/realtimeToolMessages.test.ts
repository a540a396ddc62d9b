import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { setWebhookEndpoint } from '../../src/admin/webhooks.js';
import type { CallRecord } from '../../src/domain/records.js';
import type { FakeOpenAiServer } from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { sayExactly } from '../../src/voice/realtimeResponses.js';
import { attachFakeRealtime, type FakeRealtime, type RealtimeReply } from '../fakes/openAiRealtimeServer.js';
import { type startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';
import { startLlmTestService } from '../helpers/llmService.js';

/**
 * A tool's `messages` (start, delayed, failed) on a speech-to-speech agent, as the pipeline says
 * them: each is a response of the session asked for with instructions to say it word for word
 * (the fake of OpenAI Realtime records every response.create and its instructions), only while the
 * tool is pending, never over a response in progress; a failure's message is the reply to the
 * failed output, which tells the model the callee heard it.
 */

let fake: FakeOpenAiServer;
let toolServer: Server;
let service: Awaited<ReturnType<typeof startFullService>>;
let key: string;
let agentId: string;
let realtime: FakeRealtime;

beforeAll(async () => {
  toolServer = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const slow = request.url === '/slow';
      setTimeout(
        () => {
          response.writeHead(slow ? 200 : 500, { 'content-type': 'application/json' });
          response.end(JSON.stringify(slow ? { status: 'shipped' } : { error: 'database down' }));
        },
        slow ? 3_000 : 0,
      );
    });
  });
  await new Promise<void>((resolve) => toolServer.listen(0, '127.0.0.1', resolve));
  const toolBaseUrl = `http://127.0.0.1:${(toolServer.address() as AddressInfo).port}`;
  let accountId: string;
  ({ fake, service, key, accountId } = await startLlmTestService(
    {},
    { CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true' },
  ));
  realtime = attachFakeRealtime(fake.httpServer, { apiKey: 'sk-test', replies: [{ text: 'Hello.' }] });
  await setWebhookEndpoint(service.store, service.secretBox, accountId, `${toolBaseUrl}/events`, {
    allowPrivate: true,
  });
  const tool = (name: string, messages: Record<string, unknown>) => ({
    name: `lookup_${name}`,
    description: 'Looks up an order.',
    url: `${toolBaseUrl}/${name}`,
    timeout_ms: 8_000,
    messages,
  });
  agentId = (
    await createAgent(service.store, accountId, {
      name: 'Order desk, speech to speech',
      prompt: 'You help with an order.',
      brain: 'llm',
      settings: {
        realtime: { provider: 'openai' },
        tools: [
          tool('slow', { start: 'One moment please.', delayed_after_ms: 1_500, delayed: 'Still checking.' }),
          tool('fail', { start: 'One moment please.', failed: 'Sorry, our order system is down.' }),
        ],
      },
      maxDurationS: 40,
    })
  ).id;
  await addPhoneNumber(service.store, accountId, '+15550009998');
}, 60_000);

afterAll(async () => {
  await service?.dispose();
  realtime?.close();
  await fake?.close();
  toolServer?.close();
});

async function callWith(replies: RealtimeReply[]): Promise<CallRecord> {
  realtime.script.replies = replies;
  const result = await postCall(service.url, key, {
    agent_id: agentId,
    from_number: '+15550009998',
    to_number: '+15550100007',
  });
  expect(result.status, result.text).toBe(200);
  return waitForTerminal(service, (result.body as { call_id: string }).call_id, 40_000);
}

/** The agent's lines and the tool events, in transcript order. */
function timeline(call: CallRecord): string[] {
  return call.transcript
    .filter((entry) => entry.role === 'agent')
    .map((entry) => (entry.event ? `${entry.event}` : entry.text));
}

describe("a speech-to-speech agent's tool messages", () => {
  it('says start and delayed while the tool is pending, each as a response of its own', async () => {
    const call = await callWith([
      { text: 'Let me look that up.', toolCall: { name: 'lookup_slow', arguments: '{}' } },
      { text: 'One moment please.' },
      { text: 'Still checking.' },
      { text: 'Your order has shipped. Goodbye!', toolCall: { name: 'end_call', arguments: '{}' } },
    ]);
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    const connection = realtime.connections.at(-1);
    expect(connection?.responses.map((response) => response.instructions)).toEqual([
      null,
      sayExactly('One moment please.'),
      sayExactly('Still checking.'),
      null,
    ]);
    // A reply's line is written once it has been played, so the tool call's note comes first.
    expect(timeline(call)).toEqual([
      'tool_call',
      'Let me look that up.',
      'One moment please.',
      'Still checking.',
      'tool_result',
      'Your order has shipped. Goodbye!',
    ]);
  }, 45_000);

  it('says failed as the reply to a failure, tells the model so, and leaves start unsaid for a quick answer', async () => {
    const call = await callWith([
      { text: 'Let me look that up.', toolCall: { name: 'lookup_fail', arguments: '{}' } },
      { text: 'Sorry, our order system is down.', toolCall: { name: 'end_call', arguments: '{}' } },
    ]);
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    const connection = realtime.connections.at(-1);
    expect(connection?.responses.map((response) => response.instructions)).toEqual([
      null,
      sayExactly('Sorry, our order system is down.'),
    ]);
    expect(JSON.parse(connection?.toolOutputs[0]?.output ?? '{}')).toMatchObject({
      callee_was_told: 'Sorry, our order system is down.',
    });
    const lines = timeline(call);
    expect(lines).not.toContain('One moment please.');
    expect(lines.at(-1)).toBe('Sorry, our order system is down.');
    expect(lines.indexOf('tool_result')).toBeLessThan(lines.indexOf('Sorry, our order system is down.'));
  }, 45_000);
});
