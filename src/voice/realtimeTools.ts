import type { AgentTool } from '../domain/agentTools.js';
import type { TranscriptEvent } from '../domain/records.js';
import type { Logger } from '../logger.js';
import type { TransferResult } from '../telephony/sip/index.js';
import {
  type ToolCaller,
  toolCallTranscriptText,
  toolOutcomeForModel,
  toolResultTranscriptText,
} from '../tools/toolCaller.js';
import { endCallReason } from './brains/types.js';
import type { AgentEnding } from './conversationResult.js';
import { sayExactly } from './realtimeResponses.js';
import { transferFailureReason, transferTranscriptText } from './transferOutcome.js';

/** The tool every speech-to-speech agent has: the model ends the call once it has said goodbye. */
export const endCallTool = {
  name: 'end_call',
  description: 'Hang up. Call this once the conversation is over and you have said goodbye.',
  parameters: {
    type: 'object',
    properties: { reason: { type: 'string', description: 'Why the call ends, in a few words.' } },
  },
};

/** The session's way to leave a voicemail when it hears a recording (not a person). */
export const leaveVoicemailTool = {
  name: 'leave_voicemail',
  description:
    'A recording answered (a voicemail greeting), not a person: stop talking, wait for the beep, leave the voicemail message and hang up.',
  parameters: {
    type: 'object',
    properties: {
      message: { type: 'string', description: 'The message, when the agent has none of its own configured.' },
    },
  },
};

export const addToDoNotCallTool = {
  name: 'add_to_do_not_call',
  description:
    'The callee asked not to be called again ("stop calling me"): put their number on the do-not-call list, then confirm and say goodbye.',
  parameters: { type: 'object', properties: {} },
};

/** `transfer_call`, offered when the agent has transfer targets: the model picks one by name. */
export function realtimeTransferTool(targets: readonly string[]) {
  return {
    name: 'transfer_call',
    description:
      'Hand the call to a person. Say that you are transferring the caller first; the call ends for you once the transfer succeeds.',
    parameters: {
      type: 'object',
      properties: {
        target: { type: 'string', enum: [...targets] },
        summary: { type: 'string', description: 'For the person who takes the call, on a warm transfer.' },
      },
      required: ['target'],
    },
  };
}

/** The built-in tools of a speech-to-speech session, the transfer among them when there are targets. */
export function realtimeBuiltInTools(transferTargets: readonly string[]) {
  return [
    endCallTool,
    leaveVoicemailTool,
    addToDoNotCallTool,
    ...(transferTargets.length > 0 ? [realtimeTransferTool(transferTargets)] : []),
  ];
}

/** What running a session's tool call needs from its conversation. */
export interface RealtimeToolHost {
  logger: Logger;
  tools: ToolCaller | null;
  noteEvent(event: TranscriptEvent, text: string): void;
  /**
   * Answers the call and lets the session reply (within the first-audio timeout), once no response
   * is in progress; `instructions` shape that reply alone.
   */
  answer(callId: string, output: string, replyExpected: boolean, instructions?: string): void;
  /**
   * Has the session say `text` (a tool's message) as a reply of its own, once no response is in
   * progress and if `stillWanted()` then; resolves when that reply is done.
   */
  say(text: string, stillWanted: () => boolean): Promise<void>;
  /** Resolves once every reply item the callee should hear has been played. */
  played(): Promise<void>;
  hangUpAfterPlayback(ending: AgentEnding): void;
  hangUp(ending: AgentEnding): void;
  leaveVoicemail(message: string | undefined): void;
  transfer?: ((target: string, summary?: string) => Promise<TransferResult>) | undefined;
  addToDoNotCall?: (() => Promise<void>) | undefined;
  hasEnded(): boolean;
}

