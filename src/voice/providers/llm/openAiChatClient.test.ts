import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../testing/fakeOpenAiServer.js';
import { type ChatStreamEvent, OpenAiChatClient } from './openAiChatClient.js';
import { readServerSentEventData } from './serverSentEvents.js';

const apiKey = 'sk-chat';
let server: FakeOpenAiServer;
let client: OpenAiChatClient;

beforeAll(async () => {
  server = await startFakeOpenAiServer({ apiKey });
  client = new OpenAiChatClient({ endpoint: { baseUrl: server.baseUrl, apiKey }, model: 'gpt-4o-mini' });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.requests.length = 0;
});

async function collect(events: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const collected: ChatStreamEvent[] = [];
  for await (const event of events) collected.push(event);
  return collected;
}

describe('OpenAiChatClient.streamChat', () => {
  it('streams text deltas in order, then the finish reason', async () => {
    server.script.writePieceBytes = 7;
    server.script.chatStreamDeltas = [
      { delta: { role: 'assistant', content: '' } },
      { delta: { content: 'Hello, ' } },
      { delta: { content: 'this is the clinic — ' } },
      { delta: { content: 'can you come Tuesday?' } },
      { delta: {}, finishReason: 'stop' },
    ];
    const events = await collect(
      client.streamChat({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
        ],
      }),
    );
    expect(events).toEqual([
      { type: 'text', delta: 'Hello, ' },
      { type: 'text', delta: 'this is the clinic — ' },
      { type: 'text', delta: 'can you come Tuesday?' },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(server.requests[0]).toMatchObject({
      path: '/v1/chat/completions',
      authorization: `Bearer ${apiKey}`,
      json: {
        model: 'gpt-4o-mini',
        stream: true,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
        ],
      },
    });
  });

  it('assembles tool calls from fragments and emits each once complete', async () => {
    server.script.writePieceBytes = 50;
    server.script.chatStreamDeltas = [
      { delta: { content: 'One moment.' } },
      {
        delta: {
          tool_calls: [
            { index: 0, id: 'call_a', type: 'function', function: { name: 'book_slot', arguments: '' } },
          ],
        },
      },
      { delta: { tool_calls: [{ index: 0, function: { arguments: '{"day":"tues' } }] } },
      { delta: { tool_calls: [{ index: 0, function: { arguments: 'day","hour":10}' } }] } },
      {
        delta: { tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'hang_up' } }] },
      },
      { delta: { tool_calls: [{ index: 1, function: { arguments: '{}' } }] }, finishReason: 'tool_calls' },
    ];
    const tools = [
      {
        name: 'book_slot',
        description: 'Books an appointment',
        parameters: { type: 'object', properties: { day: { type: 'string' }, hour: { type: 'integer' } } },
      },
      { name: 'hang_up', parameters: { type: 'object', properties: {} } },
    ];
    const events = await collect(
      client.streamChat({
        messages: [
          { role: 'user', content: 'Tuesday at ten' },
          {
            role: 'assistant',
            content: null,
            toolCalls: [{ id: 'call_0', name: 'check_calendar', argumentsJson: '{}' }],
          },
          { role: 'tool', toolCallId: 'call_0', content: '{"free":["tuesday 10"]}' },
        ],
        tools,
      }),
    );
    expect(events).toEqual([
      { type: 'text', delta: 'One moment.' },
      {
        type: 'tool_call',
        id: 'call_a',
        name: 'book_slot',
        arguments: { day: 'tuesday', hour: 10 },
        argumentsJson: '{"day":"tuesday","hour":10}',
      },
      { type: 'tool_call', id: 'call_b', name: 'hang_up', arguments: {}, argumentsJson: '{}' },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    const sent = server.requests[0]?.json as Record<string, unknown>;
    expect(sent.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'book_slot',
          description: 'Books an appointment',
          parameters: tools[0]?.parameters,
        },
      },
      { type: 'function', function: { name: 'hang_up', parameters: { type: 'object', properties: {} } } },
    ]);
    expect(sent.messages).toEqual([
      { role: 'user', content: 'Tuesday at ten' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_0', type: 'function', function: { name: 'check_calendar', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_0', content: '{"free":["tuesday 10"]}' },
    ]);
  });

  it('fails with the status and code on an HTTP error', async () => {
    server.script.nextFailure = {
      status: 429,
      body: '{"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}}',
    };
    await expect(
      collect(client.streamChat({ messages: [{ role: 'user', content: 'Hi' }] })),
    ).rejects.toMatchObject({
      providerStatus: 429,
      message: 'openai-chat: HTTP 429 rate_limit_exceeded',
    });
  });

  it('times out when the server does not answer', async () => {
    const slowClient = new OpenAiChatClient({
      endpoint: { baseUrl: server.baseUrl, apiKey, timeoutMs: 80 },
      model: 'gpt-4o-mini',
    });
    server.script.responseDelayMs = 400;
    try {
      await expect(
        collect(slowClient.streamChat({ messages: [{ role: 'user', content: 'Hi' }] })),
      ).rejects.toThrow('openai-chat: no response within 80 ms');
    } finally {
      server.script.responseDelayMs = 0;
    }
  });
});

