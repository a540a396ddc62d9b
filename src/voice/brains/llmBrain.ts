import type { ExtractionField } from '../../domain/records.js';
import type { Logger } from '../../logger.js';
import type { ChatMessage, OpenAiChatClient, ToolCall, ToolDefinition } from '../providers/index.js';
import { SentenceSplitter } from './sentenceSplitter.js';
import type { AgentBrain, BrainAction, CalleeTurn } from './types.js';

const tools: ToolDefinition[] = [
  {
    name: 'end_call',
    description: 'Hang up once the conversation is over (after saying goodbye).',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
  },
  {
    name: 'send_dtmf',
    description: 'Press keys on the phone keypad, e.g. to navigate a phone menu.',
    parameters: {
      type: 'object',
      properties: { digits: { type: 'string', pattern: '^[0-9*#A-D]{1,32}$' } },
      required: ['digits'],
      additionalProperties: false,
    },
  },
];

const jsonTypeOf: Record<ExtractionField['type'], Record<string, unknown>> = {
  string: { type: ['string', 'null'] },
  number: { type: ['number', 'null'] },
  boolean: { type: ['boolean', 'null'] },
  date: { type: ['string', 'null'], description: 'ISO 8601 date' },
};

/**
 * The prompt-driven brain: the agent's system prompt (rendered with the call's variables, the
 * call's context appended), a streaming chat model whose reply is spoken sentence by sentence as
 * it arrives, the `end_call` and `send_dtmf` tools, and a JSON-schema-constrained extraction.
 */
export class LlmBrain implements AgentBrain {
  private readonly messages: ChatMessage[];

  constructor(
    private readonly chat: OpenAiChatClient,
    options: {
      systemPrompt: string;
      firstMessage: string | null;
      extraction: ExtractionField[];
      logger: Logger;
    },
  ) {
    this.messages = [{ role: 'system', content: options.systemPrompt }];
    this.firstMessage = options.firstMessage;
    this.extraction = options.extraction;
    this.logger = options.logger;
  }

  private readonly firstMessage: string | null;
  private readonly extraction: ExtractionField[];
  private readonly logger: Logger;
  onFirstToken: (() => void) | undefined;

  greeting(): string | null {
    return this.firstMessage;
  }

  async *start(signal: AbortSignal): AsyncIterable<BrainAction> {
    if (this.firstMessage) {
      this.messages.push({ role: 'assistant', content: this.firstMessage });
      yield { type: 'say', text: this.firstMessage };
      return;
    }
    yield* this.reply(signal);
  }

  async *onCalleeTurn(turn: CalleeTurn, signal: AbortSignal): AsyncIterable<BrainAction> {
    if (!turn.text.trim()) return;
    this.messages.push({ role: 'user', content: turn.text });
    yield* this.reply(signal);
  }

  async *onDtmf(digit: string, signal: AbortSignal): AsyncIterable<BrainAction> {
    this.messages.push({ role: 'user', content: `[the callee pressed ${digit}]` });
    yield* this.reply(signal);
  }

  expectedPhrases(): undefined {
    return undefined;
  }

  noteSaid(text: string): void {
    // After a barge-in the model should remember only what the callee actually heard.
    const last = this.messages.at(-1);
    if (last?.role === 'assistant' && typeof last.content === 'string') last.content = text;
  }

  async extract(transcript: readonly { role: string; text: string }[]): Promise<Record<string, unknown>> {
    if (this.extraction.length === 0) return {};
    const properties = Object.fromEntries(
      this.extraction.map((field) => [
        field.name,
        { ...jsonTypeOf[field.type], description: field.description },
      ]),
    );
    const conversation = transcript.map((entry) => `${entry.role}: ${entry.text}`).join('\n');
    try {
      const result = await this.chat.completeJson({
        messages: [
          {
            role: 'system',
            content: 'Extract the requested fields from this phone call. Use null when unknown.',
          },
          { role: 'user', content: conversation },
        ],
        schema: {
          name: 'extracted_data',
          schema: {
            type: 'object',
            properties,
            required: Object.keys(properties),
            additionalProperties: false,
          },
        },
      });
      if (typeof result !== 'object' || result === null) return {};
      const known = new Set(this.extraction.map((field) => field.name));
      return Object.fromEntries(Object.entries(result).filter(([name]) => known.has(name)));
    } catch (error) {
      this.logger.warn({ err: error }, 'extraction failed');
      return {};
    }
  }

  private async *reply(signal: AbortSignal): AsyncIterable<BrainAction> {
    const splitter = new SentenceSplitter();
    let said = '';
    const toolCalls: ToolCall[] = [];
    const followUps: BrainAction[] = [];
    let firstToken = true;
    let remembered = false;
    try {
      for await (const event of this.chat.streamChat({ messages: this.messages, tools, signal })) {
        if (firstToken && (event.type === 'text' || event.type === 'tool_call')) {
          firstToken = false;
          this.onFirstToken?.();
        }
        if (event.type === 'text') {
          for (const sentence of splitter.push(event.delta)) {
            said += `${said ? ' ' : ''}${sentence}`;
            yield { type: 'say', text: sentence };
          }
        } else if (event.type === 'tool_call') {
          toolCalls.push({ id: event.id, name: event.name, argumentsJson: event.argumentsJson });
          if (event.name === 'end_call') followUps.push({ type: 'end_call' });
          const digits = (event.arguments as { digits?: unknown } | null)?.digits;
          if (event.name === 'send_dtmf' && typeof digits === 'string' && /^[0-9*#A-D]{1,32}$/.test(digits)) {
            followUps.push({ type: 'send_dtmf', digits });
          }
        }
      }
      for (const sentence of splitter.flush()) {
        said += `${said ? ' ' : ''}${sentence}`;
        yield { type: 'say', text: sentence };
      }
      remembered = true;
      this.messages.push({
        role: 'assistant',
        content: said || null,
        ...(toolCalls.length ? { toolCalls } : {}),
      });
      for (const call of toolCalls)
        this.messages.push({ role: 'tool', toolCallId: call.id, content: 'done' });
      yield* followUps;
    } finally {
      // Cut off by the callee: the history keeps the reply as far as it was spoken (noteSaid then
      // cuts it to what was heard), never a user turn followed by nothing.
      if (!remembered && said) this.messages.push({ role: 'assistant', content: said });
    }
  }
}
