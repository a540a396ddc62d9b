import type { AudioChunk } from '../types.js';

/**
 * The audio of one streamed reply, between a vendor's socket (which pushes chunks, then finishes
 * or fails) and the caller iterating it. The first failure wins; chunks received before it are still
 * yielded before it is thrown, and nothing pushed after the reply settled is ever yielded (audio that
 * follows a garbage frame is not trusted).
 */
export class AudioReplyQueue {
  readonly #chunks: AudioChunk[] = [];
  #finished = false;
  #failure: unknown = null;
  #wake: (() => void) | null = null;

  get settled(): boolean {
    return this.#finished || this.#failure !== null;
  }

  get finished(): boolean {
    return this.#finished;
  }

  push(chunk: AudioChunk): void {
    if (this.settled) return;
    this.#chunks.push(chunk);
    this.#notify();
  }

  finish(): void {
    if (this.settled) return;
    this.#finished = true;
    this.#notify();
  }

  fail(error: unknown): void {
    if (this.settled) return;
    this.#failure = error;
    this.#notify();
  }

  async *drain(): AsyncIterable<AudioChunk> {
    for (;;) {
      const chunk = this.#chunks.shift();
      if (chunk) {
        yield chunk;
        continue;
      }
      if (this.#failure !== null) throw this.#failure;
      if (this.#finished) return;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }

  #notify(): void {
    this.#wake?.();
    this.#wake = null;
  }
}
