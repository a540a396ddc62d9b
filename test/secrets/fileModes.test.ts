import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { startService } from '../../src/server.js';
import { callFixture, loopbackServiceConfig, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';
import { LogCapture } from '../helpers/service.js';

/**
 * The data directory holds the database, the secret key and the recordings: made 0700/0600
 * whatever the umask, and tightened at start when an earlier version left them readable.
 */

const parent = mkdtempSync(join(tmpdir(), 'callwright-modes-'));
const dataDir = join(parent, 'data');
let previousUmask = 0;

beforeAll(() => {
  previousUmask = process.umask(0o022);
});

afterAll(() => {
  process.umask(previousUmask);
  rmSync(parent, { recursive: true, force: true });
});

function modeOf(path: string): string {
  return (statSync(path).mode & 0o777).toString(8).padStart(4, '0');
}

function start() {
  return startService(loopbackServiceConfig(dataDir), createLogger('info', new LogCapture()));
}

/** Every file and folder the service keeps, with its mode. */
function modes(): Record<string, string> {
  const recordings = join(dataDir, 'recordings');
  const paths = [
    dataDir,
    join(dataDir, 'callwright.db'),
    join(dataDir, 'callwright.db-wal'),
    join(dataDir, 'callwright.db-shm'),
    join(dataDir, 'secret.key'),
    recordings,
    ...(existsSync(recordings) ? readdirSync(recordings).map((name) => join(recordings, name)) : []),
  ];
  return Object.fromEntries(paths.filter((path) => existsSync(path)).map((path) => [path, modeOf(path)]));
}

function expectPrivate(found: Record<string, string>): void {
  const expected = Object.fromEntries(
    Object.keys(found).map((path) => [path, statSync(path).isDirectory() ? '0700' : '0600']),
  );
  expect(found).toEqual(expected);
}

describe('file modes under umask 022', () => {
  it('a new data directory, database, key and recording are private to the service user', async () => {
    const service = await start();
    try {
      const fixture = await callFixture(service);
      const created = await postCall(service.url, fixture.key, {
        agent_id: fixture.agentId,
        from_number: fixture.from,
        to_number: '+15550100006',
      });
      const call = await waitForTerminal(service, (created.body as { call_id: string }).call_id, 30_000);
      expect(call.recordingPath).toBeTruthy();
      const found = modes();
      expect(Object.keys(found)).toHaveLength(7);
      expectPrivate(found);
    } finally {
      await service.close();
    }
  });

  it('files an earlier version left readable are tightened at start', async () => {
    for (const path of Object.keys(modes())) chmodSync(path, statSync(path).isDirectory() ? 0o755 : 0o644);
    const service = await start();
    try {
      const found = modes();
      expect(Object.keys(found).length).toBeGreaterThanOrEqual(5);
      expectPrivate(found);
    } finally {
      await service.close();
    }
  });
});
