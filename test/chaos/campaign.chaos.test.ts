import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createCallerWithCli, postgresServeEnv, ServeFleet } from '../helpers/cli.js';
import { request } from '../helpers/http.js';
import { createTestDatabase, newTestSchema } from '../helpers/postgres.js';

/**
 * A campaign under chaos on PostgreSQL: one API and three worker processes (the built `serve
 * --role …`), each running a campaign scheduler over the same contacts, two workers SIGKILLed
 * mid-campaign and restarted. Sampled every 100 ms, the campaign never has more contacts on a call
 * than its cap; when it completes every contact is finished, no number got two INVITEs (there are
 * no retries, so one attempt each), and each contact has exactly as many calls as attempts.
 */

const contactCount = 240;
const cap = 6;
const schema = newTestSchema();
const database = await createTestDatabase();
const workDir = mkdtempSync(join(tmpdir(), 'callwright-campaign-chaos-'));

function baseEnv(): Record<string, string> {
  return postgresServeEnv(database.url, workDir, 11, { CALLWRIGHT_DATABASE_SCHEMA: schema });
}

const fleet = new ServeFleet(baseEnv, workDir, 52_000);
const serve = (role: 'api' | 'worker', slot: number) => fleet.serve(role, slot);

afterAll(async () => {
  fleet.killAll('SIGKILL');
  rmSync(workDir, { recursive: true, force: true });
  await database.drop();
});

describe('a campaign on PostgreSQL with three schedulers, two of them killed mid-campaign', () => {
  it('never exceeds the cap and dials no contact twice for one attempt', async () => {
    const { key, agentId } = createCallerWithCli(baseEnv(), {
      name: 'campaign chaos',
      maxLiveCalls: 40,
      keyName: 'chaos',
      maxDurationS: 2,
    });
    const api = await serve('api', 0);
    const workers = await Promise.all([serve('worker', 1), serve('worker', 2), serve('worker', 3)]);
    const personas = ['+15550100006', '+15550100002', '+15550100005'];
    const contacts = Array.from({ length: contactCount }, (_, index) => ({
      to_number: `${personas[index % personas.length]}${String(index).padStart(4, '0')}`,
    }));
    const created = await request(`${api.url}/v1/campaigns`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        agent_id: agentId,
        from_number: '+15550009999',
        calling_window: { start: '00:00', end: '23:59' },
        time_zone: 'UTC',
        max_concurrency: cap,
        calls_per_minute: 1_200,
        contacts,
      }),
    });
    expect(created.status).toBe(201);
    const campaignId = (created.body as { campaign_id: string }).campaign_id;

    const db = new pg.Client({ connectionString: database.url });
    db.on('error', () => undefined);
    await db.connect();
    await db.query(`SET search_path TO ${schema}`);
    let maxCalling = 0;
    let kills = 0;
    const startedAt = Date.now();
    for (;;) {
      const { rows } = await db.query<{ state: string; n: number }>(
        'SELECT state, COUNT(*)::int AS n FROM campaign_contacts WHERE campaign_id = $1 GROUP BY state',
        [campaignId],
      );
      const counts = Object.fromEntries(rows.map((row) => [row.state, row.n]));
      maxCalling = Math.max(maxCalling, counts.calling ?? 0);
      const finished = (counts.done ?? 0) + (counts.do_not_call ?? 0) + (counts.expired ?? 0);
      // Kill a worker after a quarter and after half of the list, and start another in its place.
      if (kills < 2 && finished >= (contactCount * (kills + 1)) / 4) {
        const slot = kills;
        workers[slot]?.child.kill('SIGKILL');
        kills++;
        workers[slot] = await serve('worker', 1 + slot);
      }
      const status = await db.query('SELECT status FROM campaigns WHERE id = $1', [campaignId]);
      if (status.rows[0]?.status === 'completed') break;
      if (Date.now() - startedAt > 240_000)
        throw new Error(`campaign still running: ${JSON.stringify(counts)}`);
      await new Promise((done) => setTimeout(done, 100));
    }
    const states = await db.query('SELECT state, COUNT(*)::int AS n FROM campaign_contacts GROUP BY state');
    const invitesPerNumber = await db.query<{ to_number: string; n: number }>(
      'SELECT to_number, COUNT(*)::int AS n FROM sandbox_invites GROUP BY to_number HAVING COUNT(*) > 1',
    );
    const callsVersusAttempts = await db.query<{ id: string; attempts: number; calls: number }>(
      `SELECT c.id, c.attempts, COUNT(a.call_id)::int AS calls FROM campaign_contacts c
       LEFT JOIN campaign_attempts a ON a.contact_id = c.id GROUP BY c.id, c.attempts
       HAVING COUNT(a.call_id) <> c.attempts`,
    );
    const interrupted = await db.query(
      "SELECT COUNT(*)::int AS n FROM calls WHERE end_reason = 'interrupted'",
    );
    await db.end();
    fleet.killAll('SIGTERM');
    console.log(
      `campaign chaos: ${contactCount} contacts, ${kills} workers SIGKILLed; states ${JSON.stringify(states.rows)}; ` +
        `at most ${maxCalling} on a call (cap ${cap}); calls interrupted by the kills: ${interrupted.rows[0].n}`,
    );
    expect(fleet.unexpectedExits).toEqual([]);
    expect(kills).toBe(2);
    expect(states.rows).toEqual([{ state: 'done', n: contactCount }]);
    expect(maxCalling).toBeLessThanOrEqual(cap);
    expect(invitesPerNumber.rows).toEqual([]);
    expect(callsVersusAttempts.rows).toEqual([]);
  }, 300_000);
});
