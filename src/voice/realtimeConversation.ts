import type { AnsweredBy } from '../domain/callStatus.js';
import type { TranscriptEntry, TranscriptEvent } from '../domain/records.js';
import type { UsageMeter } from '../domain/usage.js';
import type { Logger } from '../logger.js';
import { lastAudibleIndex, type PlaybackResult, type RtpSession } from '../telephony/rtp/index.js';
import type { ToolCaller } from '../tools/toolCaller.js';
import { AnsweringMachineHandling, decisionWaitMaxMs, type VoicemailPolicy } from './answeringMachine.js';
import { answeringMetrics } from './answeringMachineDetector.js';
import type { AgentBrain } from './brains/types.js';
import { CallRecorder } from './callRecorder.js';
import {
  type AgentEnding,
  type CallActions,
  type ConversationResult,
  conversationResult,
  heardPart,
  providerApology,
} from './conversationResult.js';
import {
  ProviderError,
  type ProviderFailureLog,
  type SpeechToSpeech,
  type SpeechToSpeechEvent,
  type SpeechToSpeechOptions,
  type SpeechToSpeechSession,
  type TextToSpeech,
  type VoiceActivityDetector,
} from './providers/index.js';
import { RealtimeResponses, sayExactly } from './realtimeResponses.js';
import { runRealtimeTool } from './realtimeTools.js';
import { TurnTimeline } from './turnTimeline.js';

/** The speech-to-speech session a call is to hold, as the voice stack plans it from the agent. */
export interface RealtimeSessionPlan {
  speechToSpeech: SpeechToSpeech;
  session: SpeechToSpeechOptions;
  /** The vendor's name for the call record's provider failures. */
  provider: string;
  /** The session's model, for the usage report. */
  model: string;
  /** Said first, word for word, when the agent has one. */
  firstMessage: string | null;
  /**
   * A reply the session owes (the greeting, an answer after the callee stopped, after a tool's
   * result) that brings no audio within this fails the session.
   */
  firstAudioTimeoutMs: number;
  /** Once a reply's audio has started, the session may not go quiet longer than this before it is done. */
  chunkGapTimeoutMs?: number;
  /** The agent's own tools (settings.tools), offered to the session next to end_call. */
  tools: ToolCaller | null;
}

export interface RealtimeConversationOptions extends RealtimeSessionPlan, CallActions {
  rtp: RtpSession;
  /** The call's usage, for its cost. */
  usage: UsageMeter;
  /** Only for the extraction at the end; the session does the talking. */
  brain: AgentBrain;
  logger: Logger;
  silenceTimeoutMs: number;
  maxDurationMs: number;
  voicemail: VoicemailPolicy;
  /** Judges the callee's frames for the answering-machine decision (20 ms frames). */
  vad?: VoiceActivityDetector;
  apologyTts: TextToSpeech;
  providerFailures: ProviderFailureLog;
}

/** One reply item of the session as the callee hears it. */
interface AgentItem {
  itemId: string;
  startMs: number;
  /** Audio handed to RTP so far, in ms. */
  sentMs: number;
  plays: Promise<PlaybackResult>[];
  text: string | null;
  /** Set when a barge-in cut it: what had been played, in ms. */
  cutAtMs: number | null;
}

/**
 * The voice pipeline of an answered call whose agent is one speech-to-speech session: callee RTP
 * goes to the session as it arrives, the session's audio is paced out over RTP, its turn detection
 * drives barge-in (queued audio flushed, the item truncated to what was played), its transcripts and
 * tool calls become the transcript and the hang-up. A session that cannot open or fails mid-call
 * gets the offline apology and `provider_error`, as a stage with no working provider does.
 */
