import { type ChildProcess, spawn } from 'node:child_process';
import type * as fs from 'node:fs';
import type * as path from 'node:path';
import type * as vm from 'node:vm';
import { ProviderError } from './providerError.js';

/**
 * A blocking WASM engine (pocketsphinx, flite) in a child process of its own, talked to by
 * request and reply over Node's IPC channel.
 *
 * A process, not a worker thread: whatever goes wrong inside an engine — a WASM trap that leaves
 * its state undefined, a crash in native code (node:wasi in a worker thread segfaulted the whole
 * service under load), running out of memory — ends that process only. EnginePool replaces it.
 *
 * The engine's code is a TypeScript function (type-checked and compiled with the rest) whose
 * source is evaluated by `node -e`. That works the same from the compiled package and under
 * vitest on sources, with no separate file to locate. The function must be self-contained: it
 * may use only its parameters, never anything imported or declared around it.
 */

/** The link from an engine to its host. */
export interface EnginePort {
  postMessage(message: unknown): void;
  onMessage<TEnvelope>(listener: (envelope: TEnvelope) => void): void;
}

/**
 * What an engine function receives: Node's modules (it cannot see our imports), its port, and the
 * helper functions its host passed along (each self-contained, by name).
 */
export interface EngineModules {
  fs: typeof fs;
  path: typeof path;
  vm: typeof vm;
  require: NodeJS.Require;
  port: EnginePort;
  helpers: Readonly<Record<string, unknown>>;
}

/** Messages an engine sends to its host. */
export type EngineMessage<TReply, TEvent> =
  | { kind: 'ready' }
  | { kind: 'reply'; requestId: number; reply: TReply }
  /**
   * requestId null: the engine is broken (failed to start, trapped, lost its state) and must be
   * replaced; every request waiting on it fails.
   */
  | { kind: 'failure'; requestId: number | null; message: string }
  | { kind: 'event'; event: TEvent };

/** Messages a host sends to its engine. requestId 0: no reply is expected. */
export interface EngineRequestEnvelope<TRequest> {
  requestId: number;
  request: TRequest;
}

export type EngineMain<TData> = (modules: EngineModules, data: TData) => void;

export interface EngineProcessOptions {
  providerName: string;
  /** The engine's code; `data` is its second argument. */
  main: EngineMain<never>;
  /** Handed to `main`; plain JSON. */
  data: unknown;
  /** Self-contained functions `main` finds in `modules.helpers` under the same names. */
  helpers?: Readonly<Record<string, (...args: never[]) => unknown>>;
  /** How long the engine may take to report ready before it counts as failed. */
  startTimeoutMs: number;
  /**
   * How long the engine may stay silent while requests wait for it. Any message from it (a reply,
   * an event) shows progress; after this long without one it is stuck, and is ended.
   */
  stallTimeoutMs: number;
}

interface PendingRequest<TReply> {
  resolve: (reply: TReply) => void;
  reject: (error: unknown) => void;
}

/** The last lines of an engine's stderr, kept to explain why it ended. */
const stderrTailChars = 400;

export class EngineProcess<TRequest, TReply, TEvent = never> {
  readonly ready: Promise<void>;
  readonly #child: ChildProcess;
  readonly #providerName: string;
  readonly #pending = new Map<number, PendingRequest<TReply>>();
  readonly #eventListeners = new Set<(event: TEvent) => void>();
  readonly #failureListeners = new Set<(error: ProviderError) => void>();
  readonly #exited: Promise<void>;
  readonly #stallTimeoutMs: number;
  #stallTimer: NodeJS.Timeout | undefined;
  #nextRequestId = 1;
  #failure: ProviderError | undefined;
  #failureReason = '';
  #stderrTail = '';

