/** The parts of @echogarden/fvad-wasm (an emscripten build of libfvad, untyped) that we call. */
declare module '@echogarden/fvad-wasm' {
  export interface FvadWasmModule {
    _fvad_new(): number;
    _fvad_free(handle: number): void;
    _fvad_reset(handle: number): void;
    /** 0 (least aggressive about calling audio non-speech) to 3; returns 0 or -1. */
    _fvad_set_mode(handle: number, mode: number): number;
    /** 8000, 16000, 32000 or 48000; returns 0 or -1. */
    _fvad_set_sample_rate(handle: number, sampleRateHz: number): number;
    /** 1 speech, 0 not, -1 invalid frame length (10, 20 or 30 ms only). */
    _fvad_process(handle: number, framePointer: number, sampleCount: number): number;
    _malloc(byteLength: number): number;
    _free(pointer: number): void;
    HEAP16: Int16Array;
  }
  const createFvadWasmModule: (moduleOverrides?: Record<string, unknown>) => Promise<FvadWasmModule>;
  export default createFvadWasmModule;
}
