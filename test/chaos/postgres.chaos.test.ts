import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createCallerWithCli,
  postgresServeEnv,
  ServeFleet,
  startWebhookReceiverWithCli,
} from '../helpers/cli.js';
import { postCall } from '../helpers/http.js';
import { createTestDatabase, newTestSchema, terminateOtherBackends } from '../helpers/postgres.js';

/**
 * Chaos on PostgreSQL: 2 API and 3 worker processes (the built `serve --role …`) over one
 * database, 500 calls to a mix of sandbox personas, worker processes killed with SIGKILL at random
 * moments and restarted, and every connection to the database terminated a few times
 * (`pg_terminate_backend`, as a failover or a proxy's idle-kill does). Afterwards no process died
 * of it, every stored call has exactly one terminal status and exactly one call.completed event id
 * reached the receiver, and no call was dialled twice. A creation whose connection was cut may fail
 * (500); every accepted one is stored.
 */

const calls = 500;
const schema = newTestSchema();
// A database of its own: terminating its backends leaves other test files' connections alone.
const database = await createTestDatabase();
const workDir = mkdtempSync(join(tmpdir(), 'callwright-chaos-'));
const personas = [
  '+15550100002',
  '+15550100005',
  '+15550100006',
  '+15550100007',
  '+15550100003',
  '+15550100001',
];

function baseEnv(): Record<string, string> {
  return postgresServeEnv(database.url, workDir, 9, { CALLWRIGHT_DATABASE_SCHEMA: schema });
}

const fleet = new ServeFleet(baseEnv, workDir, 45_000);
const serve = (role: 'api' | 'worker', slot: number) => fleet.serve(role, slot);

afterAll(async () => {
  fleet.killAll('SIGKILL');
  rmSync(workDir, { recursive: true, force: true });
  await database.drop();
});

