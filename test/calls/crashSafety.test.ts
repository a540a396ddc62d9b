import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createCallerWithCli,
  loopbackServeEnv,
  startServeProcess,
  startWebhookReceiverWithCli,
} from '../helpers/cli.js';
import { postCall } from '../helpers/http.js';

/**
 * Crash safety of the embedded mode: `serve` is killed with SIGKILL while calls are queued,
 * dialling and live; after a restart every call reaches a terminal status, the calls that were
 * in flight end failed/interrupted, and no call was dialled twice (the sandbox's INVITE record).
 */

const dataDir = mkdtempSync(join(tmpdir(), 'callwright-crash-'));
const rtpBase = 30_000 + (process.pid % 100) * 100;
const env = loopbackServeEnv(dataDir, rtpBase, { CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true' });
const children: ChildProcess[] = [];

async function serve(): Promise<{ url: string; child: ChildProcess }> {
  const started = await startServeProcess([], env);
  children.push(started.child);
  return started;
}

afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

describe('SIGKILL with calls queued, dialling and live', () => {
  it('ends every call exactly once after a restart and dials none twice', async () => {
    const {
      accountId: account,
      key,
      agentId: agent,
    } = createCallerWithCli(env, {
      name: 'crash',
      maxLiveCalls: 4,
      maxDurationS: 3,
    });
    // A real receiver: every delivery is counted by its webhook-id (at-least-once allows repeats).
    const deliveries = new Map<string, number>();
    const eventCallIds = new Map<string, string>();
    const receiver = await startWebhookReceiverWithCli(env, account, ({ webhookId, callId }) => {
      deliveries.set(webhookId, (deliveries.get(webhookId) ?? 0) + 1);
      eventCallIds.set(webhookId, callId);
    });

    const first = await serve();
    const callIds: string[] = [];
    // Unique destinations (all the "person" persona) so the INVITE record names each call.
    for (let i = 0; i < 10; i++) {
      const to = `+1555020${String(i).padStart(4, '0')}`;
      const result = await postCall(first.url, key, {
        agent_id: agent,
        from_number: '+15550009999',
        to_number: to,
      });
      expect(result.status).toBe(200);
      callIds.push((result.body as { call_id: string }).call_id);
    }
    await new Promise((done) => setTimeout(done, 1_500));
    first.child.kill('SIGKILL');
    await new Promise((done) => first.child.once('exit', done));

    const db = new Database(join(dataDir, 'callwright.db'));
    const statusAtKill = new Map(
      (db.prepare('SELECT id, status FROM calls').all() as { id: string; status: string }[]).map((row) => [
        row.id,
        row.status,
      ]),
    );
    const inFlight = callIds.filter((id) =>
      ['dialing', 'ringing', 'in_progress'].includes(statusAtKill.get(id) ?? ''),
    );
    const queued = callIds.filter((id) => statusAtKill.get(id) === 'queued');
    expect(inFlight.length).toBeGreaterThan(0);
    expect(queued.length).toBeGreaterThan(0);
    const invitesBefore = db.prepare('SELECT COUNT(*) FROM sandbox_invites').pluck().get() as number;

    const second = await serve();
    const deadline = Date.now() + 40_000;
    let statuses: { id: string; status: string; end_reason: string | null }[] = [];
    for (;;) {
      statuses = db.prepare('SELECT id, status, end_reason FROM calls').all() as typeof statuses;
      if (
        statuses.every((row) => ['completed', 'busy', 'no_answer', 'failed', 'canceled'].includes(row.status))
      )
        break;
      if (Date.now() > deadline) throw new Error(`not all terminal: ${JSON.stringify(statuses)}`);
      await new Promise((done) => setTimeout(done, 200));
    }
    // Every call's one event reaches the receiver (the delivery worker drains after the restart).
    for (
      let waited = 0;
      new Set(eventCallIds.values()).size < callIds.length && waited < 20_000;
      waited += 200
    ) {
      await new Promise((done) => setTimeout(done, 200));
    }
    second.child.kill('SIGTERM');
    receiver.close();
    await new Promise((done) => second.child.once('exit', done));

    const byId = new Map(statuses.map((row) => [row.id, row]));
    for (const id of inFlight)
      expect(byId.get(id)).toMatchObject({ status: 'failed', end_reason: 'interrupted' });
    for (const id of queued) expect(byId.get(id)).toMatchObject({ status: 'completed' });
    const invites = db
      .prepare('SELECT to_number, COUNT(*) AS n FROM sandbox_invites GROUP BY to_number')
      .all() as {
      to_number: string;
      n: number;
    }[];
    const dialledTwice = invites.filter((row) => row.n > 1);
    const invitesAfter = db.prepare('SELECT COUNT(*) FROM sandbox_invites').pluck().get() as number;
    const events = db.prepare('SELECT call_id, COUNT(*) AS n FROM events GROUP BY call_id').all() as {
      n: number;
    }[];
    // Each call's Call-ID is stored before its INVITE leaves: an INVITE no call points to would be a second dial.
    const orphanInvites = db
      .prepare(
        'SELECT COUNT(*) FROM sandbox_invites WHERE sip_call_id NOT IN (SELECT sip_call_id FROM calls WHERE sip_call_id IS NOT NULL)',
      )
      .pluck()
      .get() as number;
    db.close();
    const receivedCallIds = [...eventCallIds.values()];
    console.log(
      `crash test: ${callIds.length} calls; at SIGKILL ${queued.length} queued, ${inFlight.length} in flight; ` +
        `INVITEs ${invitesBefore} before restart, ${invitesAfter} in all; dialled twice: ${dialledTwice.length}; ` +
        `events: ${events.length} calls with ${events.reduce((sum, row) => sum + row.n, 0)} events; ` +
        `receiver: ${deliveries.size} event ids for ${new Set(receivedCallIds).size} calls, ` +
        `${[...deliveries.values()].reduce((sum, n) => sum + n, 0)} deliveries`,
    );
    expect(new Set(receivedCallIds).size).toBe(callIds.length);
    expect(receivedCallIds).toHaveLength(callIds.length);
    expect(dialledTwice).toEqual([]);
    expect(orphanInvites).toBe(0);
    expect(invitesAfter - invitesBefore).toBe(queued.length);
    expect(events).toHaveLength(callIds.length);
    expect(events.every((row) => row.n === 1)).toBe(true);
  }, 90_000);
});
