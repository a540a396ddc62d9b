import type { AnsweredBy } from '../domain/callStatus.js';
import type { TranscriptEntry } from '../domain/records.js';
import { defaultTurnTaking, type TurnTakingSettings } from '../domain/turnTakingSettings.js';
import type { Logger } from '../logger.js';
import { InbandDtmfDetector, lastAudibleIndex, type RtpSession } from '../telephony/rtp/index.js';
import { AgentReplies } from './agentReplies.js';
import { AgentSpeaker, type SpeechPrefetch } from './agentSpeaker.js';
import { AnsweringMachineHandling, decisionWaitMaxMs, type VoicemailPolicy } from './answeringMachine.js';
import { answeringMetrics } from './answeringMachineDetector.js';
import { BargeInStopWatch } from './bargeInStopWatch.js';
import type { AgentBrain } from './brains/types.js';
import { CalleeUtterance } from './calleeUtterance.js';
import { CallRecorder } from './callRecorder.js';
import { type CallActions, type ConversationResult, conversationResult } from './conversationResult.js';
import { EchoGuard, echoMetrics } from './echoGuard.js';
import { IvrLoopGuard } from './ivrLoopGuard.js';
import { PreemptiveReplies } from './preemptiveReplies.js';
import {
  AudioTurnDetector,
  type ProviderFailureLog,
  type SpeechToText,
  StageExhaustedError,
  type TextToSpeech,
  type TurnEvent,
  type VoiceActivityDetector,
} from './providers/index.js';
import { TurnContinuation } from './turnContinuation.js';
import { backchannelPhrases, interruptingWords } from './turnShape.js';
import { TurnTimeline } from './turnTimeline.js';

export {
  type AgentEnding,
  type ConversationResult,
  providerApology,
} from './conversationResult.js';

export interface ConversationOptions extends CallActions {
  rtp: RtpSession;
  brain: AgentBrain;
  tts: TextToSpeech;
  ttsVoice?: string;
  stt: SpeechToText;
  vad: VoiceActivityDetector;
  logger: Logger;
  silenceTimeoutMs: number;
  maxDurationMs: number;
  /** How the agent takes turns (end-of-turn waits, interruptions, greeting, quiet line). */
  turnTaking?: TurnTakingSettings;
  /** A phone-menu prompt heard this often ends the call `ivr_loop`; 0 or absent: never. */
  ivrMaxPromptRepeats?: number;
  /** `inband`: keys sent and heard as tones in the audio even where RFC 4733 was negotiated. */
  dtmf?: 'rfc4733' | 'inband';
  /** Speech synthesised before the answer (the greeting), spoken without waiting for the voice. */
  prefetch?: SpeechPrefetch;
  voicemail: VoicemailPolicy;
  /** The offline voice, for the apology when every provider of a stage has failed. */
  apologyTts: TextToSpeech;
  /** The call's provider failures (the fallback providers write them), for its metrics. */
  providerFailures: ProviderFailureLog;
}

const preRollFrames = 15;
/** How long a callee's words still in recognition when the call ends may take to be written down. */
const lastWordsTimeoutMs = 3_000;
/** With wait_for_callee: the agent speaks first after this much silence from a callee who says nothing. */
const waitForCalleeMaxMs = 4_000;
const silentFrame = new Int16Array(160);
/** The transcript's text for an answer the recogniser heard but rejected (FinalTranscript.unclear). */
const unclearSpeechText = '[unclear]';
/** Nothing audible from the callee for this long is quiet enough to begin a reply ahead. */
const quietAfterMs = 40;
/** Speech over the agent longer than this interrupts whatever its words (no backchannel is). */
const backchannelMaxMs = 1_600;

/**
 * The voice pipeline of one answered call: received frames → VAD and adaptive end of turn → STT
 * → brain → TTS → paced RTP. Interruptions: speech over the agent that lasts the agent's minimum
 * cuts its audio at once (queued RTP flushed) and cancels the reply, shorter sounds (a backchannel,
 * a cough) do not, and the agent never starts a sentence over a callee who is talking. Also: DTMF,
 * answering-machine beeps, "are you still there?", the recording, the transcript and each turn's
 * latency waterfall.
 */