export class RealtimeConversation {
  private readonly recorder: CallRecorder;
  private readonly answering: AnsweringMachineHandling;
  /** With voicemail.wait_for_decision: the session is open and the greeting waits for the decision. */
  private greetingHeld = false;
  private readonly transcript: TranscriptEntry[] = [];
  /**
   * Each callee turn's figures, as the stage pipeline's: voice-to-voice from the callee's last
   * audible sample (not the vendor's speech_stopped, which comes its silence window later) to the
   * first audible sample of the reply, both on the recording's clock.
   */
  private readonly timeline = new TurnTimeline();
  /** The callee's last audible sample so far (call clock); -1 before any. */
  private lastAudibleCalleeMs = -1;
  /** When the vendor ended the callee's previous turn (call clock). */
  private previousTurnEndMs = -1;
  private readonly items: AgentItem[] = [];
  private session: SpeechToSpeechSession | null = null;
  private answeredBy: AnsweredBy = 'unknown';
  private calleeSpeaking = false;
  private calleeSpeechStartMs = 0;
  private calleeSpeechEndMs = 0;
  private silenceTimer: NodeJS.Timeout | null = null;
  private bargeIns = 0;
  private ended = false;
  private hangingUp = false;
  private endingAfterReply: AgentEnding | null = null;
  private replyTimer: NodeJS.Timeout | null = null;
  /** What the session owes the callee now: a reply's first audio, the rest of it, or nothing. */
  private replyOwed: 'first_audio' | 'rest' | null = null;
  /** Whether a response is in progress: what callwright asks for itself waits for it. */
  private readonly responses = new RealtimeResponses();
  private readonly onAudio = (samples: Int16Array) => this.handleCalleeFrame(samples);
  private readonly onOutgoing = (samples: Int16Array) => this.handleAgentFrame(samples);

  constructor(private readonly options: RealtimeConversationOptions) {
    this.recorder = new CallRecorder(options.maxDurationMs);
    this.answering = new AnsweringMachineHandling({
      policy: options.voicemail,
      logger: options.logger,
      onDecision: ({ answeredBy }) => {
        if (answeredBy !== 'unknown') this.answeredBy = answeredBy;
        this.options.onAnsweredBy?.(answeredBy);
        if (answeredBy !== 'machine') this.greet();
      },
      silenceAgent: () => {
        // The session may still answer the greeting: nothing of it is played from now on.
        this.hangingUp = true;
        this.options.rtp.clear();
      },
      leaveMessage: (message) => {
        this.endingAfterReply = 'voicemail';
        this.askForReply(`Leave this voicemail message, saying exactly, word for word: "${message}"`);
      },
      hangUp: () => this.options.hangUp('voicemail'),
    });
  }

  start(): void {
    const { rtp } = this.options;
    rtp.on('audio', this.onAudio);
    rtp.on('outgoingAudio', this.onOutgoing);
    this.armSilenceTimer();
    this.options.speechToSpeech
      .open(this.options.session, (event) => this.handleEvent(event))
      .then((session) => {
        if (this.ended) return session.close();
        this.session = session;
        this.greetingHeld = true;
        if (!this.options.voicemail.waitForDecision) this.greet();
        else setTimeout(() => this.greet(), decisionWaitMaxMs).unref();
      })
      .catch((error: unknown) => {
        this.options.logger.warn({ err: error }, 'the speech-to-speech session did not open');
        this.fail(
          error instanceof ProviderError ? error : new ProviderError(this.options.provider, String(error)),
        );
      });
  }

  /** The session's first reply, once (held for the answering-machine decision when so configured). */
  private greet(): void {
    if (!this.greetingHeld || this.ended || this.answering.machine) return;
    this.greetingHeld = false;
    const { firstMessage } = this.options;
    this.askForReply(
      firstMessage ? `Greet the callee by saying exactly, word for word: "${firstMessage}"` : undefined,
    );
  }

  async finish(): Promise<ConversationResult> {
    this.ended = true;
    this.responses.done();
    const { rtp } = this.options;
    rtp.off('audio', this.onAudio);
    rtp.off('outgoingAudio', this.onOutgoing);
    if (this.silenceTimer) clearTimeout(this.silenceTimer);
    if (this.replyTimer) clearTimeout(this.replyTimer);
    this.session?.close();
    await this.settleItems();
    return conversationResult({
      brain: this.options.brain,
      logger: this.options.logger,
      transcript: this.transcript,
      answeredBy: this.answeredBy,
      recorder: this.recorder,
      timeline: this.timeline,
      bargeIns: this.bargeIns,
      bargeInStopsMs: [],
      dtmfReceived: '',
      providerFailures: this.options.providerFailures,
      extraMetrics: { answering_machine: answeringMetrics(this.answering.decision) },
    });
  }

