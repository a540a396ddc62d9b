import { execFile } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * `npm run demo`, `npm start`, the bench scripts and `npm pack` (through `prepare`) all build first.
 * A build with nothing to do must write nothing: tsc rewrites a file by truncating it, so a rebuild
 * beside a starting process (another test's `serve`, or the service itself) once handed it a
 * half-written module ("does not provide an export named 'RtpSession'").
 */

const run = promisify(execFile);
const repoRoot = new URL('../../', import.meta.url).pathname;
const distDir = join(repoRoot, 'dist');
/** The build of `@callwright/client` (esm/, cjs/ beside its manifest). */
const clientPackageDir = join(repoRoot, 'packages', 'client');

/** Every file under `dir`, by its path inside it, with its modification time (ns) and size. */
function snapshotOf(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const stats = statSync(path, { bigint: true });
    files.set(path, `${stats.mtimeNs}/${stats.size}`);
  }
  return files;
}

describe('npm run build', () => {
  it('writes no file when the sources have not changed', { timeout: 240_000 }, async () => {
    // The first build brings dist/ up to date if the suite was started without one (`test:fast`).
    await run('npm', ['run', 'build', '--silent'], { cwd: repoRoot });
    const before = new Map([...snapshotOf(distDir), ...snapshotOf(clientPackageDir)]);
    expect(before.size).toBeGreaterThan(100);
    await run('npm', ['run', 'build', '--silent'], { cwd: repoRoot });
    const after = new Map([...snapshotOf(distDir), ...snapshotOf(clientPackageDir)]);
    const rewritten = [...after].filter(([path, stamp]) => before.get(path) !== stamp).map(([path]) => path);
    expect(rewritten).toEqual([]);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
  });
});
