import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mainScript, startServeProcess } from '../helpers/cli.js';
import { request } from '../helpers/http.js';

/**
 * deploy/Dockerfile without a container engine: what the build context would hold (per
 * .dockerignore), and the image's command run with the image's environment. Both are read from
 * the files, so the test follows the Dockerfile when it changes. (No container engine runs on the
 * machines this is developed and tested on, so the image itself is not built here.)
 */

const repoRoot = new URL('../../', import.meta.url).pathname;
const dockerfile = readFileSync(join(repoRoot, 'deploy', 'Dockerfile'), 'utf8');
const ignorePatterns = readFileSync(join(repoRoot, '.dockerignore'), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'));

/** Docker's rule for the patterns this project uses: a name (anywhere below `**​/`) or a prefix glob. */
function ignored(path: string): boolean {
  return ignorePatterns.some((pattern) => {
    const anywhere = pattern.startsWith('**/');
    const body = anywhere ? pattern.slice(3) : pattern;
    const glob = new RegExp(`^${body.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}(/.*)?$`);
    if (glob.test(path)) return true;
    return anywhere && path.split('/').some((_, index, parts) => glob.test(parts.slice(index).join('/')));
  });
}

function dockerEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const match of dockerfile.replace(/\\\n/g, ' ').matchAll(/^ENV\s+(.+)$/gm)) {
    for (const pair of (match[1] as string).trim().split(/\s+/)) {
      const [name, value] = pair.split('=');
      env[name as string] = value as string;
    }
  }
  return env;
}

const dataDir = mkdtempSync(join(tmpdir(), 'callwright-docker-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('deploy/Dockerfile', () => {
  it('the build context leaves out local data, secrets, installs and build output', () => {
    for (const path of [
      'data',
      'data/callwright.db',
      'data/secret.key',
      'sub/dir/secret.key',
      'x.db-wal',
      'node_modules/pg',
      'dist/main.js',
      '.git/HEAD',
    ])
      expect(ignored(path), path).toBe(true);
    for (const path of [
      'src/main.ts',
      'package.json',
      'package-lock.json',
      '.npmrc',
      'tsconfig.build.json',
      'bin/callwright.js',
    ])
      expect(ignored(path), path).toBe(false);
  });

  it('copies the sources before `npm ci`, whose prepare script compiles them', () => {
    const copyAt = dockerfile.indexOf('COPY . .');
    expect(copyAt).toBeGreaterThan(-1);
    expect(dockerfile.search(/^RUN npm ci/m)).toBeGreaterThan(copyAt);
    const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
    expect(manifest.scripts.prepare).toMatch(/tsc/);
  });

  it('runs as the unprivileged user with a data directory it owns, listening on all interfaces', () => {
    const env = dockerEnv();
    expect(env.HOST).toBe('0.0.0.0');
    const dataPath = env.CALLWRIGHT_DATA_DIR as string;
    expect(dockerfile).toMatch(new RegExp(`chown node:node ${dataPath}`));
    expect(dockerfile).toMatch(new RegExp(`VOLUME \\["${dataPath}"\\]`));
    expect(/^USER (\S+)$/m.exec(dockerfile)?.[1]).toBe('node');
  });

  it("the image's command with the image's environment serves /healthz on all interfaces", async () => {
    const command = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)?.[1] ?? '[]') as string[];
    expect(command.slice(0, 2)).toEqual(['node', 'dist/main.js']);
    expect(join(repoRoot, command[1] as string)).toBe(mainScript);
    // The volume is a temp dir here, and free ports stand in for the published ones.
    const env = { ...dockerEnv(), CALLWRIGHT_DATA_DIR: dataDir, PORT: '0', CALLWRIGHT_SIP_PORT: '0' };
    const serve = await startServeProcess(command.slice(3), env);
    try {
      const port = new URL(serve.url).port;
      expect((await request(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      expect(await serve.stop()).toBe(0);
    }
  });
});
