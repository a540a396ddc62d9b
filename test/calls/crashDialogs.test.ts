import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createCallerWithCli, loopbackServeEnv, startServeProcess } from '../helpers/cli.js';
import { postCall } from '../helpers/http.js';
import { freeEvenUdpPort, freeUdpPort } from '../sipp/harness.js';

/**
 * BYE for a dead process's dialogs (issue 12, second half of defect 10): a call through a trunk is
 * answered by SIPp, `serve` is SIGKILLed with the call up, and the restarted process must end the
 * carrier's leg with a BYE (answering SIPp's digest challenge with the trunk's credentials).
 * SIPp's scenario waits for that BYE; its exit code is the verdict.
 */

const dataDir = mkdtempSync(join(tmpdir(), 'callwright-crash-bye-'));
const rtpBase = 33_000 + (process.pid % 100) * 100;
const env = loopbackServeEnv(dataDir, rtpBase, {
  CALLWRIGHT_RING_TIMEOUT_S: '10',
  // SIPp plays the carrier on loopback: a private PBX as far as the trunk guard is concerned.
  CALLWRIGHT_TRUNK_ALLOW_PRIVATE: 'true',
});
const children: ChildProcess[] = [];

afterAll(() => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

/** Starts SIPp as the carrier's far end; killed after `limitMs` whatever happens. */
async function startCarrier(limitMs: number) {
  const port = await freeUdpPort();
  const mediaPort = await freeEvenUdpPort();
  const controlPort = await freeUdpPort();
  const scenario = resolve(import.meta.dirname, '../sipp/uas_bye_after_restart.xml');
  const child = spawn(
    'sipp',
    [
      ...['-sf', scenario, '-i', '127.0.0.1', '-p', String(port), '-cp', String(controlPort)],
      ...['-mi', '127.0.0.1', '-mp', String(mediaPort), '-m', '1', '-nostdin'],
      ...['-timeout', `${Math.round(limitMs / 1000)}s`, '-timeout_error'],
    ],
    { cwd: dataDir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const killer = setTimeout(() => child.kill('SIGKILL'), limitMs + 5_000);
  const exited = new Promise<{ code: number | null; output: string }>((done) =>
    child.on('exit', (code) => {
      clearTimeout(killer);
      done({ code, output });
    }),
  );
  await new Promise((done) => setTimeout(done, 200));
  return { port, exited };
}

describe('SIGKILL with a trunk call up', () => {
  it('sends the BYE for its dialog from the restarted process, with the trunk credentials', async () => {
    const carrier = await startCarrier(80_000);
    // Both processes use one SIP port, as a deployment does (5060): SIPp answers on the port the
    // call came from, not on the BYE's Via.
    const serveEnv = { ...env, CALLWRIGHT_SIP_PORT: String(await freeUdpPort()) };
    const { key, agentId: agent } = createCallerWithCli(env, {
      name: 'crash-bye',
      maxDurationS: 120,
      trunk: {
        name: 'carrier',
        uri: `sip:127.0.0.1:${carrier.port}`,
        username: 'trunkuser',
        password: 's3cret',
      },
    });

    const first = await startServeProcess([], serveEnv);
    children.push(first.child);
    const created = await postCall(first.url, key, {
      agent_id: agent,
      from_number: '+15550009999',
      to_number: '+14155550123',
    });
    expect(created.status).toBe(200);
    const callId = (created.body as { call_id: string }).call_id;

    // Wait (bounded) until the call is up and its dialog is stored, then kill the process.
    const db = new Database(join(dataDir, 'callwright.db'));
    const read = () =>
      db.prepare('SELECT status, end_reason, sip_call_id FROM calls WHERE id = ?').get(callId) as {
        status: string;
        end_reason: string | null;
        sip_call_id: string | null;
      };
    const dialogStored = () => {
      try {
        return db.prepare('SELECT sip_dialog IS NOT NULL FROM calls WHERE id = ?').pluck().get(callId) === 1;
      } catch {
        return false; // no such column: nothing stores dialogs
      }
    };
    for (let waitedMs = 0; waitedMs < 30_000; waitedMs += 100) {
      if (read().status === 'in_progress' && dialogStored()) break;
      if (read().status === 'in_progress' && waitedMs > 10_000) break;
      await new Promise((done) => setTimeout(done, 100));
    }
    expect(read().status).toBe('in_progress');
    first.child.kill('SIGKILL');
    await new Promise((done) => first.child.once('exit', done));

    const second = await startServeProcess([], serveEnv);
    children.push(second.child);
    const verdict = await carrier.exited;
    for (let waitedMs = 0; read().status !== 'failed' && waitedMs < 20_000; waitedMs += 100) {
      await new Promise((done) => setTimeout(done, 100));
    }
    const call = read();
    db.close();
    await second.stop();

    expect(call).toMatchObject({ status: 'failed', end_reason: 'interrupted' });
    expect(verdict.code, verdict.output).toBe(0);
  }, 150_000);
});
