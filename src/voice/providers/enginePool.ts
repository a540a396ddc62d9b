import type { Logger } from '../../logger.js';
import { ProviderError } from './providerError.js';

/**
 * A fixed number of engine processes of one kind, kept that number: an engine that fails (its
 * process crashed, trapped, hung or was killed) fails only the requests it held at that moment,
 * and a replacement starts at once. Replacements that fail to start are retried with a growing
 * delay; while none runs, the engine reports itself unavailable and callers fail at once instead
 * of waiting for it.
 */

/** What /healthz and /metrics show about one offline engine. */
export interface EngineHealth {
  /** pocketsphinx or flite. */
  engine: string;
  /** Engine processes wanted. */
  processes: number;
  /** Engine processes started and serving now. */
  ready: number;
  /** Engine processes that failed while serving, since this process started. */
  failures: number;
  /** Engine processes that failed to start (at start-up or as a replacement). */
  startFailures: number;
  /**
   * False when no engine process serves and the latest start failed: calls cannot use the engine
   * until a retry succeeds. True while a replacement for a failed process is merely starting.
   */
  available: boolean;
}

/** The part of an EngineProcess the pool manages. */
export interface EngineLifecycle {
  readonly ready: Promise<void>;
  readonly failure: Error | undefined;
  readonly processId: number | undefined;
  onFailure(listener: (error: Error) => void): () => void;
  terminate(): Promise<void>;
}

/** Something the pool holds: one engine process plus whatever the caller keeps beside it. */
export interface PooledEngine {
  readonly engineProcess: EngineLifecycle;
}

export interface EnginePoolOptions<TEngine extends PooledEngine> {
  engine: string;
  processCount: number;
  /** Starts one engine process (its `engineProcess.ready` settles when it can serve). */
  create: () => TEngine;
  /**
   * exclusive: `acquire` lends an engine to one caller until `release` (a recognizer holds one
   * utterance). shared: `acquire` picks the next ready engine in turn; engines queue requests.
   */
  sharing: 'exclusive' | 'shared';
  logger?: Logger | undefined;
  /** First retry delay after a failed start; it doubles up to `maxRestartDelayMs`. */
  restartDelayMs?: number;
  maxRestartDelayMs?: number;
}

interface Waiter<TEngine> {
  resolve: (engine: TEngine) => void;
  reject: (error: Error) => void;
}

export class EnginePool<TEngine extends PooledEngine> {
  readonly #options: EnginePoolOptions<TEngine>;
  readonly #starting = new Set<TEngine>();
  readonly #ready: TEngine[] = [];
  /** Ready engines not lent out (exclusive sharing). */
  readonly #idle: TEngine[] = [];
  readonly #waiters: Waiter<TEngine>[] = [];
  readonly #restartTimers = new Set<NodeJS.Timeout>();
  #nextShared = 0;
  #failures = 0;
  #startFailures = 0;
  #consecutiveStartFailures = 0;
  #lastStartFailure: Error | undefined;
  #closed = false;

  private constructor(options: EnginePoolOptions<TEngine>) {
    this.#options = options;
  }

