/**
 * The speech providers' ports. The voice pipeline depends on these types only; offline engines
 * (flite, pocketsphinx, fvad) and HTTP adapters (OpenAI-compatible servers) implement them.
 *
 * Audio crossing these interfaces is 16-bit signed mono PCM. Telephone audio is 8 kHz, so that is
 * the rate every provider accepts and returns unless a type says otherwise.
 */

/** The sample rate of G.711 telephone audio, and of every PCM buffer crossing these interfaces. */
export const telephoneSampleRateHz = 8000;

/** One piece of synthesized audio, ready to encode and send. */
export interface AudioChunk {
  /** Mono 16-bit PCM samples. */
  samples: Int16Array;
  sampleRateHz: number;
}

export interface SynthesizeOptions {
  /** Provider-specific voice name; each provider documents its default. */
  voice?: string;
  /** Aborting stops synthesis; the iterator then throws the abort reason. */
  signal?: AbortSignal;
}

export interface TextToSpeech {
  /**
   * Synthesizes `text` as 8 kHz mono PCM. Chunks arrive as soon as the provider has them (per
   * sentence for flite, per network read for HTTP servers), so playback can start early.
   */
  synthesize(text: string, options?: SynthesizeOptions): AsyncIterable<AudioChunk>;
  /**
   * A reply is likely soon (the call was answered, the callee started speaking): a provider that
   * connects per reply may open its connection now, so the handshake is not on the reply's path.
   * Best effort; providers without connections leave it out.
   */
  prepare?(options?: { voice?: string }): void;
  /** Releases workers, temporary files and connections. */
  close(): Promise<void>;
}

export interface SpeechToTextSessionOptions {
  /**
   * Phrases the callee is expected to say ("yes", "leave a message"). Providers that can constrain
   * recognition use them as a grammar (pocketsphinx) or as a prompt hint (HTTP). Without them,
   * recognition is free-form.
   */
  phrases?: string[];
  signal?: AbortSignal;
}

export interface PartialTranscript {
  /** The best hypothesis so far; it may change completely as more audio arrives. */
  text: string;
}

export interface FinalTranscript {
  /**
   * What was said; empty when nothing was recognized. Offline engines give lower-case words;
   * HTTP providers may add case and punctuation.
   */
  text: string;
  /** 0..1 when the provider reports one. */
  confidence?: number;
  /** The expected phrase the text is (ignoring case and punctuation), when it is one of them. */
  matchedPhrase?: string;
  /**
   * Speech was heard but not understood: an answer outside the expected phrases that the
   * recognizer rejected (`text` is then empty). The turn is an answer, not a sound.
   */
  unclear?: true;
}

/** One utterance being recognized. Push audio, then `finish()` once; `close()` always. */
export interface SpeechToTextSession {
  /** Appends 8 kHz mono PCM. Cheap: work happens off the caller's thread or on `finish()`. */
  pushAudio(samples: Int16Array): void;
  /** Called whenever the hypothesis changes (providers that cannot stream never call it). */
  onPartial(listener: (partial: PartialTranscript) => void): void;
  /**
   * Called when the vendor judges that the callee has finished speaking (Deepgram's `speech_final`,
   * after its endpointing silence) — a cue the turn logic may act on before its own silence window.
   * Providers without such a signal leave it out.
   */
  onEndOfSpeech?(listener: () => void): void;
  /** Ends the utterance and resolves with the final result. */
  finish(): Promise<FinalTranscript>;
  /** Abandons the session and frees its resources; safe to call more than once. */
  close(): void;
}

export interface SpeechToText {
  startSession(options?: SpeechToTextSessionOptions): Promise<SpeechToTextSession>;
  close(): Promise<void>;
}

/** Frame-level speech detection over 8 kHz audio. */
export interface VoiceActivityDetector {
  /** Frame length the detector expects, in milliseconds (10, 20 or 30 for WebRTC VAD). */
  readonly frameDurationMs: number;
  /** True when the frame (exactly `frameDurationMs` of 8 kHz samples) contains speech. */
  isSpeech(frame: Int16Array): boolean;
  /** Forgets adaptive state (between calls). */
  reset(): void;
  /** Frees the detector's memory; it cannot be used afterwards. */
  close(): void;
}
