import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/openStore.js';
import { loopbackServeEnv, runCliJson, type ServeProcess, startServeProcess } from '../helpers/cli.js';
import { heardOnTheLine } from '../helpers/recordingSilences.js';

/**
 * Issue 38, item 6: `serve` told to stop (SIGTERM, as Ctrl-C's SIGINT) during a call lets the agent
 * finish the sentence it is speaking — not cut mid-word — and then ends the call cleanly
 * (completed / interrupted) well within the grace period. A real `serve` process, a sandbox call,
 * the recording read afterwards.
 */

const repoRoot = new URL('../../', import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), 'callwright-shutdown-sentence-'));
const graceS = 8;
const env = loopbackServeEnv(dataDir, 45_000 + (process.pid % 40) * 100, {
  CALLWRIGHT_SHUTDOWN_GRACE_S: String(graceS),
  LOG_LEVEL: 'info',
});
const greeting =
  'Hello Ann, this is Bright Smile Dental calling to confirm your appointment on Tuesday. Can you make it?';
let service: ServeProcess | undefined;

const json = (args: string[]) => runCliJson(dataDir, args, env);

afterAll(async () => {
  if (service && service.child.exitCode === null) await service.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

interface ShownCall {
  status: string;
  end_reason: string | null;
  timeline: { status: string; at: string }[];
  transcript: { role: string; text: string; start_ms: number; end_ms: number }[];
  recording_path: string | null;
}

describe('shutdown during a call (issue 38, item 6)', () => {
  it('the agent finishes the sentence it is speaking, then the call ends completed / interrupted', async () => {
    await json(['keys', 'create', '--name', 'shutdown']);
    const agentId = (
      await json([
        ...['agents', 'create', '--name', 'Appointments', '--prompt', 'Confirm the appointment.'],
        ...['--script', join(repoRoot, 'examples/agents/appointment-confirmation.json')],
        ...['--variable', 'customer_name!', '--variable', 'appointment_day=Tuesday'],
      ])
    ).agent_id as string;
    await json(['numbers', 'add', '+15550009999']);
    service = await startServeProcess([], env, 60_000);
    const callId = (
      await json([
        ...['calls', 'place', '--agent', agentId, '--from', '+15550009999', '--to', '+15550100001'],
        ...['--var', 'customer_name=Ann'],
      ])
    ).call_id as string;
    const show = async () => (await json(['calls', 'show', callId])) as unknown as ShownCall;

    // Answered: the greeting (about 6 s) starts at once. The signal comes 3 s into it. The store is
    // read directly (beside the service, as a second reader of its SQLite file): a CLI process a
    // poll would be too slow a clock on a loaded machine.
    const reader = openSqliteStore(join(dataDir, 'callwright.db'));
    let answeredAtMs: number | null = null;
    try {
      const deadline = Date.now() + 60_000;
      while (answeredAtMs === null) {
        const inProgressAt = (await reader.calls.getById(callId))?.inProgressAt ?? null;
        if (inProgressAt !== null) answeredAtMs = Date.parse(inProgressAt);
        else if (Date.now() > deadline) throw new Error('the call was not answered');
        else await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await reader.close();
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, answeredAtMs + 3_000 - Date.now())));
    const signalAtMs = Date.now() - answeredAtMs;
    const stoppedAt = Date.now();
    expect(await service.stop()).toBe(0);
    const stopMs = Date.now() - stoppedAt;

    const call = await show();
    expect(call.status).toBe('completed');
    expect(call.end_reason).toBe('interrupted');
    const [first] = call.transcript;
    // The line the agent was speaking at the signal, whole.
    expect(first?.role).toBe('agent');
    expect(first?.start_ms).toBeLessThan(signalAtMs);
    expect(first?.end_ms).toBeGreaterThan(signalAtMs);
    expect(first?.text).toBe(greeting);
    // Nothing after it from the agent, and the service was gone within the grace.
    expect(call.transcript.filter((line) => line.role === 'agent')).toHaveLength(1);
    expect(stopMs).toBeLessThan(graceS * 1000);

    // The recording: the agent's sound runs to the end of the line, past the signal.
    const path = call.recording_path as string;
    const wavPath = isAbsolute(path) ? path : join(dataDir, path);
    expect(existsSync(wavPath)).toBe(true);
    const heard = heardOnTheLine(wavPath);
    const lineEndMs = first?.end_ms ?? 0;
    expect(heard.agentSoundAfter(signalAtMs + 500)).not.toBeNull();
    expect(heard.agentSoundAfter(lineEndMs - 600)).not.toBeNull();
  }, 150_000);
});
