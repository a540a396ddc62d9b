import { createRequire } from 'node:module';

/**
 * Opus for the browser's side of a web call: libopus 1.4 compiled to WebAssembly, from the
 * `opusscript` package (nothing native, nothing downloaded at install time).
 *
 * We drive opusscript's compiled handler ourselves instead of its `index.js` wrapper: that wrapper
 * takes byte addresses from `_malloc` and uses them as indexes into a 16-bit heap view, so every
 * encode and decode works at twice the address it allocated: into whatever lies there, and with
 * some forty codecs alive past the end of the heap ("memory access out of bounds", tried here).
 * Here each buffer is allocated and addressed in bytes.
 *
 * The handler's calling convention (opusscript's C++ side) spreads PCM over 16-bit slots, one
 * byte per slot, low byte first: `_encode` folds the slot pairs into samples in place and encodes;
 * `_decode` decodes and spreads the samples out the same way.
 */

/** RTP clock rate of Opus, whatever the audio's sampling rate (RFC 7587). */
export const opusRtpClockRateHz = 48_000;

/** libopus's largest frame: 120 ms at 48 kHz, per channel. */
const maxFrameSamples = 5_760;
/** libopus's largest packet (opusscript's limit too). */
const maxPacketBytes = 1_276 * 3;

const OPUS_APPLICATION_VOIP = 2_048;
const OPUS_SET_BITRATE = 4_002;
const OPUS_SET_COMPLEXITY = 4_010;
const OPUS_SET_INBAND_FEC = 4_012;
const OPUS_SET_PACKET_LOSS_PERC = 4_014;
const OPUS_SET_SIGNAL = 4_024;
const OPUS_SIGNAL_VOICE = 3_001;

interface NativeHandler {
  _encode(inputAddress: number, sampleCount: number, outputAddress: number, frameSamples: number): number;
  _decode(inputAddress: number, packetBytes: number, outputAddress: number): number;
  _encoder_ctl(request: number, value: number): number;
  delete(): void;
}

interface NativeModule {
  HEAPU8: Uint8Array;
  HEAP16: Int16Array;
  _malloc(bytes: number): number;
  _free(address: number): void;
  OpusScriptHandler: new (sampleRateHz: number, channels: number, application: number) => NativeHandler;
}

let native: NativeModule | null = null;

/** Instantiates the WebAssembly module once per process (synchronously, ~20 ms). */
function nativeModule(): NativeModule {
  if (!native) {
    const require = createRequire(import.meta.url);
    const instantiate = require('opusscript/build/opusscript_native_wasm.js') as () => NativeModule;
    native = instantiate();
  }
  return native;
}

export type OpusSampleRateHz = 8_000 | 12_000 | 16_000 | 24_000 | 48_000;

export interface OpusVoiceCodecOptions {
  /**
   * The sampling rate of the PCM given to `encode` and returned by `decode`. libopus converts
   * internally: a decoder at 8 kHz decodes a browser's 48 kHz stream to 8 kHz, and an encoder fed
   * 8 kHz sends narrowband Opus (still on the 48 kHz RTP clock).
   */
  sampleRateHz: OpusSampleRateHz;
  /** Encoder target bitrate (default 16 kb/s: ample for narrowband speech with FEC). */
  bitrateBps?: number;
  /**
   * In-band forward error correction for the packets we send, tuned for this expected loss
   * (percent; default 10, 0 turns FEC off): the browser's decoder rebuilds a lost packet from the
   * next one's low-bitrate copy.
   */
  expectedLossPercent?: number;
  /**
   * libopus complexity 0–10. Default 1: at 8 kHz it encodes in about half the CPU of 5 (3.2
   * against 6.7 ms per second of audio with FEC, measured; docs/benchmarks.md), and narrowband
   * speech gains little from more.
   */
  complexity?: number;
}

/** One mono Opus encoder and decoder pair, for one call. Call `close` when the call ends. */
export class OpusVoiceCodec {
  readonly sampleRateHz: OpusSampleRateHz;
  private readonly handler: NativeHandler;
  private readonly pcmInAddress: number;
  private readonly pcmOutAddress: number;
  private readonly packetInAddress: number;
  private readonly packetOutAddress: number;
  private closed = false;

