import type { TranscriptEvent } from '../domain/records.js';
import type { Logger } from '../logger.js';
import type { RtpSession } from '../telephony/rtp/index.js';
import type { TransferResult } from '../telephony/sip/index.js';
import { readAhead } from './actionsAhead.js';
import type { AgentSpeaker, SpokenLine } from './agentSpeaker.js';
import type { AgentBrain, BrainAction } from './brains/types.js';
import { type AgentEnding, providerApology } from './conversationResult.js';
import {
  ProviderError,
  type ProviderFailureLog,
  StageExhaustedError,
  type TextToSpeech,
} from './providers/index.js';
import { transferFailureReason, transferTranscriptText } from './transferOutcome.js';
import type { TurnTimeline } from './turnTimeline.js';

interface Reply {
  controller: AbortController;
  /** The sentence being said may not be cut (`interruptible: false`). */
  interruptible: boolean;
  /** Cut by the callee: the brain's remaining actions are still read for a pending hang-up. */
  cutByCallee: boolean;
  /**
   * The reply holds an action the call carries out whatever the callee does meanwhile (a transfer,
   * a hang-up): what is playing is its announcement, heard to its end.
   */
  committed: boolean;
  /** Generated ahead of the callee's final words: nothing is played or done until this settles. */
  gate?: Promise<void> | undefined;
  /** Taken back by its caller (a draft whose words were not the callee's): the brain hears nothing of it. */
  takenBack?: boolean;
}

/** Actions the model chose that are carried out once announced, whatever the callee does meanwhile. */
const committedActions: ReadonlySet<BrainAction['type']> = new Set(['end_call', 'transfer']);

/** What the callee did not hear of a reply they cut, to resume it when the cut was only a sound. */
export interface UnheardReply {
  heard: string;
  rest: string;
}

/**
 * The agent's replies, one at a time: each runs the brain's actions (sentences synthesised as soon
 * as the brain gives them, while the ones before still play, so the stream stays full; a DTMF send
 * or a hang-up waits for what is queued), a new one aborts the one before, and a reply the callee
 * cut is still read to its end for the transfer or hang-up it holds, while what the callee heard of
 * it goes to the brain. A reply known to hold a transfer or a hang-up (its actions are read ahead)
 * is not cut: its announcement is heard to the end, then the action is carried out, whatever the
 * callee says or presses meanwhile; a goodbye cut before its hang-up was known is not hung up on
 * mid-word — the brain decides again. Every stage failing ends in an apology.
 */
export class AgentReplies {
  private reply: Reply | null = null;
  private apologizing = false;
  private unheard: UnheardReply | null = null;
  private protectedLinesPlaying = 0;
  /** The last line of the latest reply, once played (or cut); null when it said nothing. */
  lastLine: Promise<SpokenLine | null> = Promise.resolve(null);

  constructor(
    private readonly options: {
      brain: AgentBrain;
      speaker: AgentSpeaker;
      rtp: RtpSession;
      timeline: TurnTimeline;
      logger: Logger;
      apologyTts: TextToSpeech;
      providerFailures: ProviderFailureLog;
      hangUp: (ending: AgentEnding) => void;
      nowMs: () => number;
      hasEnded: () => boolean;
      /** Called when a reply is over (the silence timer starts again). */
      onReplyOver: () => void;
      /** Records a timed agent event in the transcript (keys sent, a tool called, its answer). */
      noteEvent: (event: TranscriptEvent, text: string) => void;
      /** Hands the call to a target of the agent by name (a cold transfer); absent: no transfers. */
      transfer?: ((target: string, summary?: string) => Promise<TransferResult>) | undefined;
      /** Puts the callee's number on the account's do-not-call list; absent: not possible here. */
      addToDoNotCall?: (() => Promise<void>) | undefined;
      /** Keys always as tones in the audio (settings.dtmf inband); else RFC 4733 where negotiated. */
      dtmfInband?: boolean;
      /** Leaves a voicemail (the agent decided a machine answered); absent: the call just ends. */
      leaveVoicemail?: ((message: string | undefined) => void) | undefined;
    },
  ) {}

  /** A reply is running (being generated, synthesised or played). */
  get active(): boolean {
    return this.reply !== null;
  }

  /**
   * What is being said may be cut: no `interruptible: false` passage is being synthesised or is
   * still playing (a passage queued stays protected until its audio has been heard, also while the
   * sentences after it are being prepared).
   */
  get interruptible(): boolean {
    const reply = this.reply;
    return this.protectedLinesPlaying === 0 && !reply?.committed && (reply?.interruptible ?? true);
  }

  /** The running reply holds a transfer or a hang-up: it is carried out, not answered over. */
  get holdsAction(): boolean {
    // A reply generated ahead of the callee's final words commits to nothing until it is kept.
    const reply = this.reply;
    return reply?.committed === true && reply.gate === undefined;
  }

  /** Stops the running reply (the call ended, or a machine answered). */
  abort(): void {
    this.reply?.controller.abort();
  }

