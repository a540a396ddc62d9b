import { type AgentTool, builtInToolNames } from '../../domain/agentTools.js';
import { type AnalysisSettings, noAnalysisSettings } from '../../domain/callAnalysis.js';
import { callbackRequestOfArguments, callbackResultText } from '../../domain/callbacks.js';
import type { ExtractionField } from '../../domain/records.js';
import type { Logger } from '../../logger.js';
import {
  type ToolCaller,
  toolCallTranscriptText,
  toolOutcomeForModel,
  toolResultTranscriptText,
  toolTranscriptText,
} from '../../tools/toolCaller.js';
import { languageModelAnalysis } from '../callAnalyst.js';
import type { ChatMessage, OpenAiChatClient, ToolCall, ToolDefinition } from '../providers/index.js';
import { untilAborted } from '../untilAborted.js';
import { builtInTools, scheduleCallbackTool, transferTool } from './llmBuiltInTools.js';
import { SentenceSplitter } from './sentenceSplitter.js';
import {
  type AgentBrain,
  type BrainAction,
  type BrainDraft,
  type CallAnalysisResult,
  type CallbackScheduler,
  type CalleeTurn,
  endCallReason,
} from './types.js';

/** A tool answering within this long gets no waiting line (`say_while_waiting`): it is not waited for. */
const waitingLineGraceMs = 250;

/** Model → tools → model rounds in one reply, at most (a model that keeps calling tools is stopped). */
export const maxToolRoundsPerReply = 4;

/** What the model reads for a tool call whose answer it will not get (the callee cut the reply). */
const unansweredToolCall = JSON.stringify({
  error: 'the callee spoke before the answer arrived; it was not awaited',
});

/**
 * The prompt-driven brain: the agent's system prompt (rendered with the call's variables, the
 * call's context appended), a streaming chat model whose reply is spoken sentence by sentence as
 * it arrives, the `end_call` and `send_dtmf` tools, and a JSON-schema-constrained extraction.
 */
export class LlmBrain implements AgentBrain {
  /**
   * The conversation as the model reads it. A draft (preemptive generation) works on a copy, which
   * becomes the history when kept; each reply holds on to the array it began with, so a reply
   * dropped and still winding down writes into its own discarded copy, never the history.
   */
  private messages: ChatMessage[];

  constructor(
    private readonly chat: OpenAiChatClient,
    options: {
      systemPrompt: string;
      firstMessage: string | null;
      extraction: ExtractionField[];
      /** What is worked out of the call once it is over (settings.analysis). */
      analysis?: AnalysisSettings;
      logger: Logger;
      /** The agent's own tools (settings.tools), called on the customer's server. */
      tools?: ToolCaller | null;
      /** The names of the agent's transfer targets (settings.transfer); none: no transfer_call. */
      transferTargets?: readonly string[];
      /** The post-call analysis gives up after this (CALLWRIGHT_ANALYSIS_TIMEOUT_MS; default 30 s). */
      analysisTimeoutMs?: number;
      /** Schedules a callback the callee asked for (schedule_callback); absent: the tool is not offered. */
      scheduleCallback?: CallbackScheduler;
    },
  ) {
    this.messages = [{ role: 'system', content: options.systemPrompt }];
    this.toolCaller = options.tools ?? null;
    const transferTargets = options.transferTargets ?? [];
    this.transferTargets = new Set(transferTargets);
    this.scheduleCallback = options.scheduleCallback ?? null;
    this.builtIns = [
      ...builtInTools,
      ...(transferTargets.length > 0 ? [transferTool(transferTargets)] : []),
      ...(this.scheduleCallback ? [scheduleCallbackTool] : []),
    ];
    this.toolDefinitions = [
      ...this.builtIns,
      ...(this.toolCaller?.tools ?? []).map((tool) => ({
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
      })),
    ];
    this.firstMessage = options.firstMessage;
    this.extraction = options.extraction;
    this.analysis = options.analysis ?? noAnalysisSettings;
    this.logger = options.logger;
    this.analysisTimeoutMs = options.analysisTimeoutMs ?? 30_000;
  }

  private readonly analysisTimeoutMs: number;

