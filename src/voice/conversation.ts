import type { AnsweredBy } from '../domain/callStatus.js';
import type { TranscriptEntry } from '../domain/records.js';
import type { Logger } from '../logger.js';
import type { PlaybackResult, RtpSession } from '../telephony/rtp/index.js';
import { BeepDetector } from './beepDetector.js';
import type { AgentBrain, BrainAction } from './brains/types.js';
import { CallRecorder } from './callRecorder.js';
import {
  type AgentEnding,
  type ConversationResult,
  conversationResult,
  heardPart,
  providerApology,
} from './conversationResult.js';
import {
  AudioTurnDetector,
  ProviderError,
  type ProviderFailureLog,
  type SpeechToText,
  type SpeechToTextSession,
  StageExhaustedError,
  type TextToSpeech,
  type TurnEvent,
  type VoiceActivityDetector,
} from './providers/index.js';

export {
  type AgentEnding,
  type ConversationResult,
  providerApology,
} from './conversationResult.js';

export interface ConversationOptions {
  rtp: RtpSession;
  brain: AgentBrain;
  tts: TextToSpeech;
  ttsVoice?: string;
  stt: SpeechToText;
  vad: VoiceActivityDetector;
  logger: Logger;
  silenceTimeoutMs: number;
  maxDurationMs: number;
  /** Silence after speech that ends the callee's turn. */
  endOfTurnSilenceMs?: number;
  voicemail: { action: 'leave_message' | 'hang_up'; message: string | null };
  /** The offline voice, for the apology when every provider of a stage has failed. */
  apologyTts: TextToSpeech;
  /** The call's provider failures (the fallback providers write them), for its metrics. */
  providerFailures: ProviderFailureLog;
  /** Ends the call from the agent's side. */
  hangUp: (ending: AgentEnding) => void;
  /** Called with the whole transcript so far each time a line is added (for a live view). */
  onTranscriptChange?: (transcript: TranscriptEntry[]) => void;
}

/** A sentence of the agent's as the callee heard it. */
interface SpokenLine {
  said: string;
  interrupted: boolean;
}

const preRollFrames = 15;
/** Silence that ends a turn once the recogniser says the speech is over (its own endpointing waited too). */
const recognizerEndSilenceMs = 200;
const silentFrame = new Int16Array(160);

/**
 * The voice pipeline of one answered call: received frames → VAD and end-of-turn → STT → brain →
 * TTS → paced RTP, with barge-in (callee speech clears the agent's queued audio at once), DTMF to
 * the brain, answering-machine beeps, the silence timeout, the recording and the transcript.
 */
export class Conversation {
  private readonly recorder: CallRecorder;
  private readonly turns: AudioTurnDetector;
  private readonly beeps = new BeepDetector();
  private readonly transcript: TranscriptEntry[] = [];
  private readonly preRoll: Int16Array[] = [];
  private readonly latenciesMs: number[] = [];
  private stt: { session: Promise<SpeechToTextSession>; speechStartMs: number } | null = null;
  private response: AbortController | null = null;
  private answeredBy: AnsweredBy = 'unknown';
  private turnEndedAtMs: number | null = null;
  private silenceTimer: NodeJS.Timeout | null = null;
  private bargeIns = 0;
  private readonly silenceWindowMs: number;
  /** Turns that ended on the recogniser's end-of-speech signal, before the full silence window. */
  private turnsEndedByRecognizer = 0;
  /** For each barge-in: from the start of the callee's speech to the agent's audio being cut. */
  private readonly bargeInStopsMs: number[] = [];
  private dtmfReceived = '';
  private ended = false;
  private voicemailHandled = false;
  private apologizing = false;
  private readonly onAudio = (samples: Int16Array, kind: string) => this.handleCalleeFrame(samples, kind);
  private readonly onOutgoing = (samples: Int16Array) => this.handleAgentFrame(samples);
  private readonly onDtmf = ({ digit }: { digit: string }) => this.handleDtmf(digit);

  constructor(private readonly options: ConversationOptions) {
    this.recorder = new CallRecorder(options.maxDurationMs);
    this.silenceWindowMs = options.endOfTurnSilenceMs ?? 600;
    this.turns = new AudioTurnDetector(options.vad, {
      silenceWindowMs: this.silenceWindowMs,
      minSpeechDurationMs: 100,
    });
  }

