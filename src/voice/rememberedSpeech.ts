import type { Logger } from '../logger.js';
import type { AudioChunk, SynthesizeOptions, TextToSpeech } from './providers/types.js';

/**
 * A voice that remembers what it said: the first synthesis of a text (in a voice) is kept, and every
 * later one plays the kept audio at once. For the few fixed lines every call may need at the worst
 * moment — the apology when a vendor has failed — so that they never wait for a busy engine.
 */
export class RememberedSpeech implements TextToSpeech {
  readonly #kept = new Map<string, AudioChunk[]>();

  constructor(
    private readonly tts: TextToSpeech,
    private readonly logger: Logger,
  ) {}

  /** Synthesises `text` now, so that its first use is instant too. */
  remember(text: string, voice?: string): void {
    void (async () => {
      for await (const _ of this.synthesize(text, voice ? { voice } : {})) {
        // Kept as it is synthesised.
      }
    })().catch((error: unknown) =>
      this.logger.warn({ err: error }, 'a fixed line could not be synthesised ahead'),
    );
  }

  async *synthesize(text: string, options: SynthesizeOptions = {}): AsyncIterable<AudioChunk> {
    const key = `${options.voice ?? ''}\u0000${text}`;
    const kept = this.#kept.get(key);
    if (kept) {
      yield* kept;
      return;
    }
    const chunks: AudioChunk[] = [];
    for await (const chunk of this.tts.synthesize(text, options)) {
      chunks.push(chunk);
      yield chunk;
    }
    this.#kept.set(key, chunks);
  }

  async close(): Promise<void> {
    // The engine is the caller's.
  }
}