  constructor(options: EngineProcessOptions) {
    this.#providerName = options.providerName;
    this.#stallTimeoutMs = options.stallTimeoutMs;
    const helpers = Object.entries(options.helpers ?? {})
      .map(([name, helper]) => `${JSON.stringify(name)}: (${helper.toString()})`)
      .join(',\n');
    const source = [
      "'use strict';",
      // What `ps` shows, so an operator can tell the engines apart.
      `process.title = ${JSON.stringify(`callwright-${options.providerName}`)};`,
      "const port = { postMessage: (message) => { if (process.connected) process.send(message); }, onMessage: (listener) => process.on('message', listener) };",
      // The host went away (or closed the channel): nothing is left to serve.
      "process.on('disconnect', () => process.exit(0));",
      // Ctrl-C in the terminal reaches the whole process group: the engine is stopped by its host
      // (which may let a call finish first), not by the terminal.
      "process.on('SIGINT', () => {});",
      `const helpers = {${helpers}};`,
      `(${options.main.toString()})({ fs: require('node:fs'), path: require('node:path'), vm: require('node:vm'), require, port, helpers }, ${JSON.stringify(options.data)});`,
    ].join('\n');
    this.#child = spawn(process.execPath, ['-e', source], {
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'advanced',
      windowsHide: true,
    });
    this.#child.stderr?.setEncoding('utf8');
    this.#child.stderr?.on('data', (text: string) => {
      this.#stderrTail = (this.#stderrTail + text).slice(-stderrTailChars);
    });
    this.#exited = new Promise((resolve) => this.#child.once('exit', () => resolve()));
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => this.#fail(`did not start within ${options.startTimeoutMs} ms`),
        options.startTimeoutMs,
      );
      const onReady = (message: EngineMessage<TReply, TEvent>): void => {
        if (message.kind !== 'ready') return;
        clearTimeout(timer);
        this.#child.off('message', onReady);
        resolve();
      };
      this.#child.on('message', onReady);
      this.onFailure(() => {
        clearTimeout(timer);
        reject(new ProviderError(this.#providerName, `engine failed to start: ${this.#failureReason}`));
      });
    });
    // A rejected `ready` nobody awaits must not become an unhandled rejection.
    this.ready.catch(() => undefined);
    this.#child.on('message', (message: EngineMessage<TReply, TEvent>) => this.#receive(message));
    this.#child.on('error', (error) => this.#fail(`engine process error: ${error.message}`));
    this.#child.on('exit', (code, signal) => {
      const reason = signal ? `killed by ${signal}` : `exited with code ${code}`;
      const lastLine = this.#stderrTail.trim().split('\n').at(-1)?.slice(0, 200);
      this.#fail(`engine process ${reason}${lastLine ? `: ${lastLine}` : ''}`);
    });
  }

  /** The engine's process id (for operators, and for tests that end it). */
  get processId(): number | undefined {
    return this.#child.pid;
  }

  /** The engine's unrecoverable failure, if it has failed. */
  get failure(): ProviderError | undefined {
    return this.#failure;
  }

  /** Sends a request; the promise settles with the engine's reply or failure. */
  request(request: TRequest): Promise<TReply> {
    if (this.#failure) return Promise.reject(this.#failure);
    const requestId = this.#nextRequestId;
    this.#nextRequestId += 1;
    return new Promise<TReply>((resolve, reject) => {
      this.#pending.set(requestId, { resolve, reject });
      this.#watchForStall();
      this.#post({ requestId, request });
    });
  }

  /** Sends a request whose reply nobody waits for (streamed audio); failures surface later. */
  send(request: TRequest): void {
    if (this.#failure) return;
    this.#post({ requestId: 0, request });
  }

  onEvent(listener: (event: TEvent) => void): () => void {
    this.#eventListeners.add(listener);
    return () => this.#eventListeners.delete(listener);
  }

  /** Called once, when the engine fails (or is terminated). */
  onFailure(listener: (error: ProviderError) => void): () => void {
    if (this.#failure) {
      listener(this.#failure);
      return () => undefined;
    }
    this.#failureListeners.add(listener);
    return () => this.#failureListeners.delete(listener);
  }

  /** Ends the engine process and waits (up to 5 s) until it has exited. */
  async terminate(): Promise<void> {
    this.#fail('engine terminated');
    let timer: NodeJS.Timeout | undefined;
    // A process that never spawned emits no exit.
    const giveUp = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, 5000);
    });
    await Promise.race([this.#exited, giveUp]);
    clearTimeout(timer);
  }

  #post(envelope: EngineRequestEnvelope<TRequest>): void {
    if (!this.#child.connected) {
      this.#fail('engine process is not connected');
      return;
    }
    this.#child.send(envelope, (error) => {
      if (error) this.#fail(`could not reach the engine: ${error.message}`);
    });
  }

  /** Runs the stall timer while requests wait; every message from the engine restarts it. */
  #watchForStall(): void {
    clearTimeout(this.#stallTimer);
    this.#stallTimer = undefined;
    if (this.#pending.size === 0 || this.#failure) return;
    this.#stallTimer = setTimeout(
      () => this.#fail(`engine stuck: no answer for ${this.#stallTimeoutMs} ms`),
      this.#stallTimeoutMs,
    );
  }

  #receive(message: EngineMessage<TReply, TEvent>): void {
    this.#watchForStall();
    if (message.kind === 'event') {
      for (const listener of this.#eventListeners) listener(message.event);
      return;
    }
    if (message.kind === 'ready') return;
    const pending = message.requestId === null ? undefined : this.#pending.get(message.requestId);
    if (!pending) {
      // A broken engine, or a failure nobody waits for (streamed audio): its state is unknown.
      if (message.kind === 'failure') this.#fail(message.message);
      return;
    }
    this.#pending.delete(message.requestId as number);
    if (this.#pending.size === 0) this.#watchForStall();
    if (message.kind === 'reply') pending.resolve(message.reply);
    else pending.reject(new ProviderError(this.#providerName, message.message));
  }

  #fail(reason: string): void {
    if (this.#failure) return;
    const error = new ProviderError(this.#providerName, reason);
    this.#failure = error;
    this.#failureReason = reason;
    clearTimeout(this.#stallTimer);
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
    // A failed engine never serves again: end its process if it still runs.
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill('SIGKILL');
    for (const listener of this.#failureListeners) listener(error);
    this.#failureListeners.clear();
  }
}
