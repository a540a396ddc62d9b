import { telephoneSampleRateHz, type VoiceActivityDetector } from '../types.js';

/**
 * Turn-taking over frame-level speech decisions: when the callee starts talking (for barge-in)
 * and when they have finished (a silence window after speech). Pure logic: time is the frame count
 * times the frame duration, so the same decisions always give the same events.
 */

export interface EndOfTurnOptions {
  /** Duration of one decision's frame. */
  frameDurationMs: number;
  /** Silence after speech that ends the turn, unless setTurnWindow says otherwise. Default 600 ms. */
  silenceWindowMs?: number;
  /**
   * Uninterrupted speech needed before it counts as the callee talking, so clicks and coughs
   * neither interrupt the agent nor open a turn. Default 100 ms.
   */
  minSpeechDurationMs?: number;
}

export type TurnEvent =
  /** Speech began at `speechStartMs` (stream time); reported once it has lasted the minimum. */
  | { type: 'speech_start'; speechStartMs: number; detectedAtMs: number }
  /** The turn ended: speech from `speechStartMs` to `speechEndMs`, then a full silence window. */
  | { type: 'speech_end'; speechStartMs: number; speechEndMs: number; detectedAtMs: number };

export class EndOfTurnDetector {
  readonly frameDurationMs: number;
  readonly silenceWindowMs: number;
  readonly minSpeechDurationMs: number;
  #frameIndex = 0;
  #speaking = false;
  /** First frame of the current run of speech (candidate or confirmed turn start). */
  #speechRunStartFrame = -1;
  #turnStartFrame = -1;
  /** First silent frame after the latest speech, while speaking; -1 while speech continues. */
  #silenceStartFrame = -1;
  /** This turn's window, once the words say how long to wait (see setTurnWindow); null: the default. */
  #turnWindowMs: number | null = null;
  /** Frames of this turn the detector heard as speech (pauses left out). */
  #voicedFrames = 0;

  constructor(options: EndOfTurnOptions) {
    if (!(options.frameDurationMs > 0)) throw new RangeError('frameDurationMs must be positive');
    this.frameDurationMs = options.frameDurationMs;
    this.silenceWindowMs = options.silenceWindowMs ?? 600;
    this.minSpeechDurationMs = options.minSpeechDurationMs ?? 100;
  }

  /** True between speech_start and speech_end. */
  get isSpeaking(): boolean {
    return this.#speaking;
  }

  /** Speech heard in the current turn, pauses left out; 0 between turns. */
  get voicedMs(): number {
    return this.#speaking ? this.#voicedFrames * this.frameDurationMs : 0;
  }