  private nowMs(): number {
    return this.recorder.elapsedMs;
  }

  private handleCalleeFrame(samples: Int16Array): void {
    if (this.ended) return;
    const frameStartMs = this.recorder.elapsedMs;
    this.recorder.addCalleeFrame(samples);
    const lastLoud = lastAudibleIndex(samples);
    if (lastLoud >= 0) this.lastAudibleCalleeMs = frameStartMs + (lastLoud + 1) / 8;
    this.answering.pushFrame(samples, () => this.frameIsSpeech(samples), this.nowMs());
    this.session?.pushAudio(samples);
  }

  /** The voice activity detector's verdict; without one, a frame louder than about −36 dBFS. */
  private frameIsSpeech(samples: Int16Array): boolean {
    const { vad } = this.options;
    if (vad && samples.length === vad.frameDurationMs * 8) return vad.isSpeech(samples);
    let sum = 0;
    for (const sample of samples) sum += sample * sample;
    return Math.sqrt(sum / Math.max(1, samples.length)) > 500;
  }

  private handleAgentFrame(samples: Int16Array): void {
    this.recorder.addAgentFrame(samples);
    this.timeline.agentFrame(samples, Math.max(0, this.recorder.elapsedMs - 20));
  }

  private handleEvent(event: SpeechToSpeechEvent): void {
    if (this.ended) return;
    switch (event.type) {
      case 'speech_started':
        this.calleeSpeaking = true;
        this.calleeSpeechStartMs = this.nowMs();
        // The callee speaks again: whatever was owed waits for the end of their turn.
        this.replyArrived();
        this.armSilenceTimer();
        if (this.options.rtp.queuedMs > 0 && !this.answering.machine && !this.hangingUp) this.bargeIn();
        return;
      case 'speech_stopped':
        this.calleeSpeaking = false;
        this.calleeSpeechEndMs = this.nowMs();
        // The turn is timed from the callee's last audible sample before the vendor's decision.
        // (The vendor hears speech start late too: any audible sample since the turn before counts.)
        this.timeline.turnEnded(
          this.lastAudibleCalleeMs > this.previousTurnEndMs
            ? this.lastAudibleCalleeMs
            : this.calleeSpeechEndMs,
          this.calleeSpeechEndMs,
          'unknown',
        );
        this.previousTurnEndMs = this.calleeSpeechEndMs;
        this.armSilenceTimer();
        // The vendor's turn detection answers the turn it just ended: the reply is owed now.
        if (!this.hangingUp && !this.answering.machine) this.armReplyTimer();
        return;
      case 'callee_transcript': {
        const text = event.text.trim();
        if (!text) return;
        this.answering.noteWords(text, this.nowMs());
        // Words in answer to the agent: a person, unless the detector decided otherwise — told to
        // the detector, as the pipeline does, so the metrics and call.answered say what the record does.
        this.answering.noteReply(this.nowMs());
        if (this.answeredBy === 'unknown') this.answeredBy = 'human';
        this.addTranscriptLine({
          role: 'callee',
          text,
          start_ms: Math.round(this.calleeSpeechStartMs),
          end_ms: Math.round(Math.max(this.calleeSpeechStartMs, this.calleeSpeechEndMs)),
        });
        return;
      }
      case 'agent_audio':
        this.responses.started();
        this.replyStreaming();
        this.play(event.itemId, event.samples);
        return;
      case 'agent_transcript': {
        const item = this.items.find((candidate) => candidate.itemId === event.itemId);
        if (item) item.text = event.text;
        else this.items.push({ ...this.newItem(event.itemId), text: event.text });
        void this.settleItems();
        return;
      }
      case 'tool_call':
        this.responses.started();
        this.handleToolCall(event.callId, event.name, event.arguments);
        return;
      case 'response_done':
        this.responses.done();
        this.replyArrived();
        for (const item of this.items) item.text ??= '';
        void this.settleItems();
        if (this.endingAfterReply) this.hangUpAfterPlayback(this.endingAfterReply);
        return;
      case 'failed':
        this.fail(event.error);
        return;
      case 'usage': {
        const { usage, model } = this.options;
        usage.add('realtime', 'openai', model, 'input_tokens', event.inputTextTokens);
        usage.add('realtime', 'openai', model, 'input_audio_tokens', event.inputAudioTokens);
        usage.add('realtime', 'openai', model, 'output_tokens', event.outputTextTokens);
        usage.add('realtime', 'openai', model, 'output_audio_tokens', event.outputAudioTokens);
        return;
      }
    }
  }

