import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { addTrunk } from '../../src/admin/trunks.js';
import { loadSecretBox } from '../../src/secrets/secretBox.js';
import { encodeG711 } from '../../src/telephony/rtp/index.js';
import { FliteTextToSpeech } from '../../src/voice/providers/index.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';
import { freeEvenUdpPort, freeUdpPort } from './harness.js';

/**
 * Interoperability with a real far end playing recorded speech into the agent (SIPp `rtp_stream`),
 * over a SIP trunk: the callee talks over the agent's greeting (barge-in cuts the agent off, and
 * what was not said is not in the transcript), is understood, and the script agent finishes.
 */

const workDir = mkdtempSync(join(tmpdir(), 'callwright-sipp-speech-'));
let service: Awaited<ReturnType<typeof startFullService>>;

/** A µ-law WAV (format 7), what SIPp's rtp_stream sends as PCMU without transcoding. */
function mulawWav(samples: Int16Array): Buffer {
  const payload = Buffer.from(encodeG711('PCMU', samples));
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + payload.length, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(7, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(8000, 28);
  header.writeUInt16LE(1, 32);
  header.writeUInt16LE(8, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(payload.length, 40);
  return Buffer.concat([header, payload]);
}

beforeAll(async () => {
  const tts = await FliteTextToSpeech.start({ defaultVoice: 'kal' });
  const chunks: Int16Array[] = [];
  for await (const chunk of tts.synthesize('yes that works')) chunks.push(chunk.samples);
  await tts.close();
  const speech = new Int16Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    speech.set(chunk, offset);
    offset += chunk.length;
  }
  // Speech, then a second of silence so the end of the turn is heard.
  const withTail = new Int16Array(speech.length + 8000);
  withTail.set(speech);
  writeFileSync(join(workDir, 'speech.wav'), mulawWav(withTail));
  // SIPp plays the trunk on loopback: a private PBX as far as the trunk guard is concerned.
  service = await startFullService({ CALLWRIGHT_TRUNK_ALLOW_PRIVATE: 'true' });
});

afterAll(async () => {
  await service?.dispose();
  rmSync(workDir, { recursive: true, force: true });
});

describe('SIPp playing recorded speech into the agent over a trunk', () => {
  it('is interrupted by the callee, understands them, and ends the call', async () => {
    const scenario = readFileSync(resolve(import.meta.dirname, 'uas_speech.xml'), 'utf8').replaceAll(
      'SPEECH_FILE',
      join(workDir, 'speech.wav'),
    );
    const scenarioPath = join(workDir, 'uas_speech.xml');
    writeFileSync(scenarioPath, scenario);
    const sipPort = await freeUdpPort();
    const mediaPort = await freeEvenUdpPort();
    const controlPort = await freeUdpPort();
    const sipp = spawn(
      'sipp',
      ['-sf', scenarioPath, '-i', '127.0.0.1', '-p', String(sipPort), '-cp', String(controlPort)].concat([
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
    sipp.stdout.on('data', (chunk: Buffer) => {
      sippOutput = (sippOutput + chunk.toString()).slice(-3000);
    });
    sipp.stderr.on('data', (chunk: Buffer) => {
      sippOutput = (sippOutput + chunk.toString()).slice(-3000);
    });
    const killer = setTimeout(() => sipp.kill('SIGKILL'), 50_000);
    const exited = new Promise<number | null>((done) => sipp.on('exit', (code) => done(code)));
    await new Promise((done) => setTimeout(done, 200));

    const account = await service.store.accounts.create({ name: 'sipp' });
    const secretBox = loadSecretBox({ configuredKeyBase64: null, dataDir: service.dataDir });
    await addTrunk(
      service.store,
      secretBox,
      account.id,
      { name: 'sipp', uri: `sip:127.0.0.1:${sipPort}` },
      { allowPrivate: true },
    );
    await addPhoneNumber(service.store, account.id, '+15550009999', 'sipp');
    const { key } = await createApiKey(service.store, account.id, 'sipp');
    const script = JSON.parse(
      readFileSync(
        resolve(import.meta.dirname, '../../examples/agents/appointment-confirmation.json'),
        'utf8',
      ),
    );
    const agent = await createAgent(service.store, account.id, {
      name: 'Appointments',
      prompt: 'p',
      variables: ['customer_name', 'appointment_day=Tuesday'].map(parseVariableDeclaration),
      script,
      maxDurationS: 40,
    });
    const result = await postCall(service.url, key, {
      agent_id: agent.id,
      from_number: '+15550009999',
      to_number: '+14155550123',
      variables: { customer_name: 'Alexandra' },
    });
    expect(result.status).toBe(200);
    const call = await waitForTerminal(service, (result.body as { call_id: string }).call_id, 45_000);
    const sippCode = await exited;
    clearTimeout(killer);

    expect(sippCode, sippOutput).toBe(0);
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup', answeredBy: 'human' });
    expect(call.extractedData).toEqual({ confirmed: true });
    const [greeting, answer, goodbye] = call.transcript;
    // The full greeting is 20 words; the callee started talking about a second and a half in.
    expect(greeting?.role).toBe('agent');
    expect(greeting?.text.split(' ').length).toBeLessThan(12);
    expect('Hello Alexandra, this is Bright Smile Dental calling').toContain(
      greeting?.text.split(' ').slice(0, 2).join(' ') ?? 'x',
    );
    // The grammar holds the variants of "yes" too: the recogniser may hear its "yes" as "yep".
    expect(answer).toMatchObject({ role: 'callee', text: expect.stringMatching(/\b(yes|yep|yeah)\b/) });
    expect(goodbye?.text).toContain('confirmed for Tuesday');
    const { barge_ins: bargeIns, barge_in_stop_ms: stopsMs } = call.metrics as {
      barge_ins: number;
      barge_in_stop_ms: number[];
    };
    expect(bargeIns).toBeGreaterThanOrEqual(1);
    // The agent's audio stopped within 200 ms of the callee starting to speak.
    expect(stopsMs[0]).toBeLessThanOrEqual(200);
  }, 60_000);
});