describe('OpenAiChatClient.completeJson', () => {
  it('asks for the schema and parses the answer', async () => {
    server.script.chatJsonContent = '{"outcome":"booked","day":"tuesday"}';
    const schema = {
      type: 'object',
      properties: { outcome: { type: 'string' }, day: { type: 'string' } },
      required: ['outcome', 'day'],
      additionalProperties: false,
    };
    const answer = await client.completeJson({
      messages: [{ role: 'user', content: 'Summarize the call' }],
      schema: { name: 'call_outcome', schema },
    });
    expect(answer).toEqual({ outcome: 'booked', day: 'tuesday' });
    expect(server.requests[0]?.json).toMatchObject({
      response_format: { type: 'json_schema', json_schema: { name: 'call_outcome', schema, strict: true } },
    });
    expect(server.requests[0]?.json).not.toHaveProperty('stream');
  });

  it('fails clearly when the content is not JSON', async () => {
    server.script.chatJsonContent = 'Sure! Here is the JSON';
    await expect(
      client.completeJson({ messages: [{ role: 'user', content: 'x' }], schema: { name: 's', schema: {} } }),
    ).rejects.toThrow(/^openai-chat: answer is not JSON$/);
  });
});

describe('readServerSentEventData', () => {
  async function* pieces(...texts: string[]): AsyncIterable<Uint8Array> {
    for (const text of texts) yield new TextEncoder().encode(text);
  }

  async function read(...texts: string[]): Promise<string[]> {
    const data: string[] = [];
    for await (const item of readServerSentEventData(pieces(...texts))) data.push(item);
    return data;
  }

  it('joins multi-line data, skips comments and other fields, and handles every line ending', async () => {
    expect(await read(': hi\nevent: x\nid: 1\ndata: a\ndata: b\n\n', 'data:c\r\n\r\ndata: d\r\r')).toEqual([
      'a\nb',
      'c',
      'd',
    ]);
  });

  it('handles lines, CRLFs and multi-byte characters cut across pieces', async () => {
    const text = 'data: café ☕\r\n\r\ndata: two\n\n';
    const bytes = new TextEncoder().encode(text);
    const data: string[] = [];
    async function* byteByByte(): AsyncIterable<Uint8Array> {
      for (const byte of bytes) yield Uint8Array.of(byte);
    }
    for await (const item of readServerSentEventData(byteByByte())) data.push(item);
    expect(data).toEqual(['café ☕', 'two']);
  });

  it('delivers a last event that lacks its blank line', async () => {
    expect(await read('data: one\n\ndata: last')).toEqual(['one', 'last']);
  });
});
