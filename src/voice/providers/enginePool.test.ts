import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { childProcessesTitled, waitFor as waitUntil } from '../../../test/helpers/processes.js';
import { EnginePool } from './enginePool.js';
import { type EngineModules, EngineProcess, type EngineRequestEnvelope } from './engineProcess.js';

/**
 * EnginePool and EngineProcess with a small engine of our own in real child processes: what
 * happens when an engine dies, hangs, or cannot start again. (The real engines' failures are in
 * test/voice/offlineEngineFailures.test.ts.)
 */

type TestRequest = { type: 'echo'; text: string } | { type: 'hang' } | { type: 'break' };
interface TestEngineData {
  /** While this file exists, the engine fails to start. */
  failToStartFlagPath: string;
}

/** Evaluated in the child process: must use only its parameters. */
function testEngineMain(modules: EngineModules, data: TestEngineData): void {
  const { port } = modules;
  if (modules.fs.existsSync(data.failToStartFlagPath)) {
    port.postMessage({ kind: 'failure', requestId: null, message: 'told to fail at start' });
    return;
  }
  port.onMessage((envelope: EngineRequestEnvelope<TestRequest>) => {
    if (envelope.request.type === 'hang') return; // never answers
    if (envelope.request.type === 'break') {
      // What the real engines do when a call into WASM traps: the whole engine is suspect.
      port.postMessage({ kind: 'failure', requestId: null, message: 'engine broke' });
      return;
    }
    port.postMessage({ kind: 'reply', requestId: envelope.requestId, reply: envelope.request.text });
  });
  port.postMessage({ kind: 'ready' });
}

class TestEngine {
  readonly engineProcess: EngineProcess<TestRequest, string>;
  constructor(data: TestEngineData, stallTimeoutMs: number) {
    this.engineProcess = new EngineProcess({
      providerName: 'test-engine',
      main: testEngineMain,
      data,
      startTimeoutMs: 30_000,
      stallTimeoutMs,
    });
  }
}

const directory = mkdtempSync(join(tmpdir(), 'callwright-engine-pool-'));
const data: TestEngineData = { failToStartFlagPath: join(directory, 'fail-to-start') };
const pools: EnginePool<TestEngine>[] = [];

async function startPool(options: { sharing?: 'exclusive' | 'shared'; stallTimeoutMs?: number } = {}) {
  const pool = await EnginePool.start({
    engine: 'test-engine',
    processCount: 1,
    create: () => new TestEngine(data, options.stallTimeoutMs ?? 30_000),
    sharing: options.sharing ?? 'exclusive',
    restartDelayMs: 20,
    maxRestartDelayMs: 100,
  });
  pools.push(pool);
  return pool;
}

/** Polls `condition` every 20 ms for up to `timeoutMs` (a bounded wait, not a timing assertion). */
const waitFor = (condition: () => boolean, timeoutMs = 20_000) => waitUntil(condition, timeoutMs, 20);

afterEach(async () => {
  rmSync(data.failToStartFlagPath, { force: true });
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('EnginePool', () => {
  it('an engine process that dies fails only what it held; a replacement serves the next caller', async () => {
    const pool = await startPool();
    const first = await pool.acquire();
    expect(await first.engineProcess.request({ type: 'echo', text: 'one' })).toBe('one');
    const firstProcessId = first.engineProcess.processId as number;
    const held = first.engineProcess.request({ type: 'hang' });
    process.kill(firstProcessId, 'SIGSEGV');
    await expect(held).rejects.toThrow(/killed by SIGSEGV/);
    pool.release(first);

    const second = await pool.acquire();
    expect(second.engineProcess.processId).not.toBe(firstProcessId);
    expect(await second.engineProcess.request({ type: 'echo', text: 'two' })).toBe('two');
    pool.release(second);
    expect(pool.health()).toMatchObject({ processes: 1, ready: 1, failures: 1, startFailures: 0 });
    expect(pool.health().available).toBe(true);
  });

  it("ignores the terminal's Ctrl-C (SIGINT reaches the whole process group): its host stops it", async () => {
    const pool = await startPool();
    const engine = await pool.acquire();
    const processId = engine.engineProcess.processId as number;
    process.kill(processId, 'SIGINT');
    // Still the same process, still answering, after the signal was delivered and handled.
    expect(await engine.engineProcess.request({ type: 'echo', text: 'after ctrl-c' })).toBe('after ctrl-c');
    expect(engine.engineProcess.processId).toBe(processId);
    pool.release(engine);
    expect(pool.health()).toMatchObject({ failures: 0 });
  });

  it('replaces an engine that reports itself broken (as the real ones do after a WASM trap)', async () => {
    const pool = await startPool({ sharing: 'shared' });
    const engine = await pool.acquire();
    const processId = engine.engineProcess.processId as number;
    await expect(engine.engineProcess.request({ type: 'break' })).rejects.toThrow(/engine broke/);
    await waitFor(() => pool.health().ready === 1 && pool.processIds()[0] !== processId);
    const replacement = await pool.acquire();
    expect(await replacement.engineProcess.request({ type: 'echo', text: 'fine' })).toBe('fine');
    expect(pool.health().failures).toBe(1);
    await waitFor(() => !childProcessesTitled('callwright-test-engine').includes(processId));
  });

  it('ends an engine that stops answering, fails what waited on it, and replaces it', async () => {
    const pool = await startPool({ sharing: 'shared', stallTimeoutMs: 300 });
    const engine = await pool.acquire();
    const stuck = engine.engineProcess.request({ type: 'hang' });
    await expect(stuck).rejects.toThrow(/engine stuck: no answer for 300 ms/);
    await waitFor(() => pool.health().ready === 1);
    const replacement = await pool.acquire();
    expect(replacement).not.toBe(engine);
    expect(await replacement.engineProcess.request({ type: 'echo', text: 'again' })).toBe('again');
    expect(pool.health().failures).toBe(1);
  });

  it('is unavailable while no replacement can start (callers fail at once), and recovers after', async () => {
    const pool = await startPool();
    writeFileSync(data.failToStartFlagPath, '');
    const engine = await pool.acquire();
    const waiting = pool.acquire(); // the only engine is lent out: this caller waits for it
    process.kill(engine.engineProcess.processId as number, 'SIGKILL');
    await expect(waiting).rejects.toThrow(/no engine process can be started \(.*told to fail at start/);
    expect(pool.health()).toMatchObject({ ready: 0, failures: 1, available: false });
    expect(pool.health().startFailures).toBeGreaterThanOrEqual(1);
    await expect(pool.acquire()).rejects.toThrow(/can be started/);

    rmSync(data.failToStartFlagPath);
    await waitFor(() => pool.health().available && pool.health().ready === 1);
    const recovered = await pool.acquire();
    expect(await recovered.engineProcess.request({ type: 'echo', text: 'back' })).toBe('back');
  });

  it('fails to start, and leaves no process behind, when its engines cannot start at all', async () => {
    writeFileSync(data.failToStartFlagPath, '');
    await expect(startPool()).rejects.toThrow(/test-engine: engine failed to start: told to fail at start$/);
    await waitFor(() => childProcessesTitled('callwright-test-engine').length === 0);
  });

  it('a closed pool refuses callers and ends its engine processes', async () => {
    const pool = await startPool();
    const engine = await pool.acquire();
    const processId = engine.engineProcess.processId as number;
    expect(childProcessesTitled('callwright-test-engine')).toEqual([processId]);
    await pool.close();
    await expect(pool.acquire()).rejects.toThrow(/closed/);
    expect(childProcessesTitled('callwright-test-engine')).toEqual([]);
  });
});