  /** Asks the session for a reply that must start within the first-audio timeout. */
  private askForReply(instructions?: string): void {
    this.responses.started();
    this.armReplyTimer();
    this.session?.respond(instructions);
  }

  /** A reply owed that brings no audio within the first-audio timeout fails the session. */
  private armReplyTimer(): void {
    if (this.replyTimer) clearTimeout(this.replyTimer);
    this.replyOwed = 'first_audio';
    this.replyTimer = setTimeout(() => {
      this.fail(
        new ProviderError(
          this.options.provider,
          `no reply audio within ${this.options.firstAudioTimeoutMs} ms`,
          { kind: 'timeout' },
        ),
      );
    }, this.options.firstAudioTimeoutMs);
    this.replyTimer.unref();
  }

  /**
   * Audio of an owed reply came: the rest must follow without a gap longer than the chunk gap, until
   * the response is done (a session that stops mid-reply with its socket open fails).
   */
  private replyStreaming(): void {
    if (this.replyOwed === null) return;
    if (this.replyTimer) clearTimeout(this.replyTimer);
    this.replyOwed = 'rest';
    const gapMs = this.options.chunkGapTimeoutMs;
    if (gapMs === undefined) {
      this.replyTimer = null;
      return;
    }
    this.replyTimer = setTimeout(() => {
      this.fail(
        new ProviderError(this.options.provider, `the reply went quiet for ${gapMs} ms`, { kind: 'stall' }),
      );
    }, gapMs);
    this.replyTimer.unref();
  }

  /** Nothing is owed any more (the response is done, or the callee speaks again). */
  private replyArrived(): void {
    if (this.replyTimer) clearTimeout(this.replyTimer);
    this.replyTimer = null;
    this.replyOwed = null;
  }

  private newItem(itemId: string): AgentItem {
    return {
      itemId,
      startMs: this.nowMs() + this.options.rtp.queuedMs,
      sentMs: 0,
      plays: [],
      text: null,
      cutAtMs: null,
    };
  }

  private play(itemId: string, samples: Int16Array): void {
    if (this.hangingUp && !this.endingAfterReply) return;
    // A reply that began while the callee is already speaking would talk over them.
    if (this.calleeSpeaking && !this.answering.machine) return;
    let item = this.items.find((candidate) => candidate.itemId === itemId);
    if (!item) {
      item = this.newItem(itemId);
      this.items.push(item);
    }
    if (item.cutAtMs !== null) return;
    item.sentMs += samples.length / 8;
    item.plays.push(this.options.rtp.play(samples));
  }

  /** The callee talks over the agent: its audio stops now and the session forgets what was not heard. */
  private bargeIn(): void {
    this.bargeIns++;
    const { discardedMs } = this.options.rtp.clear();
    const item = this.items.at(-1);
    if (!item || item.cutAtMs !== null) return;
    item.cutAtMs = Math.max(0, item.sentMs - discardedMs);
    this.session?.truncate(item.itemId, item.cutAtMs);
  }

