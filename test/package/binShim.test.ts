import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/** `npx callwright` in a clone that has not been built: one line saying what to run. */

const run = promisify(execFile);
const repoRoot = new URL('../../', import.meta.url).pathname;
const cloneDir = mkdtempSync(join(tmpdir(), 'callwright-unbuilt-'));

afterAll(() => rmSync(cloneDir, { recursive: true, force: true }));

describe('bin/callwright.js', () => {
  it('without dist/ says to build first and exits 1', async () => {
    mkdirSync(join(cloneDir, 'bin'));
    copyFileSync(join(repoRoot, 'bin', 'callwright.js'), join(cloneDir, 'bin', 'callwright.js'));
    writeFileSync(join(cloneDir, 'package.json'), JSON.stringify({ type: 'module' }));
    const failure = await run(process.execPath, [join(cloneDir, 'bin', 'callwright.js'), '--help']).then(
      () => null,
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stdout).toBe('');
    expect(failure?.stderr).toMatch(
      /^callwright: not built yet .*run `npm run build` \(or `npm start`\) in .*callwright-unbuilt-/,
    );
  });

  it('with dist/ runs the command', async () => {
    const { stdout } = await run(process.execPath, [join(repoRoot, 'bin', 'callwright.js'), '--help']);
    expect(stdout).toMatch(/^Usage: callwright/);
  });
});
