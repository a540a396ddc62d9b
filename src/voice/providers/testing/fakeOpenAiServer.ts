import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake OpenAI-compatible server for tests: real HTTP on 127.0.0.1 speaking the real wire
 * protocol (JSON bodies, multipart uploads, raw audio bytes, server-sent events), answering from
 * a script the test sets. It stands for an outside provider; it is not a mock of our code.
 */

export interface RecordedRequest {
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  json?: unknown;
  formFields?: Record<string, string>;
  uploadedFile?: { name: string; type: string; bytes: Uint8Array };
}

export interface FakeChatDelta {
  delta: Record<string, unknown>;
  finishReason?: string;
}

/** A streamed chunk in which the model calls one tool (finish_reason `tool_calls`). */
export function fakeToolCallDelta(name: string, argumentsJson = '{}', id = `call_${name}`): FakeChatDelta {
  return {
    delta: { tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: argumentsJson } }] },
    finishReason: 'tool_calls',
  };
}

export interface FakeOpenAiScript {
  /** Required bearer token; requests without it get 401. */
  apiKey?: string;
  /** Raw 16-bit mono PCM the speech endpoint returns (as pcm bytes, or wrapped in a WAV). */
  speechSamples: Int16Array;
  speechSampleRateHz: number;
  transcriptionText: string;
  /** Each entry becomes one SSE chunk's `choices[0].delta` (with finish_reason when given). */
  chatStreamDeltas: FakeChatDelta[];
  /**
   * Plays the model per request: given the request's JSON (its `messages`, `tools`), the deltas
   * to stream, or undefined for `chatStreamDeltas` (e.g. answer a `tool` message with its result).
   */
  chatStreamFor?: (request: {
    messages: Array<Record<string, unknown>>;
    tools?: unknown[];
  }) => FakeChatDelta[] | undefined;
  /** The `message.content` of a non-streamed completion. */
  chatJsonContent: string;
  /** Per request: the `message.content` of a non-streamed completion, or undefined for `chatJsonContent`. */
  chatJsonFor?: (request: {
    messages: Array<Record<string, unknown>>;
    response_format?: { json_schema?: { name?: string } };
  }) => string | undefined;
  /** Answer the next request with this instead. */
  nextFailure?: { status: number; body: string };
  /** Wait this long before answering (to trigger client timeouts). */
  responseDelayMs?: number;
  /** Split every written body into pieces this large (odd sizes cut samples and lines in two). */
  writePieceBytes: number;
  /** Pace a streamed completion: one chunk per this many ms (a model's token rate). */
  chatDeltaIntervalMs?: number;
  /**
   * A model that stalls: the next `times` streamed completions (default all) send their headers and
   * the first `afterChunks` chunks, then nothing more with the connection left open (0: the model
   * never produces a first token). With `answering`, only completions whose last user message is
   * that text stall: a reply begun ahead on the callee's partial words (and dropped when the last
   * word comes) neither stalls nor uses up `times`.
   */
  chatStreamStall?: { afterChunks: number; times?: number; answering?: string };
}

export interface FakeOpenAiServer {
  /** e.g. http://127.0.0.1:43123/v1 */
  baseUrl: string;
  script: FakeOpenAiScript;
  requests: RecordedRequest[];
  /** The HTTP server, for fakes of other OpenAI protocols on the same address (Realtime's upgrades). */
  httpServer: Server;
  close(): Promise<void>;
}

