import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCallerWithCli, mainScript, postgresServeEnv } from '../helpers/cli.js';
import { postCall } from '../helpers/http.js';
import { createNodeNetwork, type NodeNetwork, startNamespacedPostgres } from '../helpers/nodeNetwork.js';

/**
 * Machines, not processes: PostgreSQL, one API node and three worker nodes, each in its own
 * network namespace with its own address on one bridge (as separate hosts on a LAN). A few
 * hundred sandbox calls are queued through the API node; while they run, node A is cut off (its
 * link down: its connections go silent, no RST, no FIN), then its process is killed, as a machine
 * that lost power. Node B then gets SIGTERM and drains. Afterwards:
 * - A's live calls ended failed/interrupted within the lease (30 s, plus one heartbeat of the
 *   survivors), each with exactly one event; none of them was dialled again;
 * - the calls still queued at the cut were placed by the other nodes;
 * - B took no call after its SIGTERM, ended the ones it had without interrupting them, exited 0;
 * - every accepted call is stored, ended exactly once, with one event; no INVITE twice.
 * Every namespace, the bridge, the test's PostgreSQL and every process are removed even on failure.
 */

const calls = 240;
const leaseMs = 30_000;
const heartbeatMs = leaseMs / 3;
const machines = ['db', 'api', 'a', 'b', 'c'] as const;
const personas = ['+15550100002', '+15550100005', '+15550100006', '+15550100003', '+15550100001'];
const terminal = `('completed','busy','no_answer','failed','canceled')`;

let network: NodeNetwork;
let postgres: { url: string; stop(): Promise<void> };
let workDir: string;
const children = new Set<ChildProcess>();

function nodeEnv(machine: string): Record<string, string> {
  const address = network.addressOf(machine);
  return postgresServeEnv(postgres.url, join(workDir, machine), 41, {
    HOST: address,
    LOG_LEVEL: 'info',
    CALLWRIGHT_SIP_BIND: address,
    CALLWRIGHT_SIP_PORT: '5060',
    CALLWRIGHT_RTP_PORTS: '20000-20998',
  });
}

interface Node {
  child: ChildProcess;
  url: string;
  workerId: string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** `serve --role …` inside the machine's namespace; resolves once it listens (and, for a worker, said its id). */
function startNode(machine: 'api' | 'a' | 'b' | 'c'): Promise<Node> {
  const role = machine === 'api' ? 'api' : 'worker';
  const child = spawn(
    'ip',
    ['netns', 'exec', network.namespaceOf(machine), process.execPath, mainScript, 'serve', '--role', role],
    { env: nodeEnv(machine), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.add(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  void exited.then(() => children.delete(child));
  return new Promise((resolve, reject) => {
    let output = '';
    let workerId = '';
    const timer = setTimeout(() => reject(new Error(`${machine} did not start: ${output}`)), 90_000);
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
      workerId ||= /"workerId":"(wrk_[0-9a-f]+)"/.exec(output)?.[1] ?? '';
      const url = /"url":"(http:\/\/[^"]+)"/.exec(output)?.[1];
      if (url && (role === 'api' || workerId)) {
        clearTimeout(timer);
        resolve({
          child,
          url,
          workerId,
          stop: () => {
            child.kill('SIGTERM');
            return exited;
          },
        });
      }
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${machine} exited early: ${output}`));
    });
  });
}

beforeAll(async () => {
  network = createNodeNetwork(machines);
  workDir = mkdtempSync(join(tmpdir(), 'callwright-nodes-'));
  postgres = await startNamespacedPostgres(network.namespaceOf('db'), network.addressOf('db'));
}, 60_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await postgres?.stop();
  network?.destroy();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe('nodes, not processes: a worker machine lost, another drained', () => {
  it(`ends a lost node's calls as interrupted within the lease and loses or re-dials none of ${calls}`, async () => {
    const { key, agentId } = createCallerWithCli(nodeEnv('api'), {
      name: 'nodes',
      maxLiveCalls: 36,
      keyName: 'nodes',
      maxDurationS: 2,
    });
    const api = await startNode('api');
    const [a, b, c] = await Promise.all([startNode('a'), startNode('b'), startNode('c')]);
    const db = new pg.Client({ connectionString: postgres.url });
    db.on('error', () => undefined);
    await db.connect();
    await db.query('SET search_path TO callwright');

    const accepted: string[] = [];
    const refused: number[] = [];
    const queue = Array.from({ length: calls }, (_, index) => index);
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let index = queue.shift(); index !== undefined; index = queue.shift()) {
          const result = await postCall(api.url, key, {
            agent_id: agentId,
            from_number: '+15550009999',
            to_number: personas[index % personas.length],
          });
          if (result.status === 200) accepted.push((result.body as { call_id: string }).call_id);
          else refused.push(result.status);
        }
      }),
    );
    const count = async (where: string, params: unknown[] = []) =>
      (await db.query(`SELECT COUNT(*)::int AS n FROM calls WHERE ${where}`, params)).rows[0].n as number;