  /** The silence since the current turn's latest speech; 0 while speech goes on and between turns. */
  get silentMs(): number {
    return this.#speaking && this.#silenceStartFrame >= 0
      ? (this.#frameIndex - this.#silenceStartFrame) * this.frameDurationMs
      : 0;
  }

  /** Time since the current turn's speech began; 0 between turns. */
  get turnElapsedMs(): number {
    return this.#speaking ? (this.#frameIndex - this.#turnStartFrame) * this.frameDurationMs : 0;
  }

  /**
   * The silence that ends the current turn, from what its words say (short after a complete answer,
   * long after "my number is…"); null goes back to the default window. When that much silence has
   * already passed, the next frame ends the turn. The frame detector's own speech does not reset it
   * (it hears the tail of the last word, a breath); only a new value does. Between turns: ignored.
   */
  setTurnWindow(silenceMs: number | null): void {
    if (this.#speaking) this.#turnWindowMs = silenceMs;
  }

  /**
   * Ends the current turn now (a monologue past the longest utterance, the line going away); the
   * speech end is the start of the latest silence, or now while the callee still speaks.
   */
  forceEnd(): TurnEvent | undefined {
    if (!this.#speaking) return undefined;
    const nowMs = this.#frameIndex * this.frameDurationMs;
    const event: TurnEvent = {
      type: 'speech_end',
      speechStartMs: this.#turnStartFrame * this.frameDurationMs,
      speechEndMs: this.#silenceStartFrame >= 0 ? this.#silenceStartFrame * this.frameDurationMs : nowMs,
      detectedAtMs: nowMs,
    };
    this.#endTurn();
    return event;
  }

  /** Takes the next frame's decision; returns the event it causes, if any. */
  pushDecision(isSpeech: boolean): TurnEvent | undefined {
    const frame = this.#frameIndex;
    this.#frameIndex += 1;
    const frameEndMs = (frame + 1) * this.frameDurationMs;

    if (!this.#speaking) {
      if (!isSpeech) {
        this.#speechRunStartFrame = -1;
        return undefined;
      }
      if (this.#speechRunStartFrame < 0) this.#speechRunStartFrame = frame;
      const runDurationMs = (frame + 1 - this.#speechRunStartFrame) * this.frameDurationMs;
      if (runDurationMs < this.minSpeechDurationMs) return undefined;
      this.#speaking = true;
      this.#turnStartFrame = this.#speechRunStartFrame;
      this.#silenceStartFrame = -1;
      this.#voicedFrames = frame + 1 - this.#speechRunStartFrame;
      return {
        type: 'speech_start',
        speechStartMs: this.#turnStartFrame * this.frameDurationMs,
        detectedAtMs: frameEndMs,
      };
    }

    if (isSpeech) {
      this.#silenceStartFrame = -1;
      this.#voicedFrames += 1;
      return undefined;
    }
    if (this.#silenceStartFrame < 0) this.#silenceStartFrame = frame;
    const silenceDurationMs = (frame + 1 - this.#silenceStartFrame) * this.frameDurationMs;
    if (silenceDurationMs < (this.#turnWindowMs ?? this.silenceWindowMs)) return undefined;
    const event: TurnEvent = {
      type: 'speech_end',
      speechStartMs: this.#turnStartFrame * this.frameDurationMs,
      speechEndMs: this.#silenceStartFrame * this.frameDurationMs,
      detectedAtMs: frameEndMs,
    };
    this.#endTurn();
    return event;
  }

  #endTurn(): void {
    this.#speaking = false;
    this.#turnWindowMs = null;
    this.#voicedFrames = 0;
    this.#speechRunStartFrame = -1;
    this.#silenceStartFrame = -1;
  }

  /** Starts over at stream time 0. */
  reset(): void {
    this.#frameIndex = 0;
    this.#speaking = false;
    this.#speechRunStartFrame = -1;
    this.#turnStartFrame = -1;
    this.#silenceStartFrame = -1;
    this.#turnWindowMs = null;
    this.#voicedFrames = 0;
  }
}

/**
 * Cuts audio of any chunk size into the detector's frames and runs both stages: push what RTP
 * delivers, get turn events back.
 */
export class AudioTurnDetector {
  readonly #detector: VoiceActivityDetector;
  readonly #turns: EndOfTurnDetector;
  readonly #frame: Int16Array;
  #frameFill = 0;
  #lastFrameSpeech = false;

  constructor(detector: VoiceActivityDetector, options: Omit<EndOfTurnOptions, 'frameDurationMs'> = {}) {
    this.#detector = detector;
    this.#turns = new EndOfTurnDetector({ ...options, frameDurationMs: detector.frameDurationMs });
    this.#frame = new Int16Array((telephoneSampleRateHz * detector.frameDurationMs) / 1000);
  }

  get isSpeaking(): boolean {
    return this.#turns.isSpeaking;
  }

  /** The voice activity detector's verdict on the last whole frame pushed. */
  get lastFrameSpeech(): boolean {
    return this.#lastFrameSpeech;
  }

  get voicedMs(): number {
    return this.#turns.voicedMs;
  }

  get turnElapsedMs(): number {
    return this.#turns.turnElapsedMs;
  }

  get silentMs(): number {
    return this.#turns.silentMs;
  }

  /** See EndOfTurnDetector.setTurnWindow. */
  setTurnWindow(silenceMs: number | null): void {
    this.#turns.setTurnWindow(silenceMs);
  }

  /** See EndOfTurnDetector.forceEnd. */
  forceEnd(): TurnEvent | undefined {
    return this.#turns.forceEnd();
  }

  pushAudio(samples: Int16Array): TurnEvent[] {
    const events: TurnEvent[] = [];
    let offset = 0;
    while (offset < samples.length) {
      const taken = Math.min(this.#frame.length - this.#frameFill, samples.length - offset);
      this.#frame.set(samples.subarray(offset, offset + taken), this.#frameFill);
      this.#frameFill += taken;
      offset += taken;
      if (this.#frameFill === this.#frame.length) {
        this.#frameFill = 0;
        this.#lastFrameSpeech = this.#detector.isSpeech(this.#frame);
        const event = this.#turns.pushDecision(this.#lastFrameSpeech);
        if (event) events.push(event);
      }
    }
    return events;
  }

  reset(): void {
    this.#frameFill = 0;
    this.#turns.reset();
    this.#detector.reset();
  }
}