function encodeWavBytes(samples: Int16Array, sampleRateHz: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  // Streamed WAVs from real servers often carry unknown sizes; do the same.
  header.writeUInt32LE(0xffffffff, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(sampleRateHz, 24);
  header.writeUInt32LE(sampleRateHz * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(0xffffffff, 40);
  return Buffer.concat([header, Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength)]);
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

async function writeInPieces(response: ServerResponse, body: Buffer, pieceBytes: number): Promise<void> {
  for (let offset = 0; offset < body.length; offset += pieceBytes) {
    response.write(body.subarray(offset, offset + pieceBytes));
    // Let each piece leave as its own TCP segment.
    await new Promise((resolve) => setImmediate(resolve));
  }
  response.end();
}

export async function startFakeOpenAiServer(
  initialScript: Partial<FakeOpenAiScript> = {},
): Promise<FakeOpenAiServer> {
  const script: FakeOpenAiScript = {
    speechSamples: new Int16Array(0),
    speechSampleRateHz: 24_000,
    transcriptionText: '',
    chatStreamDeltas: [],
    chatJsonContent: '{}',
    writePieceBytes: 333,
    ...initialScript,
  };
  const requests: RecordedRequest[] = [];

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readBody(request);
    const contentType = request.headers['content-type'];
    const recorded: RecordedRequest = {
      path: request.url ?? '',
      authorization: request.headers.authorization,
      contentType,
    };
    if (contentType?.startsWith('application/json')) recorded.json = JSON.parse(body.toString('utf8'));
    if (contentType?.startsWith('multipart/form-data')) {
      const form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
      recorded.formFields = {};
      for (const [name, value] of form.entries()) {
        if (typeof value === 'string') recorded.formFields[name] = value;
        else
          recorded.uploadedFile = {
            name: value.name,
            type: value.type,
            bytes: new Uint8Array(await value.arrayBuffer()),
          };
      }
    }
    requests.push(recorded);
    // The failure is this request's, taken as it arrives: a slow request of an earlier test that
    // wakes up later must not take the failure a later test set for its own.
    const authorized = script.apiKey === undefined || recorded.authorization === `Bearer ${script.apiKey}`;
    const failure = authorized ? script.nextFailure : undefined;
    if (authorized) script.nextFailure = undefined;

    if (script.responseDelayMs) await new Promise((resolve) => setTimeout(resolve, script.responseDelayMs));
    if (!authorized) {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } }),
      );
      return;
    }
    if (failure) {
      response.writeHead(failure.status, { 'content-type': 'application/json' });
      response.end(failure.body);
      return;
    }

    const json = (recorded.json ?? {}) as Record<string, unknown>;
    switch (recorded.path) {
      case '/v1/models':
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            object: 'list',
            data: [{ id: 'gpt-4o-mini', object: 'model', created: 1721172741, owned_by: 'system' }],
          }),
        );
        return;
      case '/v1/audio/speech': {
        const isWav = json.response_format === 'wav';
        const audio = isWav
          ? encodeWavBytes(script.speechSamples, script.speechSampleRateHz)
          : Buffer.from(
              script.speechSamples.buffer,
              script.speechSamples.byteOffset,
              script.speechSamples.byteLength,
            );
        response.writeHead(200, { 'content-type': isWav ? 'audio/wav' : 'audio/pcm' });
        await writeInPieces(response, audio, script.writePieceBytes);
        return;
      }
      case '/v1/audio/transcriptions':
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ text: script.transcriptionText }));
        return;
      case '/v1/chat/completions': {
        const deltas =
          (json.stream === true
            ? script.chatStreamFor?.(json as { messages: Array<Record<string, unknown>> })
            : undefined) ?? script.chatStreamDeltas;
        // Token counts as servers report them: about 4 characters a token for the prompt.
        const usage = {
          prompt_tokens: Math.ceil(JSON.stringify(json.messages ?? []).length / 4),
          completion_tokens:
            json.stream === true ? deltas.length : Math.ceil(script.chatJsonContent.length / 4),
        };
        if (json.stream === true) {
          const wantsUsage = (json.stream_options as { include_usage?: boolean } | undefined)?.include_usage;
          const steps = deltas.map((step, index) => {
            const chunk = {
              id: 'chatcmpl-fake',
              object: 'chat.completion.chunk',
              created: 0,
              model: json.model,
              choices: [{ index: 0, delta: step.delta, finish_reason: step.finishReason ?? null }],
            };
            // Vary the line endings the way different servers do.
            return index % 2 === 0
              ? `data: ${JSON.stringify(chunk)}\n\n`
              : `: keep-alive\r\ndata:${JSON.stringify(chunk)}\r\n\r\n`;
          });
          // With stream_options.include_usage, one more chunk with no choices carries the counts.
          const events = wantsUsage
            ? [
                ...steps,
                `data: ${JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 0, model: json.model, choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } })}\n\n`,
              ]
            : steps;
          response.writeHead(200, { 'content-type': 'text/event-stream' });
          const stall = script.chatStreamStall;
          const lastUserText = (json.messages as Array<{ role?: unknown; content?: unknown }> | undefined)
            ?.filter((message) => message.role === 'user')
            .at(-1)?.content;
          if (
            stall &&
            (stall.times === undefined || stall.times > 0) &&
            (stall.answering === undefined || lastUserText === stall.answering)
          ) {
            if (stall.times !== undefined) stall.times--;
            for (const event of events.slice(0, stall.afterChunks)) response.write(event);
            // Nothing more, until the client gives up (the connection stays open meanwhile).
            await new Promise((resolve) => response.once('close', resolve));
            return;
          }
          if (script.chatDeltaIntervalMs !== undefined) {
            for (const [index, event] of events.entries()) {
              if (index > 0) await new Promise((resolve) => setTimeout(resolve, script.chatDeltaIntervalMs));
              if (response.destroyed) return;
              response.write(event);
            }
            response.end('data: [DONE]\n\n');
            return;
          }
          await writeInPieces(
            response,
            Buffer.from(`${events.join('')}data: [DONE]\n\n`),
            script.writePieceBytes,
          );
          return;
        }
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            id: 'chatcmpl-fake',
            object: 'chat.completion',
            choices: [
              {
                index: 0,
                message: {
                  role: 'assistant',
                  content:
                    script.chatJsonFor?.(
                      json as Parameters<NonNullable<FakeOpenAiScript['chatJsonFor']>>[0],
                    ) ?? script.chatJsonContent,
                },
                finish_reason: 'stop',
              },
            ],
            usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
          }),
        );
        return;
      }
      default:
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: `no route ${recorded.path}` } }));
    }
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'text/plain' });
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    script,
    requests,
    httpServer: server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