export class Conversation {
  private readonly recorder: CallRecorder;
  private readonly turns: AudioTurnDetector;
  private readonly answering: AnsweringMachineHandling;
  /** Keys pressed as tones: heard on a line without RFC 4733, or always with settings.dtmf inband. */
  private inbandKeys: InbandDtmfDetector | null = null;
  private decisionWaitOver = false;
  private readonly transcript: TranscriptEntry[] = [];
  private readonly preRoll: Int16Array[] = [];
  private readonly timeline = new TurnTimeline();
  private readonly speaker: AgentSpeaker;
  private readonly replies: AgentReplies;
  /** Replies to callee turns: begun on the partial words as the callee goes quiet (preemptive). */
  private readonly turnReplies: PreemptiveReplies;
  /** A pause inside one answer is one turn. */
  private readonly continuation: TurnContinuation;
  private readonly settings: TurnTakingSettings;
  private utterance: CalleeUtterance | null = null;
  private readonly ivrLoop: IvrLoopGuard;
  /** Recognitions of ended turns still running: the call's end waits for them (the last words). */
  private readonly recognitions = new Set<Promise<void>>();
  private answeredBy: AnsweredBy = 'unknown';
  private silenceTimer: NodeJS.Timeout | null = null;
  private stillThereAsked = 0;
  private bargeIns = 0;
  private backchannels = 0;
  private turnsEndedByRecognizer = 0;
  /** For each barge-in: from the decision to interrupt to the end of the agent's last audible frame. */
  private readonly stopWatch = new BargeInStopWatch();
  /** The agent's own voice coming back from the callee's side is not the callee speaking. */
  private readonly echoGuard = new EchoGuard();
  /** For each barge-in: from the start of the callee's speech to the decision. */
  private readonly bargeInDecisionsMs: number[] = [];
  private greeted = false;
  private dtmfReceived = '';
  private ended = false;
  private lastFramePerfMs = performance.now();
  private lastAudibleCalleeMs = -1;
  private readonly onAudio = (samples: Int16Array, kind: string) => this.handleCalleeFrame(samples, kind);
  private readonly onOutgoing = (samples: Int16Array) => this.handleAgentFrame(samples);
  private readonly onDtmf = ({ digit }: { digit: string }) => this.handleDtmf(digit);

  constructor(private readonly options: ConversationOptions) {
    this.settings = options.turnTaking ?? defaultTurnTaking;
    this.ivrLoop = new IvrLoopGuard(options.ivrMaxPromptRepeats ?? 0);
    this.recorder = new CallRecorder(options.maxDurationMs);
    this.turns = new AudioTurnDetector(options.vad, {
      silenceWindowMs: this.settings.waitMs,
      minSpeechDurationMs: 100,
    });
    this.speaker = new AgentSpeaker({
      rtp: options.rtp,
      tts: options.tts,
      voice: options.ttsVoice,
      logger: options.logger,
      nowMs: () => this.nowMs(),
      addLine: (line) => this.addTranscriptLine(line),
      ...(options.prefetch ? { prefetch: options.prefetch } : {}),
    });
    this.replies = new AgentReplies({
      brain: options.brain,
      speaker: this.speaker,
      rtp: options.rtp,
      timeline: this.timeline,
      logger: options.logger,
      apologyTts: options.apologyTts,
      providerFailures: options.providerFailures,
      hangUp: options.hangUp,
      nowMs: () => this.nowMs(),
      hasEnded: () => this.ended,
      onReplyOver: () => this.armSilenceTimer(),
      transfer: options.transfer,
      dtmfInband: options.dtmf === 'inband',
      addToDoNotCall: options.addToDoNotCall,
      leaveVoicemail: (message) => {
        // The agent judged it a recording: so the call reports it (the decision says machine).
        this.answering.leaveVoicemail(this.nowMs(), message);
      },
      noteEvent: (event, text) => {
        const atMs = Math.round(this.nowMs());
        this.addTranscriptLine({ role: 'agent', text, start_ms: atMs, end_ms: atMs, event });
      },
    });
    this.turnReplies = new PreemptiveReplies({
      brain: options.brain,
      replies: this.replies,
      timeline: this.timeline,
      logger: options.logger,
    });
    this.continuation = new TurnContinuation({
      timeline: this.timeline,
      turnReplies: this.turnReplies,
      speaker: this.speaker,
      rtp: options.rtp,
      maxWaitMs: this.settings.maxWaitMs,
      transcript: this.transcript,
    });
    options.brain.onFirstToken = () => this.timeline.mark('llm_first_token', this.nowMs());
    this.answering = new AnsweringMachineHandling({
      policy: options.voicemail,
      logger: options.logger,
      onDecision: ({ answeredBy }) => {
        // The latest decision (an unknown corrected by a reply, a person by a beep) is the call's.
        this.answeredBy = answeredBy;
        this.options.onAnsweredBy?.(answeredBy);
        if (answeredBy !== 'machine') this.greet();
      },
      silenceAgent: () => {
        this.replies.abort();
        this.options.rtp.clear();
      },
      leaveMessage: (message) => this.replies.say(message, 'voicemail'),
      hangUp: () => this.options.hangUp('voicemail'),
    });
  }

