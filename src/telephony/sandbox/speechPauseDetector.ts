import { samplesPerMs } from '../rtp/index.js';
import { frameRms } from './sandboxAudio.js';

export interface SpeechPauseDetectorOptions {
  /** A frame louder than this (RMS, sample units) counts as speech. Default 500 (about −36 dBFS). */
  readonly speechRmsThreshold?: number;
  /** Speech shorter than this in total is ignored (clicks, a stray loud packet). Default 60 ms. */
  readonly minSpeechMs?: number;
  /** Silence after speech that ends the turn. */
  readonly pauseMs: number;
}

/**
 * The sandbox person's ear: a plain energy detector on the agent's 20 ms frames. It reports the
 * end of a turn once the agent has spoken (at least `minSpeechMs` of loud frames) and then been
 * quiet for `pauseMs`; it then waits for new speech.
 */
export class SpeechPauseDetector {
  private readonly speechRmsThreshold: number;
  private readonly minSpeechMs: number;
  private readonly pauseMs: number;
  private speechMs = 0;
  private silenceMs = 0;

  constructor(options: SpeechPauseDetectorOptions) {
    this.speechRmsThreshold = options.speechRmsThreshold ?? 500;
    this.minSpeechMs = options.minSpeechMs ?? 60;
    this.pauseMs = options.pauseMs;
  }

  /** Feeds one frame; true when it completes a pause after speech (the agent's turn is over). */
  push(samples: Int16Array): boolean {
    const frameMs = samples.length / samplesPerMs;
    if (frameRms(samples) >= this.speechRmsThreshold) {
      this.speechMs += frameMs;
      this.silenceMs = 0;
      return false;
    }
    if (this.speechMs < this.minSpeechMs) {
      // A blip too short to be speech is forgotten once silence follows it.
      this.speechMs = 0;
      return false;
    }
    this.silenceMs += frameMs;
    if (this.silenceMs < this.pauseMs) return false;
    this.reset();
    return true;
  }

  /** Loud audio heard in the agent's current turn. */
  get spokenMs(): number {
    return this.speechMs;
  }

  /** Whether the agent is mid-turn (has spoken and not yet paused long enough). */
  get inTurn(): boolean {
    return this.speechMs >= this.minSpeechMs;
  }

  reset(): void {
    this.speechMs = 0;
    this.silenceMs = 0;
  }
}
