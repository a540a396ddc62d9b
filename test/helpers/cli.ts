import { execFile } from 'node:child_process';
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