  /** Starts every engine process and waits for them; fails (and ends them all) if any fails. */
  static async start<TEngine extends PooledEngine>(
    options: EnginePoolOptions<TEngine>,
  ): Promise<EnginePool<TEngine>> {
    const pool = new EnginePool(options);
    const first = Array.from({ length: Math.max(1, options.processCount) }, () => pool.#startEngine());
    try {
      await Promise.all(first.map((engine) => engine.engineProcess.ready));
    } catch (error) {
      await pool.close();
      throw error;
    }
    return pool;
  }

  /** An engine to use: lent until `release` (exclusive), or the next one in turn (shared). */
  acquire(): Promise<TEngine> {
    if (this.#closed) return Promise.reject(new ProviderError(this.#options.engine, 'engine is closed'));
    if (this.#options.sharing === 'shared' && this.#ready.length > 0) {
      const engine = this.#ready[this.#nextShared % this.#ready.length] as TEngine;
      this.#nextShared += 1;
      return Promise.resolve(engine);
    }
    const idle = this.#idle.pop();
    if (idle) return Promise.resolve(idle);
    const unavailable = this.#unavailableError();
    if (unavailable) return Promise.reject(unavailable);
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  /** Gives back an engine lent by `acquire` (exclusive sharing); a failed one is not reused. */
  release(engine: TEngine): void {
    if (this.#options.sharing === 'shared' || this.#closed) return;
    if (engine.engineProcess.failure || !this.#ready.includes(engine)) return;
    this.#offer(engine);
  }

  health(): EngineHealth {
    return {
      engine: this.#options.engine,
      processes: Math.max(1, this.#options.processCount),
      ready: this.#ready.length,
      failures: this.#failures,
      startFailures: this.#startFailures,
      available: this.#unavailableError() === undefined,
    };
  }

  /** Callers waiting for an engine (exclusive sharing): work that may be skipped should yield to them. */
  waiting(): number {
    return this.#waiters.length;
  }

  /** The running engines' process ids (for operators, and for tests that end one). */
  processIds(): number[] {
    return this.#ready.flatMap((engine) => engine.engineProcess.processId ?? []);
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#restartTimers) clearTimeout(timer);
    this.#restartTimers.clear();
    const closed = new ProviderError(this.#options.engine, 'engine closed while waiting for it');
    for (const waiter of this.#waiters.splice(0)) waiter.reject(closed);
    const engines = [...this.#starting, ...this.#ready];
    this.#starting.clear();
    this.#ready.length = 0;
    this.#idle.length = 0;
    await Promise.all(engines.map((engine) => engine.engineProcess.terminate()));
  }

  #unavailableError(): ProviderError | undefined {
    if (this.#ready.length > 0 || this.#consecutiveStartFailures === 0) return undefined;
    const reason = this.#lastStartFailure?.message ?? 'unknown';
    return new ProviderError(this.#options.engine, `no engine process can be started (${reason})`);
  }

  #startEngine(): TEngine {
    const engine = this.#options.create();
    this.#starting.add(engine);
    engine.engineProcess.ready.then(
      () => {
        if (this.#closed || !this.#starting.delete(engine)) return;
        this.#consecutiveStartFailures = 0;
        this.#ready.push(engine);
        engine.engineProcess.onFailure((error) => this.#engineFailed(engine, error));
        this.#offer(engine);
      },
      (error: Error) => {
        if (this.#closed || !this.#starting.delete(engine)) return;
        this.#startFailures += 1;
        this.#consecutiveStartFailures += 1;
        this.#lastStartFailure = error;
        this.#options.logger?.error(
          {
            engine: this.#options.engine,
            err: error,
            consecutiveStartFailures: this.#consecutiveStartFailures,
          },
          'offline speech engine failed to start',
        );
        const unavailable = this.#unavailableError();
        if (unavailable) for (const waiter of this.#waiters.splice(0)) waiter.reject(unavailable);
        this.#scheduleRestart();
      },
    );
    return engine;
  }

  #scheduleRestart(): void {
    const initialMs = this.#options.restartDelayMs ?? 1000;
    const maxMs = this.#options.maxRestartDelayMs ?? 30_000;
    const delayMs = Math.min(maxMs, initialMs * 2 ** Math.max(0, this.#consecutiveStartFailures - 1));
    const timer = setTimeout(() => {
      this.#restartTimers.delete(timer);
      if (!this.#closed) this.#startEngine();
    }, delayMs);
    timer.unref();
    this.#restartTimers.add(timer);
  }

  #engineFailed(engine: TEngine, error: Error): void {
    if (this.#closed) return;
    const index = this.#ready.indexOf(engine);
    if (index < 0) return;
    this.#ready.splice(index, 1);
    const idleIndex = this.#idle.indexOf(engine);
    if (idleIndex >= 0) this.#idle.splice(idleIndex, 1);
    this.#failures += 1;
    this.#options.logger?.warn(
      { engine: this.#options.engine, err: error, failures: this.#failures },
      'offline speech engine failed; starting a replacement',
    );
    this.#startEngine();
  }

  /** A ready engine goes to the first waiter, or (exclusive) back to the idle ones. */
  #offer(engine: TEngine): void {
    if (this.#options.sharing === 'shared') {
      for (const waiter of this.#waiters.splice(0)) waiter.resolve(engine);
      return;
    }
    const waiter = this.#waiters.shift();
    if (waiter) waiter.resolve(engine);
    else this.#idle.push(engine);
  }
}
