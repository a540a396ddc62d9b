import { createSocket, type Socket } from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { encodeWav } from '../../src/voice/providers/audio/wav.js';
import { callThroughTrunk, startFullService } from '../helpers/fullService.js';
import { request } from '../helpers/http.js';
import { agentChannel, framesOfTone, loudFrames } from '../helpers/recordings.js';
import { expectSippPassed, startSipp, stopAll } from '../sipp/harness.js';

/**
 * Transfers over a real trunk with SIPp. A warm transfer, SIPp at both ends (test/sipp/uas_transfer_target.xml): the
 * callee presses 1, the scripted agent says "Please hold." and dials the target over the same
 * trunk. What is checked on the wire and in the recording: the summary in the INVITE's
 * X-Call-Summary header, cleaned of the CR/LF that would have injected a header; the digits of
 * settings.transfer.digits as RFC 4733 events at the target's media address; the hold tone in
 * the callee's ear (the recording's agent channel) after "Please hold." instead of silence.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
let targetMedia: Socket;
const packets: Buffer[] = [];
const directory = mkdtempSync(join(tmpdir(), 'callwright-transfer-target-'));

beforeAll(async () => {
  service = await startFullService({ CALLWRIGHT_TRUNK_ALLOW_PRIVATE: 'true' });
  targetMedia = createSocket('udp4');
  targetMedia.on('message', (message) => packets.push(message));
  await new Promise<void>((resolve) => targetMedia.bind(0, '127.0.0.1', resolve));
}, 60_000);

afterEach(stopAll);

afterAll(async () => {
  await service?.dispose();
  targetMedia?.close();
  rmSync(directory, { recursive: true, force: true });
});

const script = {
  start: 'greet',
  nodes: {
    greet: {
      say: 'Press one to speak to a person.',
      listen: [{ phrases: ['operator'], next: 'handoff' }],
      dtmf: { '1': 'handoff' },
    },
    handoff: { say: 'Please hold.', transfer: 'human', transfer_failed: 'sorry' },
    sorry: { say: 'Sorry, nobody is free. Goodbye!', end: true },
  },
};

/** The telephone-event digits in the RTP packets (RFC 4733: one event repeated, end bit set last). */
function dtmfDigits(received: readonly Buffer[]): string {
  const names = '0123456789*#ABCD';
  let digits = '';
  let previousTimestamp = -1;
  for (const packet of received) {
    if (packet.length < 16 || (packet[1]! & 0x7f) !== 101) continue;
    const timestamp = packet.readUInt32BE(4);
    if (timestamp === previousTimestamp) continue;
    previousTimestamp = timestamp;
    const headerBytes = 12 + 4 * (packet[0]! & 0x0f);
    digits += names[packet[headerBytes]!] ?? '?';
  }
  return digits;
}