  /** The callee cut the running reply off (a barge-in). */
  cutByCallee(): void {
    const reply = this.reply;
    if (!reply) return;
    reply.cutByCallee = true;
    reply.controller.abort();
  }

  /** What the callee did not hear of the last reply they cut, once. */
  takeUnheard(): UnheardReply | null {
    const unheard = this.unheard;
    this.unheard = null;
    return unheard;
  }

  /** Says the rest of a reply the callee cut with a sound; the brain then remembers all of it. */
  resume(unheard: UnheardReply): void {
    const { brain } = this.options;
    this.run(async function* () {
      yield { type: 'say', text: unheard.rest } satisfies BrainAction;
    });
    void this.lastLine.then((line) => {
      if (line && !line.interrupted) brain.noteSaid([unheard.heard, unheard.rest].filter(Boolean).join(' '));
    });
  }

  /** Says one passage (the agent's own words, not the brain's); with `thenEnd`, hangs up after it. */
  say(text: string, thenEnd?: AgentEnding): void {
    this.run(async function* () {
      yield { type: 'say', text } satisfies BrainAction;
      if (thenEnd) yield { type: 'end_call' } satisfies BrainAction;
    }, thenEnd);
  }

  /**
   * Runs one reply, aborting the one before it. `timed`: the reply answers a callee turn, so its
   * first sentence and first audio go into the turn's latency waterfall. `gate`: nothing is played
   * or done before it settles (sentences are synthesised meanwhile). Returns what stops this reply
   * (and no later one).
   */
  run(
    actions: (signal: AbortSignal) => AsyncIterable<BrainAction>,
    endingReason: AgentEnding = 'agent_hangup',
    timed = false,
    gate?: Promise<void>,
  ): () => void {
    if (this.apologizing) return () => {};
    const before = this.reply;
    // A new reply (a key pressed, a turn) stands in for the running one as a barge-in would: an
    // action it holds is still carried out.
    if (before && !before.controller.signal.aborted) before.cutByCallee = true;
    before?.controller.abort();
    const reply: Reply = {
      controller: new AbortController(),
      interruptible: true,
      cutByCallee: false,
      committed: false,
      gate,
    };
    // Kept (the callee's final words matched): from now on it is a reply like any other.
    gate?.then(
      () => {
        if (reply.gate === gate) reply.gate = undefined;
      },
      () => {},
    );
    this.reply = reply;
    let finishedSpeaking: (line: SpokenLine | null) => void = () => {};
    this.lastLine = new Promise((resolve) => {
      finishedSpeaking = resolve;
    });
    void this.play(reply, actions, endingReason, timed, finishedSpeaking);
    return () => {
      reply.takenBack = true;
      reply.controller.abort();
    };
  }

  private async play(
    reply: Reply,
    actions: (signal: AbortSignal) => AsyncIterable<BrainAction>,
    endingReason: AgentEnding,
    timed: boolean,
    finishedSpeaking: (line: SpokenLine | null) => void,
  ): Promise<void> {
    const { signal } = reply.controller;
    const { timeline, speaker, nowMs, hasEnded, hangUp } = this.options;
    const spoken: Promise<SpokenLine>[] = [];
    let speaking = false;
    let first = timed;
    try {
      const ahead = readAhead(actions(signal), (action) => {
        if (committedActions.has(action.type)) reply.committed = true;
      });
      for await (const action of ahead) {
        if (hasEnded()) return;
        // Held (preemptive generation): sentences are synthesised, nothing else is done yet.
        if (reply.gate && action.type !== 'say') await reply.gate;
        // The callee's wish to be left alone is kept even when they talked over the reply.
        if (action.type === 'do_not_call') {
          await this.addToDoNotCall();
          continue;
        }
        if (signal.aborted) {
          // Cut by the callee before the action was known: the model chose it all the same.
          if (!reply.cutByCallee) return;
          if (!committedActions.has(action.type)) continue;
        }
        if (action.type === 'say') {
          if (action.whilePending) {
            // A waiting line is for a tool still pending when it would start, not after its answer.
            await Promise.all(spoken);
            if (hasEnded() || signal.aborted || !action.whilePending()) continue;
          }
          reply.interruptible = action.interruptible !== false;
          speaking = true;
          if (first) timeline.mark('first_sentence', nowMs());
          const queued = await speaker.queue(action.text, signal, {
            trimLeadingSilence: spoken.length === 0,
            onFirstAudio: first ? () => timeline.mark('tts_first_audio', nowMs()) : undefined,
            gate: reply.gate,
            rest: action.rest,
          });
          first = false;
          spoken.push(queued.played);
          if (action.interruptible === false) {
            this.protectedLinesPlaying++;
            void queued.played.finally(() => this.protectedLinesPlaying--);
          }
          speaking = false;
          continue;
        }
        if (action.type === 'note') {
          this.options.noteEvent(action.event, action.text);
          continue;
        }
        await Promise.all(spoken);
        if (hasEnded()) return;
        if (action.type === 'end_call') {
          const lines = await Promise.all(spoken);
          if (signal.aborted && lines.some((line) => line.said !== line.text)) {
            // The callee cut the goodbye before the hang-up was known: no hanging up mid-word; the
            // agent decides again with what they said.
            this.options.logger.info('the goodbye was cut before its hang-up: the call goes on');
            this.options.brain.noteNotDone?.(
              'end_call',
              'the callee spoke over your goodbye; the call goes on',
            );
            return;
          }
          hangUp(endingReason);
          return;
        }
        if (action.type === 'transfer') {
          await this.transfer(action.target, action.summary);
          return;
        }
        if (signal.aborted) continue;
        if (action.type === 'leave_voicemail') {
          if (this.options.leaveVoicemail) this.options.leaveVoicemail(action.message);
          else hangUp('voicemail');
          return;
        }
        this.options.noteEvent('dtmf', action.digits);
        await this.options.rtp.sendDtmf(action.digits, { inband: this.options.dtmfInband === true });
      }
    } catch (error) {
      if (signal.aborted) return;
      this.options.logger.warn({ err: error }, 'agent response failed');
      if (speaking) {
        if (error instanceof StageExhaustedError) this.apologizeAndHangUp(error);
      } else if (error instanceof ProviderError) {
        // The language model (always a vendor) failed: say so rather than go quiet. What it had
        // said is whole sentences: they finish, and the apology follows them.
        this.options.providerFailures.note('llm', error.provider, error);
        this.apologizeAndHangUp(error, { afterQueued: true });
      }
    } finally {
      const lines = await Promise.all(spoken);
      finishedSpeaking(lines.at(-1) ?? null);
      // A reply taken back (its caller rolls the brain's history back itself) was never the agent's.
      if (!reply.takenBack && lines.some((line) => line.interrupted)) this.noteCut(lines, reply.cutByCallee);
      if (this.reply === reply) this.reply = null;
      this.options.onReplyOver();
    }
  }