  private handleToolCall(callId: string, name: string, argumentsJson: string): void {
    const { options } = this;
    runRealtimeTool(
      {
        logger: options.logger,
        tools: options.tools,
        noteEvent: (event, text) => this.noteEvent(event, text),
        answer: (id, output, replyExpected, instructions) =>
          void this.responses.idle().then(() => {
            if (this.ended) return;
            // The answer goes back and a reply is asked for: it must bring audio in time.
            this.responses.started();
            if (replyExpected) this.armReplyTimer();
            this.session?.sendToolResult(id, output, instructions);
          }),
        say: async (text, stillWanted) => {
          await this.responses.idle();
          if (this.ended || !stillWanted()) return;
          this.askForReply(sayExactly(text));
          await this.responses.idle();
        },
        played: () => this.settleItems(),
        hangUpAfterPlayback: (ending) => this.hangUpAfterPlayback(ending),
        hangUp: (ending) => options.hangUp(ending),
        leaveVoicemail: (message) => {
          this.answeredBy = 'machine';
          this.answering.leaveVoicemail(this.nowMs(), message);
        },
        transfer: options.transfer,
        addToDoNotCall: options.addToDoNotCall,
        hasEnded: () => this.ended,
      },
      callId,
      name,
      argumentsJson,
    );
  }

  /** Hangs up once every reply item's audio has been played. */
  private hangUpAfterPlayback(ending: AgentEnding): void {
    this.hangingUp = true;
    void this.settleItems().then(() => {
      if (!this.ended) this.options.hangUp(ending);
    });
  }

  /** Writes each reply whose audio has finished playing to the transcript, in order. */
  private async settleItems(): Promise<void> {
    while (this.items.length > 0) {
      const item = this.items[0] as AgentItem;
      const results = await Promise.all(item.plays);
      if (this.items[0] !== item) continue;
      if (item.text === null && !this.ended) return;
      this.items.shift();
      const playedMs = results.reduce((sum, result) => sum + result.playedMs, 0);
      const durationMs = results.reduce((sum, result) => sum + result.durationMs, 0);
      const interrupted = item.cutAtMs !== null || results.some((result) => result.interrupted);
      const text = item.text ?? '';
      const said = interrupted ? heardPart(text, durationMs > 0 ? playedMs / durationMs : 0) : text;
      if (said)
        this.addTranscriptLine({
          role: 'agent',
          text: said,
          start_ms: Math.round(item.startMs),
          end_ms: Math.round(item.startMs + playedMs),
        });
    }
  }

  /** The session cannot go on: the offline apology, then `provider_error`. */
  private fail(error: ProviderError): void {
    if (this.ended || (this.hangingUp && !this.endingAfterReply)) return;
    this.replyArrived();
    this.responses.done();
    this.hangingUp = true;
    this.endingAfterReply = null;
    this.options.providerFailures.note('realtime', this.options.provider, error);
    this.session?.close();
    this.options.rtp.clear();
    void (async () => {
      try {
        const startMs = this.nowMs();
        for await (const chunk of this.options.apologyTts.synthesize(providerApology, { voice: 'kal' }))
          await this.options.rtp.play(chunk.samples);
        this.addTranscriptLine({
          role: 'agent',
          text: providerApology,
          start_ms: Math.round(startMs),
          end_ms: Math.round(this.nowMs()),
        });
      } catch (apologyError) {
        this.options.logger.warn({ err: apologyError }, 'the apology could not be said');
      } finally {
        if (!this.ended) this.options.hangUp('provider_error');
      }
    })();
  }

  private noteEvent(event: TranscriptEvent, text: string): void {
    const atMs = Math.round(this.nowMs());
    this.addTranscriptLine({
      role: 'agent',
      text,
      start_ms: atMs,
      end_ms: atMs,
      event,
    });
  }

  private addTranscriptLine(line: TranscriptEntry): void {
    this.transcript.push(line);
    if (!this.ended) this.options.onTranscriptChange?.([...this.transcript]);
  }

  private armSilenceTimer(): void {
    if (this.silenceTimer) clearTimeout(this.silenceTimer);
    if (this.ended) return;
    this.silenceTimer = setTimeout(() => {
      if (this.ended) return;
      if (this.calleeSpeaking || this.options.rtp.queuedMs > 0) {
        this.armSilenceTimer();
        return;
      }
      this.options.hangUp('silence_timeout');
    }, this.options.silenceTimeoutMs);
    this.silenceTimer.unref();
  }
}
