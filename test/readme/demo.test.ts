import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * `npm run demo` (scripts/demo.mjs on the built dist/), as the README's first section shows it: one
 * real conversation, a verified webhook, the recording copied where the person ran it, and no data
 * folder left behind in the system's temp directory.
 */

const demoScript = new URL('../../scripts/demo.mjs', import.meta.url).pathname;
const runDir = mkdtempSync(join(tmpdir(), 'callwright-demo-run-'));

afterAll(() => rmSync(runDir, { recursive: true, force: true }));

describe('npm run demo', () => {
  it('holds a conversation, verifies its webhook, keeps the recording and removes its data folder', async () => {
    const child = spawn(process.execPath, [demoScript], {
      cwd: runDir,
      env: { PATH: process.env.PATH ?? '', HOME: runDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, output).toBe(0);
    expect(output).toMatch(/signature verified/);
    expect(output).toMatch(/^\s+0\.\d s\s+agent\s+Hello Ann, this is Bright Smile Dental/m);
    expect(output).toMatch(/^\s+\d+\.\d s\s+callee\s+\S/m);
    expect(output).toMatch(/^Status: completed \/ agent_hangup/m);
    expect(output).toMatch(/✓ demo complete/);
    // Readable lines only: no JSON log line, and no setup token for a database about to be removed.
    expect(output.split('\n').filter((line) => line.trimStart().startsWith('{'))).toEqual([]);
    expect(output).not.toMatch(/setup token|setupToken/i);

    const dataDir = /embedded SQLite in (\S+);/.exec(output)?.[1];
    expect(dataDir, output).toMatch(/callwright-demo-/);
    expect(existsSync(dataDir as string)).toBe(false);

    const wav = readFileSync(join(runDir, 'demo-call.wav'));
    expect(wav.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(wav.length).toBeGreaterThan(8000 * 2 * 2 * 5);
  }, 150_000);
});
