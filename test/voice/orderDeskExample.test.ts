import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { setWebhookEndpoint } from '../../src/admin/webhooks.js';
import {
  type FakeChatDelta,
  type FakeOpenAiServer,
  fakeToolCallDelta,
  startFakeOpenAiServer,
} from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { testRunner } from '../helpers/agentTests.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { jsonApi, postCall } from '../helpers/http.js';

/**
 * The example order desk (examples/agents/order-desk.settings.json) with the example tool server
 * (examples/order-lookup-tool.mjs, run as its own process): the example verifies callwright's
 * signature with its own code and answers; the model (a fake of OpenAI's chat protocol) reads the
 * answer back to the callee.
 */

const root = resolve(import.meta.dirname, '../..');
let fake: FakeOpenAiServer;
let tool: ChildProcess | undefined;
let service: Awaited<ReturnType<typeof startFullService>>;

function startExampleTool(secret: string): Promise<string> {
  const child = spawn(process.execPath, [resolve(root, 'examples/order-lookup-tool.mjs')], {
    env: { ...process.env, CALLWRIGHT_WEBHOOK_SECRET: secret, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  tool = child;
  return new Promise((done, fail) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      const url = /http:\/\/\S+/.exec(chunk.toString())?.[0];
      if (url) done(url);
    });
    child.once('exit', (code) => fail(new Error(`the example tool exited (${code})`)));
  });
}

/**
 * The model: opens by looking up the order the callee "gave", then reads the answer out; on a call
 * whose context says the caller wants a person, it asks how it can help and, when the caller
 * presses 1, says so and transfers.
 */
function playModel({ messages }: { messages: Array<Record<string, unknown>> }): FakeChatDelta[] {
  const last = messages.at(-1);
  if (last?.role === 'tool') {
    const answer = JSON.parse(String(last.content)) as { found?: boolean; status?: string; error?: string };
    const words = answer.found ? `Your order is ${answer.status}.` : 'I could not find that order.';
    return [{ delta: { content: `${words} Goodbye!` } }, fakeToolCallDelta('end_call', '{}', 'call_end')];
  }
  if (String(messages[0]?.content).includes('wants a person')) {
    if (last?.role !== 'user') return [{ delta: { content: 'How can I help?' }, finishReason: 'stop' }];
    return [
      { delta: { content: 'Let me get you a person.' } },
      fakeToolCallDelta('transfer_call', '{"target":"human"}', 'call_transfer'),
    ];
  }
  return [fakeToolCallDelta('lookup_order', '{"order_id":"A-1001"}', 'call_lookup')];
}

beforeAll(async () => {
  fake = await startFakeOpenAiServer({ apiKey: 'sk-test', chatStreamFor: playModel, chatJsonContent: '{}' });
  service = await startFullService({
    CALLWRIGHT_OPENAI_BASE_URL: fake.baseUrl,
    CALLWRIGHT_OPENAI_API_KEY: 'sk-test',
    CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true',
  });
});

afterAll(async () => {
  tool?.kill();
  await service?.dispose();
  await fake?.close();
});

let key: string;
let agentId: string;

describe('the example order desk agent', () => {
  beforeAll(async () => {
    const account = await service.store.accounts.create({ name: 'orders' });
    key = (await createApiKey(service.store, account.id, 'orders')).key;
    const { secret } = await setWebhookEndpoint(
      service.store,
      service.secretBox,
      account.id,
      'http://127.0.0.1:9/events',
      { allowPrivate: true },
    );
    const toolUrl = await startExampleTool(secret);
    const settings = JSON.parse(
      readFileSync(resolve(root, 'examples/agents/order-desk.settings.json'), 'utf8'),
    );
    settings.tools[0].url = toolUrl;
    settings.llm.model = 'test-model';
    agentId = (
      await createAgent(service.store, account.id, {
        name: 'Order desk',
        prompt: 'You answer questions about orders.',
        brain: 'llm',
        settings,
        maxDurationS: 30,
      })
    ).id;
    await addPhoneNumber(service.store, account.id, '+15550009996');
  });

  it("looks an order up through the example tool server, which verifies callwright's signature", async () => {
    const result = await postCall(service.url, key, {
      agent_id: agentId,
      from_number: '+15550009996',
      to_number: '+15550100007',
    });
    const call = await waitForTerminal(service, (result.body as { call_id: string }).call_id, 40_000);
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    const result_ = call.transcript.find((entry) => entry.event === 'tool_result');
    expect(JSON.parse(result_?.text ?? '{}')).toMatchObject({ found: true, status: 'shipped' });
    const said = call.transcript
      .filter((entry) => entry.role === 'agent' && !entry.event)
      .map((entry) => entry.text);
    // The waiting line is said only for a tool not answered within 250 ms (issue 35): the example
    // server on loopback usually answers sooner, a loaded machine sometimes not.
    const asked = call.transcript.find((entry) => entry.event === 'tool_call');
    const answeredAfterMs = (result_?.start_ms ?? 0) - (asked?.start_ms ?? 0);
    expect(asked).toBeDefined();
    expect(said).toEqual([
      ...(answeredAfterMs >= 250 ? ["One moment, I'm looking that up."] : []),
      'Your order is shipped.',
      'Goodbye!',
    ]);
  }, 45_000);

  it('transfers the caller to a person on request', async () => {
    const result = await postCall(service.url, key, {
      agent_id: agentId,
      from_number: '+15550009996',
      to_number: '+15550100008',
      context: 'The caller wants a person.',
    });
    const call = await waitForTerminal(service, (result.body as { call_id: string }).call_id, 40_000);
    expect(call).toMatchObject({ status: 'completed', endReason: 'transferred' });
    expect(call.transcript.filter((entry) => entry.event === 'transfer').map((entry) => entry.text)).toEqual([
      'human: transferred (200)',
    ]);
  }, 45_000);

  it('passes scenarios that expect its tool call with its arguments and its transfer, and fails one that expects other arguments', async () => {
    const runToEnd = testRunner(
      jsonApi(
        () => service.url,
        () => key,
      ),
    );
    const lookup = {
      name: 'looks the order up',
      callee: { answers: 'human', after_last_turn: 'stay' },
      expect: {
        end_reason: 'agent_hangup',
        tool_calls: [{ name: 'lookup_order', arguments: { order_id: 'A-1001' } }],
        says: ['your order is shipped'],
      },
    };
    const report = await runToEnd(agentId, {
      from_number: '+15550009996',
      scenarios: [
        lookup,
        {
          name: 'asks for a person',
          call: { context: 'The caller wants a person.' },
          callee: { answers: 'human', turns: [{ dtmf: '1' }], after_last_turn: 'stay' },
          expect: { end_reason: 'transferred', transfer_to: 'human' },
        },
        {
          ...lookup,
          name: 'expects another order',
          expect: { tool_calls: [{ name: 'lookup_order', arguments: { order_id: 'B-2' } }] },
        },
      ],
    });
    expect(report.results.map((result) => [result.scenario, result.status, result.failures])).toEqual([
      ['looks the order up', 'passed', []],
      ['asks for a person', 'passed', []],
      [
        'expects another order',
        'failed',
        ['tool lookup_order was called with {"order_id":"A-1001"}, not {"order_id":"B-2"}'],
      ],
    ]);
  }, 60_000);
});