  start(): void {
    const { rtp } = this.options;
    rtp.on('audio', this.onAudio);
    rtp.on('outgoingAudio', this.onOutgoing);
    rtp.on('dtmf', this.onDtmf);
    if (this.options.dtmf === 'inband' || !rtp.carriesDtmfEvents) this.inbandKeys = new InbandDtmfDetector();
    if (this.options.voicemail.waitForDecision) {
      // The decision (a person, or nobody said anything) opens the call; a machine gets no greeting.
      setTimeout(() => {
        this.decisionWaitOver = true;
        this.greet();
      }, decisionWaitMaxMs).unref();
    } else if (this.settings.waitForCallee) {
      // The callee's "hello?" opens the call; a callee who says nothing is greeted anyway.
      setTimeout(() => this.greet(), waitForCalleeMaxMs).unref();
    } else this.greet();
    this.armSilenceTimer();
  }

  /** Shutdown: the agent finishes the sentence it is speaking and starts no other (AgentSpeaker). */
  windDown(): Promise<void> {
    return this.speaker.windDown();
  }

  private greet(): void {
    if (this.greeted || this.ended || this.answering.machine) return;
    if (this.options.voicemail.waitForDecision && !this.answering.decision && !this.decisionWaitOver) return;
    this.greeted = true;
    this.replies.run((signal) => this.options.brain.start(signal));
  }