describe('chaos on PostgreSQL: 2 API and 3 worker processes, workers killed and restarted', () => {
  it(`accepts ${calls} calls and ends each exactly once with exactly one event, dialling none twice`, async () => {
    const {
      accountId: account,
      key,
      agentId: agent,
    } = createCallerWithCli(baseEnv(), {
      name: 'chaos',
      maxLiveCalls: 40,
      keyName: 'chaos',
      maxDurationS: 2,
    });

    const received = new Map<string, Set<string>>();
    let deliveries = 0;
    const receiver = await startWebhookReceiverWithCli(baseEnv(), account, ({ webhookId, callId }) => {
      deliveries++;
      const ids = received.get(callId) ?? new Set<string>();
      ids.add(webhookId);
      received.set(callId, ids);
    });

    const apis = await Promise.all([serve('api', 0), serve('api', 1)]);
    const workers = await Promise.all([serve('worker', 2), serve('worker', 3), serve('worker', 4)]);

    // Kill a random worker every few seconds while calls flow, and start a new one in its slot.
    let kills = 0;
    let chaosOn = true;
    const chaos = (async () => {
      while (chaosOn && kills < 6) {
        await new Promise((done) => setTimeout(done, 2_000 + Math.random() * 3_000));
        if (!chaosOn) break;
        const slot = Math.floor(Math.random() * workers.length);
        const victim = workers[slot];
        if (!victim) continue;
        victim.child.kill('SIGKILL');
        kills++;
        await new Promise((done) => setTimeout(done, 500));
        workers[slot] = await serve('worker', 2 + slot);
      }
    })();
    // Meanwhile, terminate every connection of every process to the database a few times.
    const admin = new pg.Client({ connectionString: database.url });
    // The database is dropped WITH (FORCE) at the end, even if the test fails before closing this.
    admin.on('error', () => undefined);
    await admin.connect();
    let terminations = 0;
    let terminatedBackends = 0;
    const terminator = (async () => {
      while (chaosOn && terminations < 4) {
        await new Promise((done) => setTimeout(done, 2_500 + Math.random() * 2_500));
        if (!chaosOn) break;
        terminatedBackends += await terminateOtherBackends(admin);
        terminations++;
      }
    })();

    const accepted: string[] = [];
    const refusedStatuses: number[] = [];
    const queue = Array.from({ length: calls }, (_, index) => index);
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let index = queue.shift(); index !== undefined; index = queue.shift()) {
          const api = apis[index % apis.length] as { url: string };
          const result = await postCall(api.url, key, {
            agent_id: agent,
            from_number: '+15550009999',
            to_number: personas[index % personas.length],
          });
          if (result.status === 200) accepted.push((result.body as { call_id: string }).call_id);
          else refusedStatuses.push(result.status);
        }
      }),
    );

    const db = admin;
    await db.query(`SET search_path TO ${schema}`);
    const deadline = Date.now() + 240_000;
    for (;;) {
      const open = await db.query(
        `SELECT COUNT(*)::int AS n FROM calls WHERE status NOT IN ('completed','busy','no_answer','failed','canceled')`,
      );
      if (open.rows[0].n === 0) break;
      if (Date.now() > deadline) throw new Error(`${open.rows[0].n} calls still open`);
      await new Promise((done) => setTimeout(done, 500));
    }
    chaosOn = false;
    await chaos;
    await terminator;
    const stored = (await db.query<{ id: string }>('SELECT id FROM calls')).rows.map((row) => row.id);
    for (let waited = 0; received.size < stored.length && waited < 120_000; waited += 500) {
      await new Promise((done) => setTimeout(done, 500));
    }

    const statuses = await db.query(
      'SELECT status, end_reason, COUNT(*)::int AS n FROM calls GROUP BY 1, 2 ORDER BY 1, 2',
    );
    const events = await db.query('SELECT call_id, COUNT(*)::int AS n FROM events GROUP BY call_id');
    const orphanInvites = await db.query(
      'SELECT COUNT(*)::int AS n FROM sandbox_invites WHERE sip_call_id NOT IN (SELECT sip_call_id FROM calls WHERE sip_call_id IS NOT NULL)',
    );
    const invitesPerCall = await db.query(
      'SELECT c.id, COUNT(i.sip_call_id)::int AS n FROM calls c LEFT JOIN sandbox_invites i ON i.sip_call_id = c.sip_call_id GROUP BY c.id',
    );
    await db.end();
    receiver.close();
    const exitsDuringRun = [...fleet.unexpectedExits];
    fleet.killAll('SIGTERM');

    const dialledTwice = invitesPerCall.rows.filter((row) => row.n > 1).length;
    const eventIdsPerCall = stored.map((id) => received.get(id)?.size ?? 0);
    console.log(
      `chaos: ${accepted.length} calls accepted (refused: ${refusedStatuses.join(',') || 'none'}), ` +
        `${kills} workers SIGKILLed and restarted, ${terminations} times all connections terminated ` +
        `(${terminatedBackends} backends); ` +
        `terminal: ${statuses.rows.map((row) => `${row.status}/${row.end_reason ?? '-'} ${row.n}`).join(', ')}; ` +
        `events in the outbox: ${events.rows.length}; event ids received: ${received.size} calls ` +
        `(${eventIdsPerCall.filter((n) => n === 1).length} with exactly one), ${deliveries} deliveries; ` +
        `INVITEs dialled twice: ${dialledTwice}, orphan INVITEs: ${orphanInvites.rows[0].n}`,
    );
    expect(exitsDuringRun).toEqual([]);
    // Only a creation whose connection was cut fails, and only with a 500 (SPEC: unexpected failure).
    expect(refusedStatuses.every((status) => status === 500)).toBe(true);
    // At most the 8 requests in flight when the connections were cut.
    expect(refusedStatuses.length).toBeLessThanOrEqual(terminations * 8);
    expect(stored).toEqual(expect.arrayContaining(accepted));
    expect(statuses.rows.reduce((sum, row) => sum + row.n, 0)).toBe(stored.length);
    expect(events.rows).toHaveLength(stored.length);
    expect(events.rows.every((row) => row.n === 1)).toBe(true);
    expect(eventIdsPerCall.every((n) => n === 1)).toBe(true);
    expect(dialledTwice).toBe(0);
    expect(orphanInvites.rows[0].n).toBe(0);
    expect(kills).toBeGreaterThan(0);
    expect(terminations).toBeGreaterThan(0);
  }, 420_000);
});
