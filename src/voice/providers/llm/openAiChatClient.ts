import { vendorErrorCode } from '../../../domain/secretScrubbing.js';
import type { UsageMeter } from '../../../domain/usage.js';
import type { VendorOptions } from '../../../domain/vendorOptions.js';
import type { Logger } from '../../../logger.js';
import {
  type OpenAiCompatibleEndpoint,
  postJsonToProvider,
  postToProvider,
  readBodyPieces,
} from '../http/openAiHttp.js';
import { ProviderError } from '../providerError.js';
import { readServerSentEventData } from './serverSentEvents.js';

/** A tool call as the model made it; `argumentsJson` is the model's text, unparsed. */
export interface ToolCall {
  id: string;
  name: string;
  argumentsJson: string;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

export type ChatStreamEvent =
  | { type: 'text'; delta: string }
  /** Emitted once the call is complete; `arguments` is the parsed JSON (or the raw text if invalid). */
  | { type: 'tool_call'; id: string; name: string; arguments: unknown; argumentsJson: string }
  /** The last event: why the model stopped (`stop`, `length`, `tool_calls`, …) when it said. */
  | { type: 'finish'; reason: string | null };

export interface StreamChatRequest {
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  temperature?: number;
  maxTokens?: number;
  signal?: AbortSignal;
}

export interface JsonSchemaFormat {
  /** Name the server shows for the schema, e.g. `call_outcome`. */
  name: string;
  schema: Record<string, unknown>;
}

export interface CompleteJsonRequest {
  messages: ChatMessage[];
  schema: JsonSchemaFormat;
  /** OpenAI's strict structured outputs (default true); false for a schema outside strict mode's subset. */
  strict?: boolean;
  temperature?: number;
  signal?: AbortSignal;
}

export interface OpenAiChatClientOptions {
  endpoint: OpenAiCompatibleEndpoint;
  model: string;
  logger?: Logger;
  /** Counts the tokens the server reports, for the call's usage and cost. */
  usage?: UsageMeter;
  /**
   * The agent's options (`temperature`, `top_p`, `max_tokens`, `seed`…), sent as fields of the
   * conversation's requests (`streamChat`); the structured answers of `completeJson` keep the
   * server's defaults.
   */
  vendorOptions?: VendorOptions;
  /**
   * A streamed answer's first piece must arrive within this of the request (the callee is waiting
   * for the reply); none: only the endpoint's own timeout.
   */
  firstTokenTimeoutMs?: number;
  /** Once streaming, the server may not go quiet for longer than this between pieces. */
  chunkGapTimeoutMs?: number;
}

/** The token counts a server reports (`usage`, on the last chunk of a stream). */
interface ReportedUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
}

const providerName = 'openai-chat';

function toWireMessage(message: ChatMessage): Record<string, unknown> {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        ...(message.toolCalls && message.toolCalls.length > 0
          ? {
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: 'function',
                function: { name: call.name, arguments: call.argumentsJson },
              })),
            }
          : {}),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

function toWireTool(tool: ToolDefinition): Record<string, unknown> {
  return {
    type: 'function',
    function: {
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      parameters: tool.parameters,
    },
  };
}

function parseJsonOrKeepText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

// The streamed chunk, as far as we read it.
interface ChunkToolCallFragment {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}
interface StreamChunk {
  choices?: Array<{
    delta?: { content?: string | null; tool_calls?: ChunkToolCallFragment[] };
    finish_reason?: string | null;
  }>;
  error?: { message?: string };
  usage?: ReportedUsage | null;
}

/** Chat completions from an OpenAI-compatible server: streamed with tool calls, or as JSON. */
export class OpenAiChatClient {
  readonly #endpoint: OpenAiCompatibleEndpoint;
  readonly #model: string;
  readonly #logger: Logger | undefined;
  readonly #usage: UsageMeter | undefined;
  readonly #vendorOptions: VendorOptions;
  readonly #firstTokenTimeoutMs: number | undefined;
  readonly #chunkGapTimeoutMs: number | undefined;