  /** Stops listening and speaking (the call has ended) and gathers what the call produced. */
  async finish(): Promise<ConversationResult> {
    const { rtp, brain } = this.options;
    // The callee's words up to the hang-up are recognised and kept, not dropped with the line.
    const inFlight = this.utterance;
    this.utterance = null;
    if (inFlight) this.recognize(inFlight, this.nowMs(), { respond: false });
    this.ended = true;
    rtp.off('audio', this.onAudio);
    rtp.off('outgoingAudio', this.onOutgoing);
    rtp.off('dtmf', this.onDtmf);
    this.turnReplies.drop();
    this.replies.abort();
    if (this.silenceTimer) clearTimeout(this.silenceTimer);
    // What the agent was saying ends here; its line is written as far as it was played.
    rtp.clear();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.recognitions, this.replies.lastLine]),
      new Promise((resolve) => {
        timer = setTimeout(resolve, lastWordsTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    this.stopWatch.close();
    this.transcript.sort((a, b) => a.start_ms - b.start_ms);
    return conversationResult({
      brain,
      logger: this.options.logger,
      transcript: this.transcript,
      answeredBy: this.answeredBy,
      recorder: this.recorder,
      timeline: this.timeline,
      bargeIns: this.bargeIns,
      bargeInStopsMs: this.stopWatch.stopsMs,
      extraMetrics: {
        barge_in_decision_ms: this.bargeInDecisionsMs,
        backchannels_ignored: this.backchannels,
        echo: echoMetrics(this.echoGuard.stats()),
        still_there_prompts: this.stillThereAsked,
        answering_machine: answeringMetrics(this.answering.decision),
      },
      dtmfReceived: this.dtmfReceived,
      providerFailures: this.options.providerFailures,
      turnsEndedByRecognizer: this.turnsEndedByRecognizer,
    });
  }

  /** The call's clock (ms from the answer), between frames too. */
  private nowMs(): number {
    return this.recorder.elapsedMs + Math.min(20, performance.now() - this.lastFramePerfMs);
  }

  private agentActive(): boolean {
    return this.replies.active || this.options.rtp.queuedMs > 0;
  }

  private handleCalleeFrame(samples: Int16Array, kind: string): void {
    if (this.ended) return;
    this.lastFramePerfMs = performance.now();
    this.stopWatch.closeAfterWindow(this.lastFramePerfMs);
    const frameStartMs = this.recorder.elapsedMs;
    this.recorder.addCalleeFrame(samples);
    // Concealed gaps and the agent's own echo reach VAD and STT as silence; the shared zero frame
    // is never written to.
    const echo = this.echoGuard.calleeFrame(samples, kind !== 'silence');
    const frame =
      kind !== 'silence' && !echo
        ? samples
        : samples.length === silentFrame.length
          ? silentFrame
          : new Int16Array(samples.length);
    if (kind !== 'silence' && !echo) {
      const lastLoud = lastAudibleIndex(frame);
      if (lastLoud >= 0) this.lastAudibleCalleeMs = frameStartMs + (lastLoud + 1) / 8;
    }
    const utterance = this.utterance;
    if (utterance) utterance.pushAudio(frame);
    else {
      this.preRoll.push(frame);
      if (this.preRoll.length > preRollFrames) this.preRoll.shift();
    }
    const key = this.inbandKeys?.push(frame);
    if (key) this.handleDtmf(key);
    const turnEvents = this.turns.pushAudio(frame);
    this.answering.pushFrame(frame, () => this.turns.lastFrameSpeech, this.recorder.elapsedMs);
    if (!this.greeted && this.answering.silentSoFar(this.recorder.elapsedMs)) {
      this.decisionWaitOver = true;
      this.greet();
    }
    for (const event of turnEvents) this.handleTurnEvent(event);
    const current = this.utterance;
    if (!current) {
      this.continuation.frameBetweenTurns(this.turns.lastFrameSpeech, this.answering.machine);
      return;
    }
    if (!this.answering.decision && current.latest) this.answering.noteWords(current.latest, this.nowMs());
    if (current.overlapped && !current.bargedIn) this.considerInterruption(current);
    // Preemptive generation: the reply to the words so far begins as the callee goes quiet (the
    // VAD hears silence, or nothing audible has come for two frames — the VAD's hangover is longer).
    if (!current.overlapped && !this.answering.machine && this.greeted) {
      const quiet =
        this.turns.silentMs > 0 || this.recorder.elapsedMs - this.lastAudibleCalleeMs >= quietAfterMs;
      this.turnReplies.follow(current.words, quiet);
    }
    // A complete answer: its short wait counts from the last audible sample, not from the end of
    // the VAD's hangover after it. (Not between frames: the audio after the last frame is unheard.)
    if (
      current.shape === 'complete' &&
      !current.overlapped &&
      this.turns.silentMs > 0 &&
      this.recorder.elapsedMs - this.lastAudibleCalleeMs >= this.settings.minWaitMs
    ) {
      const early = this.turns.forceEnd();
      if (early) this.handleTurnEvent(early);
      return;
    }
    if (this.turns.turnElapsedMs >= this.settings.maxUtteranceMs) {
      // A monologue or a noise that never pauses: the agent takes the turn.
      current.endedBy = 'max_utterance';
      const forced = this.turns.forceEnd();
      if (forced) this.handleTurnEvent(forced);
    }
  }

  /** Speech over the agent: an interruption once it has lasted the minimum, else a backchannel. */
  private considerInterruption(utterance: CalleeUtterance): void {
    if (!this.agentActive()) {
      // The agent finished while the callee spoke: the speech is simply their turn.
      utterance.overlapped = false;
      this.speaker.releaseHold();
      return;
    }
    if (!this.settings.interruptionsEnabled || !this.replies.interruptible) return;
    const voicedMs = this.turns.voicedMs;
    if (voicedMs < this.settings.interruptionMinSpeechMs) return;
    // Words decide: a "mhm", a "yeah okay" or a knock stays a backchannel until the recogniser hears
    // the minimum number of words, not all of them backchannels — or until it is longer than any
    // backchannel is.
    if (
      voicedMs < backchannelMaxMs &&
      !interruptingWords(utterance.latest, this.settings.interruptionMinWords)
    )
      return;
    utterance.bargedIn = true;
    this.bargeIns++;
    const decidedAtMs = this.nowMs();
    this.bargeInDecisionsMs.push(Math.round(decidedAtMs - utterance.speechStartMs));
    this.replies.cutByCallee();
    this.options.rtp.clear();
    this.speaker.releaseHold();
    this.stopWatch.decided(performance.now());
    this.timeline.interrupted(decidedAtMs);
  }

  private handleAgentFrame(samples: Int16Array): void {
    this.echoGuard.agentFrame(samples);
    this.recorder.addAgentFrame(samples);
    this.stopWatch.agentFrame(samples, performance.now());
    this.timeline.agentFrame(samples, Math.max(0, this.recorder.elapsedMs - 20));
  }

  private handleTurnEvent(event: TurnEvent): void {
    if (event.type === 'speech_start') {
      this.armSilenceTimer();
      this.stillThereAsked = 0;
      // A reply follows the turn: a voice that connects per reply connects now, not after it.
      this.options.tts.prepare?.(this.options.ttsVoice ? { voice: this.options.ttsVoice } : {});
      // The callee goes on after a pause inside one answer, none of the reply to it heard yet: the
      // reply is taken back and this speech continues that turn (one turn, one reply).
      const continues = this.continuation.continuedTurn(event.speechStartMs, this.answering.machine);
      // A machine's greeting running on does not cut the voicemail message being left.
      const overlapped = !continues && this.agentActive() && !this.answering.machine;
      this.continuation.speechStarted(overlapped);
      if (overlapped) this.speaker.holdNewSpeech();
      const frames = [...this.preRoll];
      this.preRoll.length = 0;
      const expected = this.options.brain.expectedPhrases();
      // Over the agent, the grammar also holds the backchannels, so that a "mhm" is heard as one.
      const phrases = expected && overlapped ? [...new Set([...expected, ...backchannelPhrases])] : expected;
      const utterance = new CalleeUtterance({
        stt: this.options.stt,
        phrases,
        preRoll: frames,
        speechStartMs: event.speechStartMs,
        overlapped,
        settings: this.settings,
        setTurnWindow: (silenceMs) => {
          if (this.utterance === utterance) this.turns.setTurnWindow(silenceMs);
        },
        logger: this.options.logger,
      });
      utterance.continues = continues;
      this.utterance = utterance;
      return;
    }
    const utterance = this.utterance;
    this.utterance = null;
    if (!utterance) return;
    if (utterance.overlapped && !utterance.bargedIn && this.replies.holdsAction) {
      // Words over a transfer or a goodbye being announced: written down, but they undo nothing.
      this.speaker.releaseHold();
      this.recognize(utterance, event.detectedAtMs, { respond: false });
      return;
    }
    if (utterance.overlapped && !utterance.bargedIn && this.agentActive()) {
      // A backchannel ("mhm", "okay"), a cough or a passage that may not be cut: the agent goes on.
      this.backchannels++;
      this.answering.noteBackchannel(this.nowMs());
      this.speaker.releaseHold();
      utterance.discard();
      return;
    }
    this.speaker.releaseHold();
    if (utterance.recognizerEnded) this.turnsEndedByRecognizer++;
    // The moment the callee stopped: the last audible sample before the VAD's end of speech.
    const speechEndMs =
      this.lastAudibleCalleeMs > event.speechStartMs && this.lastAudibleCalleeMs <= event.speechEndMs + 20
        ? Math.min(this.lastAudibleCalleeMs, event.speechEndMs + 20)
        : event.speechEndMs;
    this.timeline.turnEnded(speechEndMs, event.detectedAtMs, utterance.endedBy ?? utterance.shape);
    // A phone menu's prompt is judged by ear as it ends (the first hearing counts too), not after
    // the recogniser's words, which differ each time and come late.
    const loop = this.ivrLoop.noteAudio(utterance.levelsDb);
    if (loop === 'tripped') {
      this.options.logger.info('the same phone-menu prompt again: ending the call');
      this.recognize(utterance, event.detectedAtMs, { respond: false });
      this.options.hangUp('ivr_loop');
      return;
    }
    // wait_for_callee: the callee's first words, whatever they were, open the call.
    const opening = !this.greeted;
    this.continuation.turnEnded(opening ? null : utterance, speechEndMs);
    if (opening) this.greet();
    this.recognize(utterance, event.detectedAtMs, { respond: !opening, loopByWords: loop === 'words' });
  }

  /** Finishes the utterance's recognition; writes what was heard; answers it unless the call ended. */
  private recognize(
    utterance: CalleeUtterance,
    endMs: number,
    { respond, loopByWords = false }: { respond: boolean; loopByWords?: boolean },
  ): void {
    const recognition = utterance
      .finish()
      .then(async (heard) => {
        this.timeline.mark('stt_final', this.nowMs());
        let text = heard.text.trim();
        if (text) this.answering.noteWords(text, this.nowMs());
        // Words the next utterance goes on with are that turn's (written and answered with it).
        if (utterance.superseded) return;
        const continued = utterance.continues;
        if (continued) text = await this.continuation.joinContinued(continued, text);
        if (text || heard.unclear) {
          // Words in answer to the agent: a person, unless the detector decided otherwise.
          this.answering.noteReply(this.nowMs());
          this.addTranscriptLine({
            role: 'callee',
            // Speech the recogniser rejected: an answer was given, its words are not known.
            text: text || unclearSpeechText,
            start_ms: Math.round((continued ?? utterance).speechStartMs),
            end_ms: Math.round(endMs),
          });
        }
        if (!respond || this.ended || (!text && !heard.unclear)) this.turnReplies.drop();
        if (!respond || this.ended) return;
        if (loopByWords && this.ivrLoop.noteWords(text)) {
          this.options.logger.info('the same phone-menu prompt again: ending the call');
          this.options.hangUp('ivr_loop');
          return;
        }
        this.armSilenceTimer();
        // Once a machine answered, the voicemail message is the whole reply: what the greeting
        // said is kept in the transcript but answers nothing (it would abort the message).
        if (this.answering.machine) {
          this.turnReplies.drop();
          return;
        }
        const unheard = this.replies.takeUnheard();
        if (!text && !heard.unclear && utterance.bargedIn && unheard) {
          // Only a sound cut the agent off: it picks up where the callee stopped hearing it.
          this.replies.resume(unheard);
          return;
        }
        const matchedPhrase = continued ? undefined : heard.matchedPhrase;
        this.turnReplies.answer({ text, ...(matchedPhrase ? { matchedPhrase } : {}) });
      })
      .catch((error: unknown) => {
        this.options.logger.warn({ err: error }, 'recognition failed');
        // No final transcript: a reply begun ahead on the partial words is never played.
        this.turnReplies.drop();
        // A vendor chain with nothing left ends the call; an offline engine's failure loses one turn.
        if (respond && error instanceof StageExhaustedError) this.replies.apologizeAndHangUp(error);
      })
      .finally(() => this.recognitions.delete(recognition));
    this.recognitions.add(recognition);
  }

  private handleDtmf(digit: string): void {
    if (this.ended) return;
    this.dtmfReceived += digit;
    const atMs = Math.round(this.nowMs());
    this.addTranscriptLine({ role: 'callee', text: digit, start_ms: atMs, end_ms: atMs, event: 'dtmf' });
    this.armSilenceTimer();
    this.turnReplies.drop();
    this.turnReplies.settleLatest();
    // A key pressed while the agent announces a transfer or its goodbye does not undo them.
    if (this.replies.holdsAction) return;
    this.replies.run((signal) => this.options.brain.onDtmf(digit, signal));
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
      // Only a silence on both sides counts: not while the agent talks or the callee is mid-turn.
      if (
        this.replies.active ||
        this.utterance ||
        this.recognitions.size > 0 ||
        this.options.rtp.queuedMs > 0
      ) {
        this.armSilenceTimer();
        return;
      }
      if (this.stillThereAsked < this.settings.stillThereCount && !this.answering.machine) {
        this.stillThereAsked++;
        this.replies.say(this.settings.stillThereText);
        return;
      }
      this.options.hangUp('silence_timeout');
    }, this.options.silenceTimeoutMs);
    this.silenceTimer.unref();
  }
}