function argumentsOf(argumentsJson: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(argumentsJson) as unknown;
    return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const text = (value: unknown, maxChars: number) =>
  typeof value === 'string' && value.trim() ? value.slice(0, maxChars) : undefined;

/** Runs one function call of a speech-to-speech session: a built-in, or one of the agent's tools. */
export function runRealtimeTool(
  host: RealtimeToolHost,
  callId: string,
  name: string,
  argumentsJson: string,
): void {
  const args = argumentsOf(argumentsJson);
  switch (name) {
    case endCallTool.name: {
      const reason = endCallReason(argumentsJson);
      if (reason) host.noteEvent('end_call', reason);
      host.hangUpAfterPlayback('agent_hangup');
      return;
    }
    case leaveVoicemailTool.name:
      host.answer(callId, '"done"', false);
      host.leaveVoicemail(text(args.message, 1_000));
      return;
    case addToDoNotCallTool.name:
      void (host.addToDoNotCall?.() ?? Promise.reject(new Error('no do-not-call list for this call')))
        .then(() => host.noteEvent('do_not_call', 'the number was put on the do-not-call list'))
        .then(() => host.answer(callId, '"done"', true))
        .catch((error: unknown) => {
          host.logger.error({ err: error }, 'could not put the number on the do-not-call list');
          host.answer(callId, JSON.stringify({ error: 'the number could not be listed' }), true);
        });
      return;
    case 'transfer_call':
      void transferFromSession(host, callId, text(args.target, 64) ?? '', text(args.summary, 1_000));
      return;
  }
  const tool = host.tools?.find(name);
  if (host.tools && tool) {
    host.noteEvent('tool_call', toolCallTranscriptText(name, argumentsJson));
    void runAgentTool(host, host.tools, tool, callId, argumentsJson);
    return;
  }
  host.logger.warn({ tool: name.slice(0, 64) }, 'the session called a tool the agent does not have');
  host.answer(callId, JSON.stringify({ error: `there is no tool named ${name.slice(0, 64)}` }), true);
}

/** How soon a tool's answer must come for its start message to be left unsaid (as in the pipeline). */
const waitingLineGraceMs = 250;

/**
 * One of the agent's tools, with its `messages` as the pipeline says them (src/voice/brains/llmBrain.ts):
 * `start` once the answer has not come within a moment, `delayed` at `delayed_after_ms` if it is
 * still pending — each only while it is — and `failed` as the reply to a failure, the model told
 * that the callee heard it.
 */
async function runAgentTool(
  host: RealtimeToolHost,
  tools: ToolCaller,
  tool: AgentTool,
  callId: string,
  argumentsJson: string,
): Promise<void> {
  const startedAtMs = Date.now();
  const outcome = tools.call(tool, argumentsJson);
  let pending = true;
  void outcome.finally(() => {
    pending = false;
  });
  const whilePending = () => pending && !host.hasEnded();
  const answeredWithin = (waitMs: number) =>
    Promise.race([
      outcome.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), waitMs).unref()),
    ]);
  if (tool.sayWhileWaiting && !(await answeredWithin(waitingLineGraceMs)))
    await host.say(tool.sayWhileWaiting, whilePending);
  if (tool.filler) {
    const waitMs = Math.max(0, tool.filler.afterMs - (Date.now() - startedAtMs));
    if (!(await answeredWithin(waitMs))) await host.say(tool.filler.text, whilePending);
  }
  const done = await outcome;
  if (host.hasEnded()) return;
  host.noteEvent('tool_result', toolResultTranscriptText(done));
  const failedSaid = !done.ok && tool.failedMessage !== null ? tool.failedMessage : null;
  if (failedSaid === null) {
    host.answer(callId, toolOutcomeForModel(done), true);
    return;
  }
  host.answer(
    callId,
    JSON.stringify({ error: (done as { error: string }).error, callee_was_told: failedSaid }),
    true,
    sayExactly(failedSaid),
  );
}

/** A transfer once the session's words are heard; a failure goes back to the model as the call's answer. */
async function transferFromSession(
  host: RealtimeToolHost,
  callId: string,
  target: string,
  summary: string | undefined,
): Promise<void> {
  await host.played();
  const result: TransferResult = host.transfer
    ? await host.transfer(target, summary)
    : { kind: 'failed', status: null, reason: 'this call cannot be transferred' };
  if (host.hasEnded()) return;
  host.noteEvent('transfer', transferTranscriptText(target || '(none)', result));
  if (result.kind === 'transferred') {
    host.hangUp('transferred');
    return;
  }
  host.answer(
    callId,
    JSON.stringify({ error: `the transfer failed: ${transferFailureReason(result)}` }),
    true,
  );
}
