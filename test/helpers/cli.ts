import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { expect } from 'vitest';

/** The built command line, run as users run it. */
export const mainScript = resolve(import.meta.dirname, '../../dist/main.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `callwright ARGS` on the data directory `dataDir` with only PATH and `env` set. */
export function runCli(
  dataDir: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<CliResult> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [mainScript, ...args],
      { env: { PATH: process.env.PATH, CALLWRIGHT_DATA_DIR: dataDir, ...env }, timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

/** Runs a verb with `--json` and returns its one JSON object, failing the test on any error. */
export async function runCliJson(
  dataDir: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  const result = await runCli(dataDir, [...args, '--json'], env);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  const lines = result.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] as string);
}

export interface ServeProcess {
  child: ChildProcess;
  /** The API's address, read from the "callwright listening" log line. */
  url: string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `callwright serve ARGS` as its own process with exactly `env` (plus PATH) and resolves
 * once it logs that it listens. Output is kept (the last 20 kB) for the error when it does not.
 */
export function startServeProcess(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [mainScript, 'serve', ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return new Promise((resolveServe, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${output}`)), timeoutMs);
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
      const match = /"url":"(http:\/\/[^"]+)"/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolveServe({
          child,
          url: match[1] as string,
          stop: () => {
            child.kill('SIGTERM');
            return exited;
          },
        });
      }
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`serve exited early: ${output}`));
    });
  });
}
