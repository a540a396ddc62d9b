import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/sqliteStore.js';
import { callFixture, startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';

/**
 * The embedded store failing a write (SQLITE_BUSY: another connection holds the write lock past
 * the busy timeout): the request or write that meets it fails, the process carries on, and a call
 * whose ending could not be written is not left live forever: the ending is written, with its one
 * event, once the database takes writes again.
 */

type FullService = Awaited<ReturnType<typeof startFullService>>;
let service: FullService | undefined;
let locker: Database.Database | undefined;

afterEach(async () => {
  if (locker?.inTransaction) locker.exec('ROLLBACK');
  locker?.close();
  locker = undefined;
  await service?.dispose();
  service = undefined;
});

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('SQLite writes refused while another connection holds the lock', () => {
  it('fail the request, not the process; a call whose ending could not be written still ends, once', async () => {
    service = await startFullService();
    const running = service;
    const store = running.store;
    if (!(store instanceof SqliteStore)) throw new Error('expected the embedded store');
    // Waiting 5 s for each refused write would only slow the test down.
    store.db.pragma('busy_timeout = 100');
    const fixture = await callFixture(running, { maxDurationS: 2 });
    const created = await postCall(running.url, fixture.key, {
      agent_id: fixture.agentId,
      from_number: fixture.from,
      to_number: '+15550100007', // answers and stays silent: the call ends at its maximum duration
    });
    expect(created.status).toBe(200);
    const callId = (created.body as { call_id: string }).call_id;
    await until(
      async () => (await store.calls.getById(callId))?.status === 'in_progress',
      'the call to be answered',
    );

    // Another connection takes the write lock and holds it while the call ends.
    locker = new Database(join(running.dataDir, 'callwright.db'));
    locker.exec('BEGIN IMMEDIATE');
    const refused = await postCall(running.url, fixture.key, {
      agent_id: fixture.agentId,
      from_number: fixture.from,
      to_number: '+15550100002',
    });
    expect(refused.status).toBe(500);
    const endingFailed = () => running.logs.text().includes('could not record the end of the call');
    await until(endingFailed, 'the ending write to fail');
    expect((await store.calls.getById(callId))?.status).toBe('in_progress');

    locker.exec('ROLLBACK');
    const ended = await waitForTerminal(running, callId, 30_000);
    expect(ended).toMatchObject({ status: 'completed', endReason: 'max_duration' });
    const events = store.db.prepare('SELECT count(*) AS n FROM events WHERE call_id = ?').get(callId);
    expect(events).toEqual({ n: 1 });

    // The process took all this in its stride: a new call is accepted and ends.
    const next = await postCall(running.url, fixture.key, {
      agent_id: fixture.agentId,
      from_number: fixture.from,
      to_number: '+15550100002',
    });
    expect(next.status).toBe(200);
    await waitForTerminal(running, (next.body as { call_id: string }).call_id);
  }, 90_000);
});