    // Cut A off once it holds live calls and some calls are still queued.
    for (let waited = 0; ; waited += 100) {
      const onA = await count(`worker_id = $1 AND status IN ('dialing','ringing','in_progress')`, [
        a.workerId,
      ]);
      if (onA >= 3) break;
      if (waited > 60_000) throw new Error('node A never held 3 live calls');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const cutAtMs = Date.now();
    network.cutOff('a');
    // Whatever A committed before the cut has landed by now; from here on it cannot write.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const liveOnA = (
      await db.query<{ id: string }>(
        `SELECT id FROM calls WHERE worker_id = $1 AND status IN ('dialing','ringing','in_progress')`,
        [a.workerId],
      )
    ).rows.map((row) => row.id);
    const queuedAtCut = (
      await db.query<{ id: string }>(`SELECT id FROM calls WHERE status = 'queued'`)
    ).rows.map((row) => row.id);
    // The machine is gone: its processes die with it.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    a.child.kill('SIGKILL');

    // B drains: it stops claiming and ends the calls it has, then exits by itself.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const liveOnBAtTerm = (
      await db.query<{ id: string }>(
        `SELECT id FROM calls WHERE worker_id = $1 AND status IN ('dialing','ringing','in_progress')`,
        [b.workerId],
      )
    ).rows.map((row) => row.id);
    const termAtMs = Date.now();
    const bExit = await Promise.race([
      b.stop(),
      new Promise<string>((resolve) => setTimeout(() => resolve('still running after 30 s'), 30_000)),
    ]);
    const drainedInMs = Date.now() - termAtMs;

    for (let waited = 0; ; waited += 500) {
      const open = await count(`status NOT IN ${terminal}`);
      if (open === 0) break;
      if (waited > 90_000) {
        const stuck = await db.query(
          `SELECT state, wait_event_type, wait_event, left(query, 80) AS query FROM pg_stat_activity WHERE datname = 'postgres' AND pid <> pg_backend_pid()`,
        );
        throw new Error(`${open} calls still open; sessions: ${JSON.stringify(stuck.rows)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const rows = (
      await db.query<{
        id: string;
        status: string;
        end_reason: string | null;
        worker_id: string | null;
        dialing_at: Date | null;
        ended_at: Date;
      }>('SELECT id, status, end_reason, worker_id, dialing_at, ended_at FROM calls')
    ).rows;
    const byId = new Map(rows.map((row) => [row.id, row]));
    const events = await db.query('SELECT call_id, COUNT(*)::int AS n FROM events GROUP BY call_id');
    const invitesPerCall = await db.query<{ id: string; n: number }>(
      'SELECT c.id, COUNT(i.sip_call_id)::int AS n FROM calls c LEFT JOIN sandbox_invites i ON i.sip_call_id = c.sip_call_id GROUP BY c.id',
    );
    const orphanInvites = await db.query(
      'SELECT COUNT(*)::int AS n FROM sandbox_invites WHERE sip_call_id NOT IN (SELECT sip_call_id FROM calls WHERE sip_call_id IS NOT NULL)',
    );
    await db.end();

    const aEndings = liveOnA.map((id) => byId.get(id));
    const aLatestEndS = Math.max(...aEndings.map((row) => ((row?.ended_at.getTime() ?? 0) - cutAtMs) / 1000));
    const queuedPlacedBy = new Map<string, number>();
    for (const id of queuedAtCut) {
      const worker = byId.get(id)?.worker_id ?? 'none';
      queuedPlacedBy.set(worker, (queuedPlacedBy.get(worker) ?? 0) + 1);
    }
    const bAfterTerm = rows.filter(
      (row) => row.worker_id === b.workerId && (row.dialing_at?.getTime() ?? 0) > termAtMs + 500,
    ).length;
    const interruptedElsewhere = rows.filter(
      (row) => row.status === 'failed' && row.end_reason === 'interrupted' && !liveOnA.includes(row.id),
    );
    const statuses = new Map<string, number>();
    for (const row of rows) {
      const label = `${row.status}/${row.end_reason ?? '-'}`;
      statuses.set(label, (statuses.get(label) ?? 0) + 1);
    }
    console.log(
      `nodes: ${accepted.length} calls accepted (refused: ${refused.join(',') || 'none'}); ` +
        `A cut off with ${liveOnA.length} live calls, last one ended ${aLatestEndS.toFixed(1)} s after the cut; ` +
        `${queuedAtCut.length} queued at the cut, placed by ${[...queuedPlacedBy].map(([w, n]) => `${w === b.workerId ? 'B' : w === c.workerId ? 'C' : w === a.workerId ? 'A' : w} ${n}`).join(', ')}; ` +
        `B drained ${liveOnBAtTerm.length} calls in ${drainedInMs} ms (exit ${bExit}), took ${bAfterTerm} after SIGTERM; ` +
        `terminal: ${[...statuses].map(([label, n]) => `${label} ${n}`).join(', ')}; ` +
        `interrupted besides A's: ${interruptedElsewhere.map((row) => `${row.status} on ${row.worker_id === b.workerId ? 'B' : row.worker_id === c.workerId ? 'C' : row.worker_id === a.workerId ? 'A' : row.worker_id}${liveOnBAtTerm.includes(row.id) ? ' (live at SIGTERM)' : ''}`).join(', ') || 'none'}; ` +
        `dialled twice: ${invitesPerCall.rows.filter((row) => row.n > 1).length}, orphan INVITEs: ${orphanInvites.rows[0].n}`,
    );

    expect(refused).toEqual([]);
    expect(rows.map((row) => row.id)).toEqual(expect.arrayContaining(accepted));
    expect(rows).toHaveLength(accepted.length);
    // A's live calls: failed/interrupted, within the lease plus one heartbeat of a survivor (+ slack).
    expect(liveOnA.length).toBeGreaterThan(0);
    for (const row of aEndings) {
      expect(row?.status).toBe('failed');
      expect(row?.end_reason).toBe('interrupted');
    }
    expect(aLatestEndS).toBeLessThanOrEqual((leaseMs + heartbeatMs + 5_000) / 1000);
    // Only A's calls failed as interrupted. B's drained calls ended cleanly: on their own terms, or
    // by our side after the agent's sentence (completed/interrupted, the 'shutdown' ending).
    expect(interruptedElsewhere.map((row) => row.id)).toEqual([]);
    // Queued calls moved to the surviving nodes.
    expect(queuedAtCut.length).toBeGreaterThan(0);
    for (const id of queuedAtCut) expect([b.workerId, c.workerId]).toContain(byId.get(id)?.worker_id);
    // SIGTERM drains: B exits 0 by itself, takes nothing new.
    expect(bExit).toBe(0);
    expect(bAfterTerm).toBe(0);
    // Exactly one event per call; no INVITE twice, none unaccounted for.
    expect(events.rows).toHaveLength(rows.length);
    expect(events.rows.every((row) => row.n === 1)).toBe(true);
    expect(invitesPerCall.rows.filter((row) => row.n > 1)).toEqual([]);
    expect(orphanInvites.rows[0].n).toBe(0);
    // The API node and C lived through it.
    expect(api.child.exitCode).toBeNull();
    expect(c.child.exitCode).toBeNull();
  }, 280_000);
});
