import type * as fs from 'node:fs';
import type * as path from 'node:path';
import type * as vm from 'node:vm';
import * as threads from 'node:worker_threads';
import { ProviderError } from './providerError.js';

/**
 * Running a blocking WASM engine on a worker thread, and talking to it by request and reply.
 *
 * The worker's code is a TypeScript function (type-checked and compiled with the rest) whose source
 * is evaluated in the worker. That works the same from the compiled package and under vitest on
 * sources, with no separate worker file to locate. The function therefore must be self-contained:
 * it may use only its parameters, never anything imported or declared around it.
 */

/** What a worker function receives: Node's modules (a worker cannot see our imports). */
export interface WorkerModules {
  threads: typeof threads;
  fs: typeof fs;
  path: typeof path;
  vm: typeof vm;
  /** Node's `require`, for modules loaded on demand (node:wasi, which warns when loaded). */
  require: NodeJS.Require;
}

/** Messages a worker sends to its host. */
export type WorkerMessage<TReply, TEvent> =
  | { kind: 'ready' }
  | { kind: 'reply'; requestId: number; reply: TReply }
  | { kind: 'failure'; requestId: number | null; message: string }
  | { kind: 'event'; event: TEvent };

/** Messages a host sends to its worker. */
export interface WorkerRequestEnvelope<TRequest> {
  requestId: number;
  request: TRequest;
}

export type WorkerMain<TData> = (modules: WorkerModules, data: TData) => void;

interface PendingRequest<TReply> {
  resolve: (reply: TReply) => void;
  reject: (error: unknown) => void;
}

export class WorkerChannel<TRequest, TReply, TEvent = never> {
  readonly #worker: threads.Worker;
  readonly #providerName: string;
  readonly #pending = new Map<number, PendingRequest<TReply>>();
  readonly #eventListeners = new Set<(event: TEvent) => void>();
  readonly ready: Promise<void>;
  #nextRequestId = 1;
  #failure: ProviderError | undefined;

  constructor(providerName: string, main: WorkerMain<never>, data: unknown) {
    this.#providerName = providerName;
    const source = `(${main.toString()})({ threads: require('node:worker_threads'), fs: require('node:fs'), path: require('node:path'), vm: require('node:vm'), require }, require('node:worker_threads').workerData);`;
    this.#worker = new threads.Worker(source, { eval: true, workerData: data });
    this.ready = new Promise<void>((resolve, reject) => {
      const onReady = (message: WorkerMessage<TReply, TEvent>): void => {
        if (message.kind === 'ready') {
          this.#worker.off('message', onReady);
          resolve();
        } else if (message.kind === 'failure' && message.requestId === null) {
          this.#worker.off('message', onReady);
          reject(new ProviderError(providerName, `worker failed to start: ${message.message}`));
        }
      };
      this.#worker.on('message', onReady);
      this.#worker.once('exit', () =>
        reject(this.#failure ?? new ProviderError(providerName, 'worker exited')),
      );
    });
    // A rejected `ready` nobody awaits must not become an unhandled rejection.
    this.ready.catch(() => undefined);
    this.#worker.on('message', (message: WorkerMessage<TReply, TEvent>) => this.#receive(message));
    this.#worker.on('error', (error) =>
      this.#fail(new ProviderError(providerName, error.message, { cause: error })),
    );
    this.#worker.on('exit', (exitCode) =>
      this.#fail(new ProviderError(providerName, `worker exited with ${exitCode}`)),
    );
  }

  /** Sends a request; the promise settles with the worker's reply or failure. */
  request(request: TRequest, transferList?: ArrayBuffer[]): Promise<TReply> {
    if (this.#failure) return Promise.reject(this.#failure);
    const requestId = this.#nextRequestId;
    this.#nextRequestId += 1;
    return new Promise<TReply>((resolve, reject) => {
      this.#pending.set(requestId, { resolve, reject });
      const envelope: WorkerRequestEnvelope<TRequest> = { requestId, request };
      this.#worker.postMessage(envelope, transferList);
    });
  }

  /** Sends a request whose reply nobody waits for (streamed audio); failures surface later. */
  send(request: TRequest, transferList?: ArrayBuffer[]): void {
    if (this.#failure) return;
    const envelope: WorkerRequestEnvelope<TRequest> = { requestId: 0, request };
    this.#worker.postMessage(envelope, transferList);
  }

  onEvent(listener: (event: TEvent) => void): () => void {
    this.#eventListeners.add(listener);
    return () => this.#eventListeners.delete(listener);
  }

  /** The worker's unrecoverable failure, if it has failed. */
  get failure(): ProviderError | undefined {
    return this.#failure;
  }

  async terminate(): Promise<void> {
    this.#fail(new ProviderError(this.#providerName, 'worker terminated'));
    await this.#worker.terminate();
  }

  #receive(message: WorkerMessage<TReply, TEvent>): void {
    if (message.kind === 'event') {
      for (const listener of this.#eventListeners) listener(message.event);
      return;
    }
    if (message.kind === 'ready') return;
    if (message.kind === 'failure' && message.requestId === null) {
      this.#fail(new ProviderError(this.#providerName, message.message));
      return;
    }
    const pending = message.requestId === null ? undefined : this.#pending.get(message.requestId);
    if (!pending || message.requestId === null) return;
    this.#pending.delete(message.requestId);
    if (message.kind === 'reply') pending.resolve(message.reply);
    else pending.reject(new ProviderError(this.#providerName, message.message));
  }

  #fail(error: ProviderError): void {
    if (this.#failure) return;
    this.#failure = error;
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
  }
}