  start(): void {
    const { rtp } = this.options;
    rtp.on('audio', this.onAudio);
    rtp.on('outgoingAudio', this.onOutgoing);
    rtp.on('dtmf', this.onDtmf);
    this.respond((signal) => this.options.brain.start(signal));
    this.armSilenceTimer();
  }

  /** Stops listening and speaking (the call has ended) and gathers what the call produced. */
  async finish(): Promise<ConversationResult> {
    this.ended = true;
    const { rtp, brain } = this.options;
    rtp.off('audio', this.onAudio);
    rtp.off('outgoingAudio', this.onOutgoing);
    rtp.off('dtmf', this.onDtmf);
    this.response?.abort();
    if (this.silenceTimer) clearTimeout(this.silenceTimer);
    const pending = this.stt;
    this.stt = null;
    if (pending) void pending.session.then((session) => session.close()).catch(() => undefined);
    return conversationResult({
      brain,
      logger: this.options.logger,
      transcript: this.transcript,
      answeredBy: this.answeredBy,
      recorder: this.recorder,
      latenciesMs: this.latenciesMs,
      bargeIns: this.bargeIns,
      bargeInStopsMs: this.bargeInStopsMs,
      dtmfReceived: this.dtmfReceived,
      providerFailures: this.options.providerFailures,
      turnsEndedByRecognizer: this.turnsEndedByRecognizer,
    });
  }

  private nowMs(): number {
    return this.recorder.elapsedMs;
  }

  private handleCalleeFrame(samples: Int16Array, kind: string): void {
    if (this.ended) return;
    this.recorder.addCalleeFrame(samples);
    // Concealed gaps reach VAD and STT as silence; the shared zero frame is never written to.
    const frame =
      kind !== 'silence'
        ? samples
        : samples.length === silentFrame.length
          ? silentFrame
          : new Int16Array(samples.length);
    if (!this.voicemailHandled && this.nowMs() < 60_000 && this.beeps.push(frame)) this.handleBeep();
    if (this.stt) void this.stt.session.then((session) => session.pushAudio(frame)).catch(() => undefined);
    else {
      this.preRoll.push(frame);
      if (this.preRoll.length > preRollFrames) this.preRoll.shift();
    }
    for (const event of this.turns.pushAudio(frame)) this.handleTurnEvent(event);
  }

  private handleAgentFrame(samples: Int16Array): void {
    this.recorder.addAgentFrame(samples);
    if (this.turnEndedAtMs !== null) {
      this.latenciesMs.push(performance.now() - this.turnEndedAtMs);
      this.turnEndedAtMs = null;
    }
  }

