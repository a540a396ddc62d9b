import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { addTrunk } from '../../src/admin/trunks.js';
import { loadSecretBox } from '../../src/secrets/secretBox.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';
import { agentChannel, calleeChannel, loudFrames, wavSamples } from '../helpers/recordings.js';
import { freeEvenUdpPort, freeUdpPort } from './harness.js';

/**
 * A far end that never sends RTP and never answers the BYE (SIPp, over a trunk), issue 35 defects
 * 2 and 3: the call's clock runs on the media clock (the transcript's times and the recording's
 * length are those of the agent's speech, the callee's channel silence), and the call is over when
 * its BYE is handed to its transaction (RFC 3261 §15.1.1) — not 32 s later, after the agent asked
 * an empty line whether anyone is still there.
 */

const workDir = mkdtempSync(join(tmpdir(), 'callwright-sipp-silent-'));
let service: Awaited<ReturnType<typeof startFullService>>;

const goodbye =
  'Hello, this is Bright Smile Dental. Your appointment on Tuesday is confirmed. Thank you, goodbye.';

beforeAll(async () => {
  service = await startFullService({ CALLWRIGHT_TRUNK_ALLOW_PRIVATE: 'true' });
});

afterAll(async () => {
  await service?.dispose();
  rmSync(workDir, { recursive: true, force: true });
});

describe('a far end that sends no RTP and ignores the BYE', () => {
  it('ends the call when the BYE leaves, with a clock and a recording as long as the agent spoke', async () => {
    const sipPort = await freeUdpPort();
    const mediaPort = await freeEvenUdpPort();
    const controlPort = await freeUdpPort();
    const scenario = resolve(import.meta.dirname, 'uas_silent_ignores_bye.xml');
    const sipp = spawn(
      'sipp',
      ['-sf', scenario, '-i', '127.0.0.1', '-p', String(sipPort), '-cp', String(controlPort)].concat([
        '-mi',
        '127.0.0.1',
        '-mp',
        String(mediaPort),
        '-m',
        '1',
        '-timeout',
        '40s',
        '-timeout_error',
        '-nostdin',
      ]),
      { cwd: workDir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let sippOutput = '';
    const keep = (chunk: Buffer) => {
      sippOutput = (sippOutput + chunk.toString()).slice(-3000);
    };
    sipp.stdout.on('data', keep);
    sipp.stderr.on('data', keep);
    const killer = setTimeout(() => sipp.kill('SIGKILL'), 50_000);
    const exited = new Promise<number | null>((done) => sipp.on('exit', (code) => done(code)));
    await new Promise((done) => setTimeout(done, 200));
    try {
      const account = await service.store.accounts.create({ name: 'sipp-silent' });
      const secretBox = loadSecretBox({ configuredKeyBase64: null, dataDir: service.dataDir });
      await addTrunk(
        service.store,
        secretBox,
        account.id,
        { name: 'sipp', uri: `sip:127.0.0.1:${sipPort}` },
        { allowPrivate: true },
      );
      await addPhoneNumber(service.store, account.id, '+15550009998', 'sipp');
      const { key } = await createApiKey(service.store, account.id, 'sipp');
      const agent = await createAgent(service.store, account.id, {
        name: 'Says it and goes',
        prompt: 'p',
        brain: 'script',
        script: { start: 'bye', nodes: { bye: { say: goodbye, end: true } } },
        maxDurationS: 60,
      });
      const posted = await postCall(service.url, key, {
        agent_id: agent.id,
        from_number: '+15550009998',
        to_number: '+14155550124',
      });
      expect(posted.status).toBe(200);
      const call = await waitForTerminal(service, (posted.body as { call_id: string }).call_id, 45_000);
      // The call is over while the far end still sits on the BYE (it stays up 8 s after it).
      const sippRunning = sipp.exitCode === null;
      expect(sippRunning, sippOutput).toBe(true);

      expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
      const said = call.transcript.filter((line) => line.role === 'agent' && !line.event);
      expect(said.map((line) => line.text).join(' ')).toBe(goodbye);
      expect(said.some((line) => /still there/i.test(line.text))).toBe(false);
      // The agent spoke for several seconds; the transcript's clock says so.
      const lastEndMs = Math.max(...said.map((line) => line.end_ms));
      expect(lastEndMs).toBeGreaterThan(3_000);
      const durationMs = Date.parse(call.endedAt as string) - Date.parse(call.inProgressAt as string);
      // Ended when the BYE left (after the goodbye), not after BYE's 32 s transaction timeout.
      expect(durationMs).toBeGreaterThanOrEqual(lastEndMs - 500);
      expect(durationMs).toBeLessThan(lastEndMs + 8_000);

      // The recording is as long as the call and holds the agent's whole goodbye; the callee's
      // channel is silence, not missing.
      const wav = readFileSync(call.recordingPath as string);
      const recordedMs = (wavSamples(wav).length / 2 / 8_000) * 1_000;
      expect(recordedMs).toBeGreaterThanOrEqual(lastEndMs - 100);
      expect(recordedMs).toBeLessThan(durationMs + 1_000);
      expect(loudFrames(agentChannel(wav)) * 20).toBeGreaterThan(2_000);
      expect(loudFrames(calleeChannel(wav))).toBe(0);
      // Billed minutes stop with the call.
      const usage = (call.metrics as { usage?: { unit: string; quantity: number }[] }).usage ?? [];
      const minutes = usage.find((entry) => entry.unit === 'minutes');
      expect(minutes?.quantity ?? 0).toBeGreaterThan(0);
      expect((minutes?.quantity ?? 0) * 60_000).toBeLessThan(durationMs + 1_000);
      expect((minutes?.quantity ?? 0) * 60_000).toBeGreaterThan(lastEndMs - 500);
    } finally {
      const code = await exited;
      clearTimeout(killer);
      expect(code, sippOutput).toBe(0);
    }
  }, 70_000);
});