describe('transfers to a SIPp target over a trunk', () => {
  it('sends the cleaned summary header, dials the digits after connect and plays hold audio', async () => {
    const logFile = join(directory, 'sipp.log');
    const { port, run } = await startSipp(
      'uas_transfer_target.xml',
      [
        ...['-m', '2', '-timeout', '60s'],
        ...['-key', 'rtp_port', String(targetMedia.address().port)],
        ...['-trace_logs', '-log_file', logFile],
      ],
      70_000,
    );
    const record = await callThroughTrunk(
      service,
      { uri: `sip:127.0.0.1:${port}` },
      {
        script,
        maxDurationS: 45,
        timeoutMs: 60_000,
        settings: {
          transfer: {
            targets: { human: '+14155550188' },
            warm: true,
            whisper: 'Caller pressed one.\r\nX-Injected: yes',
            summary_header: 'X-Call-Summary',
            digits: { human: 'w12#' },
          },
        },
      },
    );
    expect(record, JSON.stringify(record.transcript)).toMatchObject({
      status: 'completed',
      endReason: 'transferred',
    });
    await expectSippPassed(run);
    // The header as the target got it: one line, the CR/LF turned into a space (SIPp's
    // check_it_inverse on X-Injected failed the run otherwise).
    expect(readFileSync(logFile, 'utf8')).toContain('summary: Caller pressed one. X-Injected: yes');
    expect(dtmfDigits(packets)).toBe('12#');
    // After "Please hold." the callee heard the hold tone, not silence, until the bridge.
    const heldFromMs = Math.max(
      ...record.transcript
        .filter((entry) => entry.role === 'agent' && !entry.event)
        .map((entry) => entry.end_ms),
    );
    const agent = agentChannel(readFileSync(record.recordingPath as string));
    const afterHold = agent.subarray(Math.ceil((heldFromMs + 200) * 8));
    expect(afterHold.length).toBeGreaterThan(8 * 1_000);
    expect(loudFrames(afterHold)).toBeGreaterThanOrEqual(10);
  }, 90_000);

  it("plays the agent's uploaded hold audio file in a loop instead of the tone", async () => {
    // The operator's file: 1.5 s of a steady 1200 Hz tone at 16 kHz (converted to 8 kHz at upload),
    // unlike the built-in 440 Hz beep.
    const file = new Int16Array(24_000).map((_, index) =>
      Math.round(6000 * Math.sin((2 * Math.PI * 1200 * index) / 16_000)),
    );
    const { port, run } = await startSipp(
      'uas_transfer_target.xml',
      [...['-m', '2', '-timeout', '60s'], ...['-key', 'rtp_port', String(targetMedia.address().port)]],
      70_000,
    );
    const record = await callThroughTrunk(
      service,
      { uri: `sip:127.0.0.1:${port}` },
      {
        script,
        maxDurationS: 45,
        timeoutMs: 60_000,
        settings: {
          transfer: {
            targets: { human: '+14155550188' },
            warm: true,
            whisper: 'Caller pressed one, and would like to talk about their order.',
            hold_audio: 'file',
          },
        },
        beforeCall: async ({ agentId, key }) => {
          const uploaded = await request(`${service.url}/v1/agents/${agentId}/hold_audio`, {
            method: 'PUT',
            headers: { 'X-API-Key': key, 'Content-Type': 'audio/wav' },
            body: Buffer.from(encodeWav(file, 16_000)),
          });
          expect(uploaded.status, uploaded.text).toBe(200);
        },
      },
    );
    expect(record, JSON.stringify(record.transcript)).toMatchObject({
      status: 'completed',
      endReason: 'transferred',
    });
    await expectSippPassed(run);
    // What the callee heard from "Please hold." on: the file's 1200 Hz for well over a cycle of
    // it (it loops while the target is dialled and briefed), and never the 440 Hz hold beep.
    const heldFromMs = Math.max(
      ...record.transcript
        .filter((entry) => entry.role === 'agent' && !entry.event)
        .map((entry) => entry.end_ms),
    );
    const agent = agentChannel(readFileSync(record.recordingPath as string));
    const afterHold = agent.subarray(Math.ceil((heldFromMs + 100) * 8));
    expect(framesOfTone(afterHold, 1200)).toBeGreaterThanOrEqual(100);
    expect(framesOfTone(afterHold, 440)).toBe(0);
  }, 90_000);

  it('embeds the summary in the Refer-To of a cold transfer as RFC 7433 User-to-User', async () => {
    const { port, run } = await startSipp('uas_refer_summary.xml', ['-timeout', '40s'], 45_000);
    const record = await callThroughTrunk(
      service,
      { uri: `sip:127.0.0.1:${port}` },
      {
        script,
        maxDurationS: 30,
        timeoutMs: 40_000,
        settings: {
          transfer: {
            targets: { human: '+14155550188' },
            whisper: 'Caller pressed one.\r\nX-Injected: yes',
            summary_header: 'User-to-User',
          },
        },
      },
    );
    expect(record, JSON.stringify(record.transcript)).toMatchObject({
      status: 'completed',
      endReason: 'transferred',
    });
    // SIPp's check of the Refer-To (hex of the cleaned summary, ;encoding=hex escaped) is its verdict.
    await expectSippPassed(run);
  }, 60_000);

  it('goes back to the callee when the person presses the decline key, and says so', async () => {
    const { port, run } = await startSipp('uas_transfer_decline.xml', ['-m', '2', '-timeout', '50s'], 55_000);
    const record = await callThroughTrunk(
      service,
      { uri: `sip:127.0.0.1:${port}` },
      {
        script,
        maxDurationS: 40,
        timeoutMs: 50_000,
        settings: {
          transfer: {
            targets: { human: '+14155550188' },
            warm: true,
            whisper: 'A caller who pressed one. Press 2 to decline.',
            decline_digit: '2',
          },
        },
      },
    );
    const notes = record.transcript.filter((entry) => entry.event === 'transfer').map((entry) => entry.text);
    expect(notes, JSON.stringify([record.status, record.endReason, record.transcript])).toEqual([
      'human: failed: the person declined the call',
    ]);
    expect(record).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    // Back with the callee: the script's transfer_failed step, said to them.
    expect(record.transcript.at(-1)).toMatchObject({
      role: 'agent',
      text: 'Sorry, nobody is free. Goodbye!',
    });
    // SIPp's verdict: the declined leg was hung up (BYE) and the callee's call ended by our BYE.
    await expectSippPassed(run);
  }, 70_000);
});
