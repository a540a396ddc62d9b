import createFvadWasmModule, { type FvadWasmModule } from '@echogarden/fvad-wasm';
import { ProviderError } from '../providerError.js';
import { telephoneSampleRateHz, type VoiceActivityDetector } from '../types.js';

const providerName = 'fvad';

export interface FvadDetectorOptions {
  /** 10, 20 (default, one RTP packet) or 30 ms. */
  frameDurationMs?: 10 | 20 | 30;
  /**
   * 0..3: how readily audio is called non-speech. 0 keeps the most speech (quality), 3 rejects
   * the most noise (very aggressive). Default 2.
   */
  aggressiveness?: 0 | 1 | 2 | 3;
}

/**
 * WebRTC's voice activity detector (libfvad compiled to WASM). One WASM instance serves every
 * detector created from it; each detector has its own state, so use one per call.
 * A frame costs a few microseconds: it runs on the caller's thread.
 */
export class FvadDetectorFactory {
  readonly #wasm: FvadWasmModule;
  #openDetectors = 0;

  private constructor(wasm: FvadWasmModule) {
    this.#wasm = wasm;
  }

  static async load(): Promise<FvadDetectorFactory> {
    try {
      return new FvadDetectorFactory(await createFvadWasmModule());
    } catch (error) {
      throw new ProviderError(providerName, 'could not load the WASM module', { cause: error });
    }
  }

  create(options: FvadDetectorOptions = {}): VoiceActivityDetector {
    const detector = new FvadVoiceActivityDetector(
      this.#wasm,
      options.frameDurationMs ?? 20,
      options.aggressiveness ?? 2,
      () => {
        this.#openDetectors -= 1;
      },
    );
    this.#openDetectors += 1;
    return detector;
  }

  /**
   * Detectors created and not yet closed. Each holds ~1 KB of the one WASM memory every call
   * shares: one never closed per call would grow it until no call could get a detector.
   */
  get openDetectors(): number {
    return this.#openDetectors;
  }
}

class FvadVoiceActivityDetector implements VoiceActivityDetector {
  readonly frameDurationMs: number;
  readonly #wasm: FvadWasmModule;
  readonly #frameSampleCount: number;
  readonly #onClose: () => void;
  #handle: number;
  #framePointer: number;

  constructor(wasm: FvadWasmModule, frameDurationMs: number, aggressiveness: number, onClose: () => void) {
    if (![10, 20, 30].includes(frameDurationMs)) throw new RangeError('fvad frames are 10, 20 or 30 ms');
    this.#wasm = wasm;
    this.#onClose = onClose;
    this.frameDurationMs = frameDurationMs;
    this.#frameSampleCount = (telephoneSampleRateHz * frameDurationMs) / 1000;
    this.#handle = wasm._fvad_new();
    if (this.#handle === 0) throw new ProviderError(providerName, 'out of memory creating a detector');
    if (wasm._fvad_set_mode(this.#handle, aggressiveness) !== 0) {
      wasm._fvad_free(this.#handle);
      throw new RangeError(`fvad aggressiveness must be 0..3, got ${aggressiveness}`);
    }
    wasm._fvad_set_sample_rate(this.#handle, telephoneSampleRateHz);
    this.#framePointer = wasm._malloc(this.#frameSampleCount * 2);
  }

  isSpeech(frame: Int16Array): boolean {
    if (this.#handle === 0) throw new ProviderError(providerName, 'detector is closed');
    if (frame.length !== this.#frameSampleCount) {
      throw new RangeError(
        `expected ${this.#frameSampleCount} samples (${this.frameDurationMs} ms), got ${frame.length}`,
      );
    }
    // HEAP16 is re-read each time: it is replaced if the WASM memory ever grows.
    this.#wasm.HEAP16.set(frame, this.#framePointer / 2);
    const result = this.#wasm._fvad_process(this.#handle, this.#framePointer, this.#frameSampleCount);
    if (result < 0) throw new ProviderError(providerName, 'frame rejected');
    return result === 1;
  }

  reset(): void {
    if (this.#handle !== 0) this.#wasm._fvad_reset(this.#handle);
  }

  close(): void {
    if (this.#handle === 0) return;
    this.#wasm._fvad_free(this.#handle);
    this.#wasm._free(this.#framePointer);
    this.#handle = 0;
    this.#framePointer = 0;
    this.#onClose();
  }
}
