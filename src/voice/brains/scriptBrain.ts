import { type AnalysisSettings, noAnalysisSettings } from '../../domain/callAnalysis.js';
import {
  type CallbackResult,
  callbackRequestOfScript,
  callbackResultText,
  type ScriptCallback,
} from '../../domain/callbacks.js';
import { type Understanding, understandAnswer } from '../../domain/intentMatching.js';
import { renderTemplate, type VariableValue } from '../../domain/templates.js';
import { scriptAnalysis } from '../callAnalyst.js';
import type { DialogNode, DialogOption, DialogScript } from './dialogScript.js';
import type {
  AgentBrain,
  BrainAction,
  CallAnalysisResult,
  CallbackScheduler,
  CalleeTurn,
  TurnUnderstanding,
} from './types.js';

/** Nodes entered in one response at most: a guard against `next` loops without a `listen`. */
const maxStepsPerResponse = 50;

/**
 * The offline, deterministic brain: walks the agent's dialog script. What it fills (`set`,
 * `capture`) is the call's extracted data.
 */
export class ScriptBrain implements AgentBrain {
  private current: DialogNode | null = null;
  private readonly extracted: Record<string, string | number | boolean> = {};
  /** Where the script goes on when the transfer it asked for fails. */
  private transferFailedNode: string | null = null;
  private currentName: string | null = null;
  /** What each callee turn at a `listen` was understood as, in order (the call's metrics). */
  private readonly understood: TurnUnderstanding[] = [];

  constructor(
    private readonly script: DialogScript,
    private readonly variables: Record<string, VariableValue>,
    private readonly firstMessage: string | null,
    private readonly analysis: AnalysisSettings = noAnalysisSettings,
    /** Schedules a callback (a node's schedule_callback); absent: the node's callback is not available. */
    private readonly scheduleCallback: CallbackScheduler | null = null,
  ) {}

  greeting(): string | null {
    if (this.firstMessage) return this.render(this.firstMessage);
    const opening = this.script.nodes[this.script.start]?.say;
    return opening ? this.render(opening) : null;
  }

  async *start(_signal?: AbortSignal): AsyncIterable<BrainAction> {
    if (this.firstMessage) yield { type: 'say', text: this.render(this.firstMessage) };
    yield* this.enter(this.script.start, this.firstMessage !== null);
  }

  async *onCalleeTurn(turn: CalleeTurn, _signal?: AbortSignal): AsyncIterable<BrainAction> {
    const node = this.current;
    if (!node?.listen) return;
    const { option, understanding } = this.match(node.listen, turn);
    this.understood.push({ node: this.currentName ?? '', ...understanding });
    if (option) {
      Object.assign(this.extracted, option.set ?? {});
      if (option.capture) this.extracted[option.capture] = turn.text;
      yield* this.enter(option.next, false);
    } else if (node.otherwise) {
      yield* this.enter(node.otherwise, false);
    }
  }

  async *onTransferFailed(_reason: string, _signal?: AbortSignal): AsyncIterable<BrainAction> {
    const next = this.transferFailedNode;
    this.transferFailedNode = null;
    if (next) yield* this.enter(next, false);
  }

  async *onDtmf(digit: string, _signal?: AbortSignal): AsyncIterable<BrainAction> {
    const target = this.current?.dtmf?.[digit];
    if (target) yield* this.enter(target, false);
  }

  expectedPhrases(): string[] | undefined {
    const options = this.current?.listen;
    if (!options) return undefined;
    // An option with no phrases listens free-form: then the whole turn is free-form.
    if (options.some((option) => option.phrases.length === 0)) return undefined;
    return [...new Set(options.flatMap((option) => option.phrases))];
  }

  noteSaid(): void {}

  /** Per callee turn at a `listen`: what was heard, which rule matched (or none) and why. */
  understanding(): TurnUnderstanding[] {
    return this.understood.map((entry) => ({ ...entry }));
  }

  async analyze(): Promise<CallAnalysisResult> {
    return scriptAnalysis({ ...this.extracted }, this.analysis);
  }

  /**
   * The option the turn carries (domain/intentMatching.ts: a listed phrase or a variant of one
   * inside the answer, not negated); else the free-form option, if the node has one.
   */
  private match(
    options: DialogOption[],
    turn: CalleeTurn,
  ): { option: DialogOption | undefined; understanding: Understanding } {
    const freeForm = options.findIndex((option) => option.phrases.length === 0);
    const understanding = understandAnswer(options, turn.text || turn.matchedPhrase || '');
    if (understanding.option !== null) return { option: options[understanding.option], understanding };
    if (freeForm >= 0) {
      return {
        option: options[freeForm],
        understanding: {
          ...understanding,
          option: freeForm,
          reason: understanding.heard
            ? 'the free-form option takes any answer'
            : 'nothing was heard; the free-form option takes it',
        },
      };
    }
    return { option: undefined, understanding };
  }

  /** Enters `name` and follows `next` links, saying what each node says, until a listen or an end. */
  private async *enter(name: string, skipFirstSay: boolean): AsyncIterable<BrainAction> {
    let nodeName: string | undefined = name;
    for (let step = 0; nodeName !== undefined && step < maxStepsPerResponse; step++) {
      const node: DialogNode | undefined = this.script.nodes[nodeName];
      if (!node) return;
      this.current = node;
      this.currentName = nodeName;
      Object.assign(this.extracted, node.set ?? {});
      if (node.say && !(skipFirstSay && step === 0))
        yield {
          type: 'say',
          text: this.render(node.say),
          ...(node.interruptible === false ? { interruptible: false } : {}),
        };
      if (node.send_dtmf) yield { type: 'send_dtmf', digits: node.send_dtmf };
      if (node.do_not_call) yield { type: 'do_not_call' };
      if (node.schedule_callback) yield* this.callBack(node.schedule_callback);
      if (node.end) {
        yield { type: 'end_call' };
        return;
      }
      if (node.leave_voicemail) {
        yield { type: 'leave_voicemail' };
        return;
      }
      if (node.transfer) {
        this.transferFailedNode = node.transfer_failed ?? null;
        yield { type: 'transfer', target: node.transfer };
        return;
      }
      if (node.listen) return;
      nodeName = node.next;
    }
  }

  /** A node's callback, noted in the transcript with its answer; the script goes on either way. */
  private async *callBack(callback: ScriptCallback): AsyncIterable<BrainAction> {
    yield { type: 'note', event: 'tool_call', text: `schedule_callback ${JSON.stringify(callback)}` };
    const result: CallbackResult = this.scheduleCallback
      ? await this.scheduleCallback(callbackRequestOfScript(callback)).catch(() => ({
          scheduled: false as const,
          reason: 'the callback could not be saved',
        }))
      : { scheduled: false, reason: 'callbacks are not available on this call' };
    yield { type: 'note', event: 'tool_result', text: callbackResultText(result) };
  }

  private render(template: string): string {
    return renderTemplate(template, { ...this.variables, ...this.extracted });
  }
}
