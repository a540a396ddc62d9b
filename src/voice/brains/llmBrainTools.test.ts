import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentTool } from '../../domain/agentTools.js';
import { createLogger } from '../../logger.js';
import { ToolCaller } from '../../tools/toolCaller.js';
import { generateWebhookSecret } from '../../webhooks/signing.js';
import { OpenAiChatClient } from '../providers/index.js';
import {
  type FakeOpenAiServer,
  fakeToolCallDelta,
  startFakeOpenAiServer,
} from '../providers/testing/fakeOpenAiServer.js';
import { LlmBrain } from './llmBrain.js';

/**
 * The model calls two tools at once and the callee speaks while the first one runs: the reply is
 * dropped, and the model's next request still answers both calls (OpenAI refuses a history with
 * an unanswered tool_call). Against the fake of OpenAI's chat protocol and a real HTTP tool server.
 */

let fake: FakeOpenAiServer;
let toolServer: Server;
let toolUrl: string;

beforeAll(async () => {
  toolServer = createServer((request, response) => {
    request.resume();
    setTimeout(() => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"ok":true}');
    }, 1_000);
  });
  await new Promise<void>((resolve) => toolServer.listen(0, '127.0.0.1', resolve));
  toolUrl = `http://127.0.0.1:${(toolServer.address() as AddressInfo).port}/tool`;
  fake = await startFakeOpenAiServer({
    apiKey: 'sk-t',
    chatStreamFor: ({ messages }) =>
      String(messages[0]?.content) === 'ends'
        ? [fakeToolCallDelta('end_call', '{"reason":"the callee asked to be called later"}')]
        : messages.at(-1)?.role === 'user'
          ? [{ delta: { content: 'Sure.' }, finishReason: 'stop' }]
          : [
              {
                delta: {
                  tool_calls: [
                    {
                      index: 0,
                      id: 'call_a',
                      type: 'function',
                      function: { name: 'slow_a', arguments: '{}' },
                    },
                    {
                      index: 1,
                      id: 'call_b',
                      type: 'function',
                      function: { name: 'slow_b', arguments: '{}' },
                    },
                  ],
                },
                finishReason: 'tool_calls',
              },
            ],
  });
});

afterAll(async () => {
  await fake.close();
  toolServer.closeAllConnections();
  toolServer.close();
});

const tool = (name: string): AgentTool => ({
  name,
  description: 'd',
  parameters: { type: 'object', properties: {} },
  url: toolUrl,
  timeoutMs: 5_000,
  sayWhileWaiting: null,
  filler: null,
  failedMessage: null,
  method: 'POST',
  query: {},
  headers: [],
  auth: null,
  responseVariables: [],
});

describe('the llm brain with its own tools', () => {
  it('answers every tool call in the history when the callee cuts the reply during the first', async () => {
    const logger = createLogger('silent');
    const tools = [tool('slow_a'), tool('slow_b')];
    const brain = new LlmBrain(
      new OpenAiChatClient({ endpoint: { baseUrl: fake.baseUrl, apiKey: 'sk-t' }, model: 'm' }),
      {
        systemPrompt: 'p',
        firstMessage: null,
        extraction: [],
        logger,
        tools: new ToolCaller({
          callId: 'call_1',
          variables: {},
          tools,
          signingSecrets: [generateWebhookSecret()],
          allowPrivate: true,
          logger,
        }),
      },
    );
    const opening = new AbortController();
    for await (const action of brain.start(opening.signal)) {
      if (action.type === 'note' && action.event === 'tool_call') {
        // The callee speaks: the pipeline aborts the reply and stops reading it.
        opening.abort();
        break;
      }
    }
    const next = new AbortController();
    const said: string[] = [];
    for await (const action of brain.onCalleeTurn({ text: 'hello?' }, next.signal))
      if (action.type === 'say') said.push(action.text);
    expect(said).toEqual(['Sure.']);
    const last = fake.requests.at(-1)?.json as { messages: Array<{ role: string; tool_call_id?: string }> };
    expect(last.messages.map((message) => message.role)).toEqual([
      'system',
      'assistant',
      'tool',
      'tool',
      'user',
    ]);
    expect(
      last.messages.filter((message) => message.role === 'tool').map((message) => message.tool_call_id),
    ).toEqual(['call_a', 'call_b']);
  });
});

describe('the built-in end_call', () => {
  it("puts the model's reason in the transcript before the hang-up", async () => {
    const brain = new LlmBrain(
      new OpenAiChatClient({ endpoint: { baseUrl: fake.baseUrl, apiKey: 'sk-t' }, model: 'm' }),
      { systemPrompt: 'ends', firstMessage: null, extraction: [], logger: createLogger('silent') },
    );
    const actions = [];
    for await (const action of brain.start(new AbortController().signal)) actions.push(action);
    expect(actions).toEqual([
      { type: 'note', event: 'end_call', text: 'the callee asked to be called later' },
      { type: 'end_call' },
    ]);
  });
});