  private readonly firstMessage: string | null;
  private readonly extraction: ExtractionField[];
  private readonly analysis: AnalysisSettings;
  private readonly logger: Logger;
  private readonly toolCaller: ToolCaller | null;
  private readonly scheduleCallback: CallbackScheduler | null;
  private readonly toolDefinitions: ToolDefinition[];
  private readonly builtIns: ToolDefinition[];
  private readonly transferTargets: ReadonlySet<string>;
  /** The transfer_call the call is carrying out: its answer waits for the result. */
  private pendingTransfer: string | null = null;
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
    this.answerTransfer({ status: 'the transfer is still being placed' });
    this.messages.push({ role: 'user', content: turn.text });
    yield* this.reply(signal);
  }

  async *onTransferFailed(reason: string, signal: AbortSignal): AsyncIterable<BrainAction> {
    const note = `the transfer failed: ${reason}; tell the callee and carry on`;
    if (this.pendingTransfer !== null) this.answerTransfer({ error: note });
    else this.messages.push({ role: 'system', content: note.replace(/^t/, 'T') });
    yield* this.reply(signal);
  }

  /** The transfer_call in the history gets its answer (the model requires one before anything else). */
  private answerTransfer(answer: Record<string, string>): void {
    if (this.pendingTransfer === null) return;
    this.messages.push({ role: 'tool', toolCallId: this.pendingTransfer, content: JSON.stringify(answer) });
    this.pendingTransfer = null;
  }

  async *onDtmf(digit: string, signal: AbortSignal): AsyncIterable<BrainAction> {
    this.answerTransfer({ status: 'the transfer is still being placed' });
    this.messages.push({ role: 'user', content: `[the callee pressed ${digit}]` });
    yield* this.reply(signal);
  }

  noteNotDone(action: 'end_call' | 'transfer', why: string): void {
    const tool = action === 'end_call' ? 'end_call' : 'transfer_call';
    this.messages.push({ role: 'system', content: `Your ${tool} was not carried out: ${why}.` });
  }

  expectedPhrases(): undefined {
    return undefined;
  }

  draft(): BrainDraft {
    const kept = this.messages;
    const keptTransfer = this.pendingTransfer;
    const draft = [...kept];
    this.messages = draft;
    return {
      keep: (text) => {
        // The model answered the partial wording; the history keeps the final one.
        const turn = draft.slice(kept.length).find((message) => message.role === 'user');
        if (turn && text.trim()) turn.content = text;
      },
      drop: () => {
        if (this.messages !== draft) return;
        this.messages = kept;
        this.pendingTransfer = keptTransfer;
      },
    };
  }

  noteSaid(text: string): void {
    // After a barge-in the model should remember only what the callee actually heard.
    const last = this.messages.at(-1);
    if (last?.role === 'assistant' && typeof last.content === 'string') last.content = text;
  }

  analyze(
    transcript: readonly { role: string; text: string; event?: string }[],
  ): Promise<CallAnalysisResult> {
    // A model that hangs does not hold call.completed back longer than the operator allows.
    let timer: NodeJS.Timeout | undefined;
    const timeoutMs = this.analysisTimeoutMs;
    return Promise.race([
      languageModelAnalysis(this.chat, this.analysis, this.extraction, transcript),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
  }

  /**
   * One reply: the model's words as they stream, its built-in actions, and — when it calls the
   * agent's own tools — the calls (with what the tool says while waiting), their answers in the
   * history, and the model again, up to `maxToolRoundsPerReply` rounds.
   */
  private async *reply(signal: AbortSignal): AsyncIterable<BrainAction> {
    const messages = this.messages;
    for (let round = 1; round <= maxToolRoundsPerReply; round++) {
      const pending = yield* this.replyRound(messages, signal, round < maxToolRoundsPerReply);
      if (pending.length === 0) return;
      try {
        for (const call of pending) {
          if (signal.aborted) break;
          yield* this.runTool(messages, call, signal);
        }
      } finally {
        // Cut by the callee before a tool ran (or the reply was dropped): the model still reads an
        // answer for every call it made, or its next request would be refused.
        const answered = new Set(
          messages.flatMap((message) => (message.role === 'tool' ? [message.toolCallId] : [])),
        );
        for (const call of pending)
          if (!answered.has(call.id))
            messages.push({ role: 'tool', toolCallId: call.id, content: unansweredToolCall });
      }
      if (signal.aborted) return;
    }
  }

  /** One model request; returns the agent's own tool calls it made, still to be run. */
  private async *replyRound(
    messages: ChatMessage[],
    signal: AbortSignal,
    toolsAllowed: boolean,
  ): AsyncGenerator<BrainAction, ToolCall[]> {
    const splitter = new SentenceSplitter();
    let said = '';
    const toolCalls: ToolCall[] = [];
    const ownToolCalls: ToolCall[] = [];
    const followUps: BrainAction[] = [];
    let firstToken = true;
    let remembered = false;
    /** The rest of a first sentence whose first clause is being voiced already. */
    let clauseRest: LaterText | null = null;
    /** The transfer_call of this round: pending (its answer waits for the result) once remembered. */
    let transferCallId: string | null = null;
    const tools = toolsAllowed ? this.toolDefinitions : this.builtIns;
    try {
      for await (const event of this.chat.streamChat({ messages: messages, tools, signal })) {
        if (firstToken && (event.type === 'text' || event.type === 'tool_call')) {
          firstToken = false;
          // A reply dropped meanwhile (its words were not the callee's) times nothing.
          if (!signal.aborted) this.onFirstToken?.();
        }
        if (event.type === 'text') {
          for (const sentence of splitter.push(event.delta)) {
            if (clauseRest) {
              said += ` ${sentence}`;
              clauseRest.resolve(sentence);
              clauseRest = null;
              continue;
            }
            said += `${said ? ' ' : ''}${sentence}`;
            yield { type: 'say', text: sentence };
          }
          // The first sentence's first clause is voiced at once; its rest follows when written.
          const clause = said || clauseRest ? null : splitter.clause();
          if (clause) {
            said = clause;
            clauseRest = laterText();
            yield { type: 'say', text: clause, rest: clauseRest.promise };
          }
        } else if (event.type === 'tool_call') {
          const call = { id: event.id, name: event.name, argumentsJson: event.argumentsJson };
          toolCalls.push(call);
          if (event.name === 'end_call') {
            const reason = endCallReason(event.argumentsJson);
            if (reason) followUps.push({ type: 'note', event: 'end_call', text: reason });
            followUps.push({ type: 'end_call' });
          }
          if (event.name === 'add_to_do_not_call') followUps.push({ type: 'do_not_call' });
          if (event.name === 'leave_voicemail') {
            const message = (event.arguments as { message?: unknown } | null)?.message;
            followUps.push({
              type: 'leave_voicemail',
              ...(typeof message === 'string' && message.trim() ? { message: message.slice(0, 1_000) } : {}),
            });
          }
          const digits = (event.arguments as { digits?: unknown } | null)?.digits;
          if (event.name === 'send_dtmf' && typeof digits === 'string' && /^[0-9*#A-D]{1,32}$/.test(digits)) {
            followUps.push({ type: 'send_dtmf', digits });
          }
          const target = (event.arguments as { target?: unknown } | null)?.target;
          if (
            event.name === 'transfer_call' &&
            typeof target === 'string' &&
            this.transferTargets.has(target)
          ) {
            const summary = (event.arguments as { summary?: unknown } | null)?.summary;
            followUps.push({
              type: 'transfer',
              target,
              ...(typeof summary === 'string' && summary.trim() ? { summary: summary.slice(0, 1_000) } : {}),
            });
            transferCallId = call.id;
          }
          // A callback is run like the agent's own tools: its answer (scheduled when, or why not) comes back.
          if (
            !(builtInToolNames as readonly string[]).includes(event.name) ||
            event.name === 'schedule_callback'
          )
            ownToolCalls.push(call);
        }
      }
      for (const sentence of splitter.flush()) {
        said += `${said ? ' ' : ''}${sentence}`;
        if (clauseRest) {
          clauseRest.resolve(sentence);
          clauseRest = null;
        } else yield { type: 'say', text: sentence };
      }
      clauseRest?.resolve('');
      remembered = true;
      // Only a call the history holds is pending: a stream cut before its end chose no transfer.
      if (transferCallId !== null) this.pendingTransfer = transferCallId;
      messages.push({
        role: 'assistant',
        content: said || null,
        ...(toolCalls.length ? { toolCalls } : {}),
      });
      // Built-in actions are done by the call; the agent's own tools answer once run.
      for (const call of toolCalls) {
        if (ownToolCalls.includes(call) || call.id === this.pendingTransfer) continue;
        const content =
          call.name === 'transfer_call' ? JSON.stringify({ error: 'no such transfer target' }) : 'done';
        messages.push({ role: 'tool', toolCallId: call.id, content });
      }
      if (followUps.some((action) => action.type === 'end_call' || action.type === 'leave_voicemail')) {
        for (const call of ownToolCalls) {
          // A callback asked for with the goodbye is still scheduled before the call ends.
          if (call.name === 'schedule_callback' && this.scheduleCallback)
            yield* this.runTool(messages, call, signal);
          else messages.push({ role: 'tool', toolCallId: call.id, content: unansweredToolCall });
        }
        yield* followUps;
        return [];
      }
      yield* followUps;
      return ownToolCalls;
    } finally {
      // A sentence whose rest never came (the stream failed or was cut) ends with its clause.
      clauseRest?.resolve('');
      // Cut off by the callee: the history keeps the reply as far as it was spoken (noteSaid then
      // cuts it to what was heard), never a user turn followed by nothing.
      if (!remembered && said) messages.push({ role: 'assistant', content: said });
    }
  }

  /** The answer to a schedule_callback: when it was scheduled (callee time), or why not. */
  private async runCallback(argumentsJson: string, schedule: CallbackScheduler): Promise<string> {
    let args: unknown = null;
    try {
      args = JSON.parse(argumentsJson || '{}');
    } catch {
      // Reported below as a request it could not read.
    }
    const request = callbackRequestOfArguments(args);
    if ('problem' in request) return callbackResultText({ scheduled: false, reason: request.problem });
    try {
      return callbackResultText(await schedule(request));
    } catch (error) {
      this.logger.error({ err: error }, 'the callback could not be saved');
      return callbackResultText({ scheduled: false, reason: 'the callback could not be saved' });
    }
  }

  /**
   * Runs one of the agent's tools and puts its answer (or error) in the history; a reply dropped
   * meanwhile leaves the call to `reply`, which answers every call it did not get to.
   */
  private async *runTool(
    messages: ChatMessage[],
    call: ToolCall,
    signal: AbortSignal,
  ): AsyncIterable<BrainAction> {
    const answer = (content: string) => messages.push({ role: 'tool', toolCallId: call.id, content });
    yield { type: 'note', event: 'tool_call', text: toolCallTranscriptText(call.name, call.argumentsJson) };
    if (call.name === 'schedule_callback' && this.scheduleCallback) {
      const content = await this.runCallback(call.argumentsJson, this.scheduleCallback);
      answer(content);
      yield { type: 'note', event: 'tool_result', text: toolTranscriptText(content) };
      return;
    }
    const tool: AgentTool | undefined = this.toolCaller?.find(call.name);
    if (!tool) {
      const content = JSON.stringify({ error: `there is no tool named ${call.name}` });
      answer(content);
      yield { type: 'note', event: 'tool_result', text: toolTranscriptText(content) };
      return;
    }
    const startedAtMs = Date.now();
    // Sent before anything is said: the answer is on its way while the agent speaks.
    const outcome = (this.toolCaller as ToolCaller).call(tool, call.argumentsJson);
    let pending = true;
    void outcome.finally(() => {
      pending = false;
    });
    // The waiting lines are said only while the tool is really pending: not for an answer that came
    // within a moment, nor once it came (or failed) while the lines before them were still heard.
    const whilePending = () => pending;
    const answeredWithin = (waitMs: number) =>
      Promise.race([
        outcome.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), waitMs).unref()),
      ]);
    if (tool.sayWhileWaiting && !(await answeredWithin(waitingLineGraceMs)) && !signal.aborted)
      yield { type: 'say', text: tool.sayWhileWaiting, whilePending };
    if (tool.filler) {
      const waitMs = Math.max(0, tool.filler.afterMs - (Date.now() - startedAtMs));
      if (!(await answeredWithin(waitMs)) && !signal.aborted)
        yield { type: 'say', text: tool.filler.text, whilePending };
    }
    const done = await untilAborted(outcome, signal);
    if (done === null) return;
    // messages.failed: said now, and the model is told both the error and that the callee heard it.
    const failedSaid = !done.ok && tool.failedMessage !== null ? tool.failedMessage : null;
    answer(
      failedSaid === null
        ? toolOutcomeForModel(done)
        : JSON.stringify({ error: (done as { error: string }).error, callee_was_told: failedSaid }),
    );
    yield { type: 'note', event: 'tool_result', text: toolResultTranscriptText(done) };
    if (failedSaid !== null) yield { type: 'say', text: failedSaid };
  }
}

/** Text known later: a promise and the function that settles it. */
interface LaterText {
  promise: Promise<string>;
  resolve: (text: string) => void;
}

function laterText(): LaterText {
  let resolve: (text: string) => void = () => {};
  const promise = new Promise<string>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}