  /**
   * A cold transfer once the agent's words are out: the call ends `transferred` when the far end
   * reached the target; otherwise the brain hears why and goes on with the callee.
   */
  private async transfer(target: string, summary: string | undefined): Promise<void> {
    const { brain, noteEvent, hangUp, hasEnded, logger } = this.options;
    const result: TransferResult = this.options.transfer
      ? await this.options.transfer(target, summary)
      : { kind: 'failed', status: null, reason: 'this call cannot be transferred' };
    if (hasEnded()) return;
    noteEvent('transfer', transferTranscriptText(target, result));
    logger.info({ target, result: result.kind }, 'transfer over');
    if (result.kind === 'transferred') {
      hangUp('transferred');
      return;
    }
    const reason = transferFailureReason(result);
    if (brain.onTransferFailed) {
      const onFailed = brain.onTransferFailed.bind(brain);
      setImmediate(() => this.run((signal) => onFailed(reason, signal)));
    }
  }

  /** The callee asked to be left alone: their number goes on the list, noted in the transcript. */
  private async addToDoNotCall(): Promise<void> {
    const { addToDoNotCall, noteEvent, logger } = this.options;
    try {
      if (!addToDoNotCall) throw new Error('no do-not-call list for this call');
      await addToDoNotCall();
      noteEvent('do_not_call', 'the number was put on the do-not-call list');
    } catch (error) {
      logger.error({ err: error }, 'could not put the number on the do-not-call list');
      noteEvent('do_not_call', 'failed: the number could not be put on the do-not-call list');
    }
  }

  /** After a barge-in the brain remembers what the callee heard of the whole reply. */
  private noteCut(lines: SpokenLine[], byCallee: boolean): void {
    const heard = lines
      .map((line) => line.said)
      .filter(Boolean)
      .join(' ');
    this.options.brain.noteSaid(heard);
    const rest = lines
      .map((line) => (line.interrupted ? line.text.split(/\s+/).slice(wordCount(line.said)).join(' ') : ''))
      .filter(Boolean)
      .join(' ');
    if (byCallee && rest) this.unheard = { heard, rest };
  }

  /**
   * Every provider of a stage failed (the fallbacks included): a short apology in the offline voice,
   * then the call ends `provider_error` — never a silent line until the silence timeout.
   */
  apologizeAndHangUp(error: ProviderError, options: { afterQueued?: boolean } = {}): void {
    if (this.options.hasEnded() || this.apologizing) return;
    this.apologizing = true;
    this.options.logger.warn(
      { provider: error.provider },
      'a voice stage has no working provider; apologising',
    );
    if (!options.afterQueued) {
      // A half-said sentence stops here.
      this.reply?.controller.abort();
      this.options.rtp.clear();
    }
    const controller = new AbortController();
    this.reply = { controller, interruptible: false, cutByCallee: false, committed: true };
    void (async () => {
      try {
        await this.options.speaker.say(providerApology, controller.signal, {
          tts: this.options.apologyTts,
          voice: 'kal',
        });
      } catch (apologyError) {
        this.options.logger.warn({ err: apologyError }, 'the apology could not be said');
      } finally {
        this.options.hangUp('provider_error');
      }
    })();
  }
}

function wordCount(text: string): number {
  return text ? text.split(/\s+/).length : 0;
}