  private handleTurnEvent(event: TurnEvent): void {
    if (event.type === 'speech_start') {
      this.armSilenceTimer();
      // A reply follows the turn: a voice that connects per reply connects now, not after it.
      this.options.tts.prepare?.(this.options.ttsVoice ? { voice: this.options.ttsVoice } : {});
      // A machine's greeting running on does not cut the voicemail message being left.
      if (this.options.rtp.queuedMs > 0 && !this.voicemailHandled) {
        // Barge-in: the callee talks over the agent; its queued audio stops within a frame.
        this.bargeIns++;
        this.response?.abort();
        this.options.rtp.clear();
        // The cut takes effect at the next send slot, at most one 20 ms frame later.
        this.bargeInStopsMs.push(this.nowMs() - event.speechStartMs + 20);
      }
      const frames = [...this.preRoll];
      this.preRoll.length = 0;
      const phrases = this.options.brain.expectedPhrases();
      const session = this.options.stt.startSession(phrases ? { phrases } : {});
      const withPreRoll = session.then((opened) => {
        for (const frame of frames) opened.pushAudio(frame);
        // The recogniser heard the end of speech: the turn need not wait out the whole window —
        // unless it then hears more words (its next hypothesis is longer than the one it ended on).
        let endedOn: string | null = null;
        let latest = '';
        opened.onPartial((partial) => {
          latest = partial.text;
          if (endedOn !== null && latest.length > endedOn.length && this.stt?.session === withPreRoll) {
            endedOn = null;
            this.turns.cancelEarlyEnd();
          }
        });
        opened.onEndOfSpeech?.(() => {
          if (this.stt?.session !== withPreRoll) return;
          endedOn = latest;
          this.turns.allowEarlyEnd(recognizerEndSilenceMs);
        });
        return opened;
      });
      this.stt = { session: withPreRoll, speechStartMs: this.nowMs() - frames.length * 20 };
      withPreRoll.catch((error: unknown) => this.options.logger.warn({ err: error }, 'STT session failed'));
      return;
    }
    const current = this.stt;
    this.stt = null;
    if (!current) return;
    if (event.detectedAtMs - event.speechEndMs < this.silenceWindowMs) this.turnsEndedByRecognizer++;
    this.turnEndedAtMs = performance.now();
    const endMs = this.nowMs();
    void current.session
      .then(async (session) => {
        try {
          return await session.finish();
        } finally {
          session.close();
        }
      })
      .then((heard) => {
        if (this.ended) return;
        const text = heard.text.trim();
        if (text) {
          if (this.answeredBy === 'unknown') this.answeredBy = 'human';
          this.addTranscriptLine({ role: 'callee', text, start_ms: current.speechStartMs, end_ms: endMs });
        }
        this.armSilenceTimer();
        // Once a machine answered, the voicemail message is the whole reply: what the greeting
        // said is kept in the transcript but answers nothing (it would abort the message).
        if (this.voicemailHandled) return;
        const turn = { text, ...(heard.matchedPhrase ? { matchedPhrase: heard.matchedPhrase } : {}) };
        this.respond((signal) => this.options.brain.onCalleeTurn(turn, signal));
      })
      .catch((error: unknown) => {
        this.options.logger.warn({ err: error }, 'recognition failed');
        // A vendor chain with nothing left ends the call; an offline engine's failure loses one turn.
        if (error instanceof StageExhaustedError) this.apologizeAndHangUp(error);
      });
  }

  private handleDtmf(digit: string): void {
    if (this.ended) return;
    this.dtmfReceived += digit;
    this.armSilenceTimer();
    this.respond((signal) => this.options.brain.onDtmf(digit, signal));
  }

  private handleBeep(): void {
    this.voicemailHandled = true;
    this.answeredBy = 'machine';
    const { voicemail } = this.options;
    this.options.logger.info({ action: voicemail.action }, 'answering machine detected');
    if (voicemail.action === 'hang_up' || !voicemail.message) {
      this.response?.abort();
      this.options.hangUp('voicemail');
      return;
    }
    const message = voicemail.message;
    this.respond(async function* () {
      yield { type: 'say', text: message } satisfies BrainAction;
      yield { type: 'end_call' } satisfies BrainAction;
    }, 'voicemail');
  }

  /**
   * Runs one response, aborting the one before it. Sentences are synthesised as soon as the brain
   * gives them, while the ones before still play, so the audio stream stays full (no dead air of a
   * TTS first-byte time between sentences); a DTMF send or a hang-up waits for what is queued.
   */
  private respond(
    actions: (signal: AbortSignal) => AsyncIterable<BrainAction>,
    endingReason: AgentEnding = 'agent_hangup',
  ): void {
    if (this.apologizing) return;
    this.response?.abort();
    const controller = new AbortController();
    this.response = controller;
    const spoken: Promise<SpokenLine>[] = [];
    void (async () => {
      let speaking = false;
      try {
        for await (const action of actions(controller.signal)) {
          if (controller.signal.aborted || this.ended) return;
          if (action.type === 'say') {
            speaking = true;
            spoken.push((await this.queueSpeech(action.text, controller.signal)).played);
            speaking = false;
            continue;
          }
          await Promise.all(spoken);
          if (controller.signal.aborted || this.ended) return;
          if (action.type === 'send_dtmf') await this.options.rtp.sendDtmf(action.digits);
          else {
            this.options.hangUp(endingReason);
            return;
          }
        }
      } catch (error) {
        if (controller.signal.aborted) return;
        this.options.logger.warn({ err: error }, 'agent response failed');
        if (speaking) {
          if (error instanceof StageExhaustedError) this.apologizeAndHangUp(error);
        } else if (error instanceof ProviderError) {
          // The language model (always a vendor) failed: say so rather than go quiet.
          this.options.providerFailures.note('llm', error.provider, error);
          this.apologizeAndHangUp(error);
        }
      } finally {
        const lines = await Promise.all(spoken);
        // After a barge-in the brain remembers what the callee heard of the whole reply.
        if (lines.some((line) => line.interrupted))
          this.options.brain.noteSaid(
            lines
              .map((line) => line.said)
              .filter(Boolean)
              .join(' '),
          );
        if (this.response === controller) this.response = null;
        this.armSilenceTimer();
      }
    })();
  }