  constructor(options: OpenAiChatClientOptions) {
    this.#vendorOptions = options.vendorOptions ?? {};
    this.#endpoint = options.endpoint;
    this.#model = options.model;
    this.#logger = options.logger;
    this.#usage = options.usage;
    this.#firstTokenTimeoutMs = options.firstTokenTimeoutMs;
    this.#chunkGapTimeoutMs = options.chunkGapTimeoutMs;
  }

  #noteUsage(reported: ReportedUsage | null | undefined): void {
    if (!reported) return;
    this.#usage?.add('llm', 'openai', this.#model, 'input_tokens', reported.prompt_tokens ?? 0);
    this.#usage?.add('llm', 'openai', this.#model, 'output_tokens', reported.completion_tokens ?? 0);
  }

  /**
   * Streams the answer: text deltas as they arrive; each tool call once all its fragments have
   * arrived (when the next call starts or the stream ends); then one `finish` event. The server's
   * first piece must come within `firstTokenTimeoutMs` and no later piece more than
   * `chunkGapTimeoutMs` after the one before — counting only the time spent waiting for the server,
   * not the time the caller takes with what it was given (speaking a sentence): a stall is a
   * ProviderError of kind `timeout` (nothing came) or `stall` (it stopped).
   */
  async *streamChat(request: StreamChatRequest): AsyncIterable<ChatStreamEvent> {
    if (this.#firstTokenTimeoutMs === undefined && this.#chunkGapTimeoutMs === undefined) {
      yield* this.#streamChat(request);
      return;
    }
    const attempt = new AbortController();
    const signal = request.signal ? AbortSignal.any([request.signal, attempt.signal]) : attempt.signal;
    let late: ProviderError | null = null;
    let timer: NodeJS.Timeout | undefined;
    let started = false;
    /** Arms the clock for the wait that begins now: the first piece, or the next one. */
    const arm = () => {
      clearTimeout(timer);
      const limitMs = started ? this.#chunkGapTimeoutMs : this.#firstTokenTimeoutMs;
      if (limitMs === undefined) return;
      timer = setTimeout(() => {
        late = started
          ? new ProviderError(providerName, `the stream went quiet for ${limitMs} ms`, { kind: 'stall' })
          : new ProviderError(providerName, `no first token within ${limitMs} ms`, { kind: 'timeout' });
        attempt.abort(late);
      }, limitMs);
    };
    const iterator = this.#streamChat({ ...request, signal }, () => {
      // A piece of the body came while the caller waits: the wait for the next one starts.
      started = true;
      arm();
    })[Symbol.asyncIterator]();
    let over = false;
    try {
      for (;;) {
        arm();
        let next: IteratorResult<ChatStreamEvent>;
        try {
          next = await iterator.next();
        } catch (error) {
          over = true;
          throw late ?? error;
        } finally {
          // The caller's time with an event (speaking a sentence) is not the server's.
          clearTimeout(timer);
        }
        if (next.done) {
          over = true;
          return;
        }
        yield next.value;
      }
    } finally {
      clearTimeout(timer);
      if (!over) {
        attempt.abort();
        void iterator.return?.()?.catch(() => undefined);
      }
    }
  }

  async *#streamChat(request: StreamChatRequest, onPiece?: () => void): AsyncIterable<ChatStreamEvent> {
    const body: Record<string, unknown> = {
      ...this.#vendorOptions,
      model: this.#model,
      messages: request.messages.map(toWireMessage),
      stream: true,
      // The token counts come on a last chunk of their own (OpenAI, Azure, Groq, vLLM, Ollama…).
      stream_options: { include_usage: true },
    };
    if (request.tools && request.tools.length > 0) body.tools = request.tools.map(toWireTool);
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
    const providerResponse = await postToProvider({
      providerName,
      endpoint: this.#endpoint,
      path: '/chat/completions',
      body: JSON.stringify(body),
      signal: request.signal,
    });

    const toolCallsByIndex = new Map<number, ToolCall>();
    let emittedToolCalls = 0;
    let finishReason: string | null = null;
    const completedToolCall = (call: ToolCall): ChatStreamEvent => ({
      type: 'tool_call',
      id: call.id,
      name: call.name,
      arguments: parseJsonOrKeepText(call.argumentsJson === '' ? '{}' : call.argumentsJson),
      argumentsJson: call.argumentsJson,
    });

    for await (const data of readServerSentEventData(readBodyPieces(providerResponse))) {
      onPiece?.();
      if (data.trim() === '[DONE]') break;
      let chunk: StreamChunk;
      try {
        chunk = JSON.parse(data) as StreamChunk;
      } catch {
        throw new ProviderError(providerName, 'streamed a chunk that is not JSON');
      }
      if (chunk.error) {
        const { code, type } = chunk.error as { code?: unknown; type?: unknown };
        const known = [this.#endpoint.apiKey];
        const what = vendorErrorCode(code, known) ?? vendorErrorCode(type, known) ?? 'no code';
        throw new ProviderError(providerName, `stream failed: ${what}`);
      }
      this.#noteUsage(chunk.usage);
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      const content = choice.delta?.content;
      if (typeof content === 'string' && content !== '') yield { type: 'text', delta: content };
      for (const fragment of choice.delta?.tool_calls ?? []) {
        const index = fragment.index ?? 0;
        let call = toolCallsByIndex.get(index);
        if (!call) {
          // A new call starts: the ones before it are complete.
          for (let earlier = emittedToolCalls; earlier < index; earlier += 1) {
            const earlierCall = toolCallsByIndex.get(earlier);
            if (earlierCall) yield completedToolCall(earlierCall);
          }
          emittedToolCalls = Math.max(emittedToolCalls, index);
          call = { id: fragment.id ?? `call_${index}`, name: '', argumentsJson: '' };
          toolCallsByIndex.set(index, call);
        }
        if (fragment.id) call.id = fragment.id;
        if (fragment.function?.name) call.name += fragment.function.name;
        if (fragment.function?.arguments) call.argumentsJson += fragment.function.arguments;
      }
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
    const remaining = [...toolCallsByIndex.entries()].filter(([index]) => index >= emittedToolCalls);
    for (const [, call] of remaining.sort(([a], [b]) => a - b)) yield completedToolCall(call);
    this.#logger?.debug({ finishReason, toolCallCount: toolCallsByIndex.size }, 'chat stream finished');
    yield { type: 'finish', reason: finishReason };
  }

  /** A completion constrained to a JSON schema (`response_format: json_schema`), parsed. */
  async completeJson(request: CompleteJsonRequest): Promise<unknown> {
    const body: Record<string, unknown> = {
      model: this.#model,
      messages: request.messages.map(toWireMessage),
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: request.schema.name,
          schema: request.schema.schema,
          strict: request.strict ?? true,
        },
      },
    };
    if (request.temperature !== undefined) body.temperature = request.temperature;
    const answer = (await postJsonToProvider({
      providerName,
      endpoint: this.#endpoint,
      path: '/chat/completions',
      body: JSON.stringify(body),
      signal: request.signal,
    })) as {
      choices?: Array<{ message?: { content?: string | null; refusal?: string | null } }>;
      usage?: ReportedUsage;
    };
    this.#noteUsage(answer.usage);
    const message = answer.choices?.[0]?.message;
    if (message?.refusal) throw new ProviderError(providerName, `the model refused: ${message.refusal}`);
    if (typeof message?.content !== 'string')
      throw new ProviderError(providerName, 'answer has no message content');
    try {
      return JSON.parse(message.content) as unknown;
    } catch {
      throw new ProviderError(providerName, 'answer is not JSON');
    }
  }
}