  constructor(options: OpusVoiceCodecOptions) {
    const module = nativeModule();
    this.sampleRateHz = options.sampleRateHz;
    this.handler = new module.OpusScriptHandler(options.sampleRateHz, 1, OPUS_APPLICATION_VOIP);
    const expectedLossPercent = options.expectedLossPercent ?? 10;
    this.control(OPUS_SET_SIGNAL, OPUS_SIGNAL_VOICE);
    this.control(OPUS_SET_BITRATE, options.bitrateBps ?? 16_000);
    this.control(OPUS_SET_COMPLEXITY, options.complexity ?? 1);
    this.control(OPUS_SET_INBAND_FEC, expectedLossPercent > 0 ? 1 : 0);
    this.control(OPUS_SET_PACKET_LOSS_PERC, expectedLossPercent);
    // Two 16-bit slots per sample (see the file's comment): 4 bytes a sample each way.
    this.pcmInAddress = module._malloc(maxFrameSamples * 4);
    this.pcmOutAddress = module._malloc(maxFrameSamples * 4);
    this.packetInAddress = module._malloc(maxPacketBytes);
    this.packetOutAddress = module._malloc(maxPacketBytes);
  }

  /** Encodes one frame (2.5–60 ms of samples at `sampleRateHz`; 20 ms on our calls) into a packet. */
  encode(samples: Int16Array): Uint8Array {
    this.assertOpen();
    if (samples.length === 0 || samples.length > maxFrameSamples) {
      throw new RangeError(`an Opus frame cannot hold ${samples.length} samples`);
    }
    const module = nativeModule();
    // The heap views are replaced when the module's memory grows: read them after every call in.
    const slots = module.HEAP16;
    const first = this.pcmInAddress >> 1;
    for (let i = 0; i < samples.length; i += 1) {
      const sample = samples[i] ?? 0;
      slots[first + 2 * i] = sample & 0xff;
      slots[first + 2 * i + 1] = (sample >> 8) & 0xff;
    }
    // The "bytes" argument bounds the in-place fold: the sample count folds exactly our slots.
    const length = this.handler._encode(
      this.pcmInAddress,
      samples.length,
      this.packetOutAddress,
      samples.length,
    );
    if (length < 0) throw new Error(`Opus encoding failed (libopus error ${length})`);
    return module.HEAPU8.slice(this.packetOutAddress, this.packetOutAddress + length);
  }

  /** Decodes one packet into samples at `sampleRateHz` (20 ms of audio per 20 ms packet). */
  decode(packet: Uint8Array): Int16Array {
    this.assertOpen();
    if (packet.length === 0 || packet.length > maxPacketBytes) {
      throw new RangeError(`an Opus packet cannot be ${packet.length} bytes`);
    }
    const module = nativeModule();
    module.HEAPU8.set(packet, this.packetInAddress);
    const count = this.handler._decode(this.packetInAddress, packet.length, this.pcmOutAddress);
    if (count < 0) throw new Error(`Opus decoding failed (libopus error ${count})`);
    const slots = module.HEAP16;
    const first = this.pcmOutAddress >> 1;
    const samples = new Int16Array(count);
    for (let i = 0; i < count; i += 1) {
      samples[i] = (((slots[first + 2 * i + 1] ?? 0) & 0xff) << 8) | ((slots[first + 2 * i] ?? 0) & 0xff);
    }
    return samples;
  }

  /** Frees the codec's WebAssembly memory (idempotent). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const module = nativeModule();
    this.handler.delete();
    module._free(this.pcmInAddress);
    module._free(this.pcmOutAddress);
    module._free(this.packetInAddress);
    module._free(this.packetOutAddress);
  }

  private control(request: number, value: number): void {
    const result = this.handler._encoder_ctl(request, value);
    if (result < 0) throw new Error(`Opus encoder setting ${request} failed (libopus error ${result})`);
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('the Opus codec is closed');
  }
}