  /**
   * Every provider of a stage failed (the fallbacks included): a short apology in the offline voice,
   * then the call ends `provider_error` — never a silent line until the silence timeout.
   */
  private apologizeAndHangUp(error: ProviderError): void {
    if (this.ended || this.apologizing) return;
    this.apologizing = true;
    this.options.logger.warn(
      { provider: error.provider },
      'a voice stage has no working provider; apologising',
    );
    this.response?.abort();
    this.options.rtp.clear();
    const controller = new AbortController();
    this.response = controller;
    void (async () => {
      try {
        await this.say(providerApology, controller.signal, this.options.apologyTts, 'kal');
      } catch (apologyError) {
        this.options.logger.warn({ err: apologyError }, 'the apology could not be said');
      } finally {
        this.options.hangUp('provider_error');
      }
    })();
  }

  /** Speaks `text` and waits until it has been played (or cut). */
  private async say(
    text: string,
    signal: AbortSignal,
    tts = this.options.tts,
    voice = this.options.ttsVoice,
  ): Promise<void> {
    await (await this.queueSpeech(text, signal, tts, voice)).played;
  }

  /**
   * Synthesises `text` into the outgoing queue; resolves once its audio is all queued, with a
   * promise of the line as played — written to the transcript then, cut to the words heard. (The
   * promise is wrapped: an async function's result would otherwise wait for it.)
   */
  private async queueSpeech(
    text: string,
    signal: AbortSignal,
    tts = this.options.tts,
    voice = this.options.ttsVoice,
  ): Promise<{ played: Promise<SpokenLine> }> {
    const { rtp } = this.options;
    let startMs: number | null = null;
    const plays: Promise<PlaybackResult>[] = [];
    try {
      for await (const chunk of tts.synthesize(text, { signal, ...(voice ? { voice } : {}) })) {
        if (signal.aborted) break;
        startMs ??= this.nowMs() + rtp.queuedMs;
        plays.push(rtp.play(chunk.samples));
      }
    } catch (error) {
      if (!signal.aborted) {
        // What was queued of the sentence still plays; the caller handles the failure.
        void this.lineOf(text, startMs, plays, signal);
        throw error;
      }
    }
    return { played: this.lineOf(text, startMs, plays, signal) };
  }

  private async lineOf(
    text: string,
    startMs: number | null,
    plays: Promise<PlaybackResult>[],
    signal: AbortSignal,
  ): Promise<SpokenLine> {
    const results = await Promise.all(plays);
    const playedMs = results.reduce((sum, result) => sum + result.playedMs, 0);
    const durationMs = results.reduce((sum, result) => sum + result.durationMs, 0);
    const interrupted = signal.aborted || results.some((result) => result.interrupted);
    // Nothing queued (the voice failed first) is nothing said.
    const said = durationMs === 0 ? '' : interrupted ? heardPart(text, playedMs / durationMs) : text;
    const start = startMs ?? this.nowMs();
    if (said)
      this.addTranscriptLine({
        role: 'agent',
        text: said,
        start_ms: Math.round(start),
        end_ms: Math.round(start + playedMs),
      });
    return { said, interrupted };
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
      if (this.response || this.stt || this.options.rtp.queuedMs > 0) {
        this.armSilenceTimer();
        return;
      }
      this.options.hangUp('silence_timeout');
    }, this.options.silenceTimeoutMs);
    this.silenceTimer.unref();
  }
}
