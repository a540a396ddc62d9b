import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CallRecord } from '../../src/domain/records.js';
import { decodeG711, encodeG711, firstAudibleIndex } from '../../src/telephony/rtp/index.js';
import { FliteTextToSpeech } from '../../src/voice/providers/index.js';
import { concat, silence, synthesizeWhole } from '../helpers/conversationPair.js';
import { callThroughTrunk, startFullService } from '../helpers/fullService.js';
import { expectSippPassed, startSipp, stopAll } from '../sipp/harness.js';

/**
 * The person a warm transfer reaches, over a real trunk with SIPp at both ends
 * (test/sipp/uas_transfer_operator.xml): SIPp answers the target's INVITE with an SDP that sends
 * callwright's media to a UDP socket of this test, which speaks as the person (flite's voice, as
 * RTP, when the test says) and notes when the agent's brief begins.
 * - wait_for_operator: the brief starts only after the person said "Hello?" and stopped; with a
 *   person who says nothing, after the timeout (and the call still goes through);
 * - decline_by_voice: "No, I can't take it" declines — the leg is hung up, the agent goes back to the
 *   callee and says so — while "Hello?" does not.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
let hello: Int16Array;
let cannotTakeIt: Int16Array;
let canTakeIt: Int16Array;

beforeAll(async () => {
  const tts = await FliteTextToSpeech.start({ defaultVoice: 'kal' });
  hello = await synthesizeWhole(tts, 'Hello?');
  cannotTakeIt = await synthesizeWhole(tts, "No, I can't take it.");
  canTakeIt = await synthesizeWhole(tts, 'No problem, I can take it.');
  await tts.close();
  service = await startFullService({ CALLWRIGHT_TRUNK_ALLOW_PRIVATE: 'true' });
}, 60_000);

afterEach(stopAll);

afterAll(async () => {
  await service?.dispose();
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

/**
 * The target's media: records when callwright's packets arrive (ms after its first one, which
 * comes when the target answers) and, from `speakAtMs` after that first packet, sends `speech`
 * as 20 ms PCMU packets.
 */
class OperatorMedia {
  private readonly socket: Socket = createSocket('udp4');
  private firstAtMs: number | null = null;
  /** Arrival (ms after the first packet) of each packet with audible audio. */
  readonly audibleAtMs: number[] = [];
  private timers: NodeJS.Timeout[] = [];

  constructor(private readonly speech: { atMs: number; samples: Int16Array } | null) {}

  async start(): Promise<number> {
    this.socket.on('message', (message, from) => this.received(message, from));
    await new Promise<void>((resolve) => this.socket.bind(0, '127.0.0.1', resolve));
    return this.socket.address().port;
  }

  /** When the speech ends, in ms after the first packet. */
  get speechEndMs(): number {
    return this.speech ? this.speech.atMs + this.speech.samples.length / 8 : 0;
  }

  close(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.socket.close();
  }

  private received(message: Buffer, from: RemoteInfo): void {
    if (message.length < 12 || (message[1]! & 0x7f) !== 0) return;
    const now = performance.now();
    if (this.firstAtMs === null) {
      this.firstAtMs = now;
      if (this.speech) {
        const { atMs, samples } = this.speech;
        this.timers.push(setTimeout(() => this.send(samples, from), atMs));
      }
    }
    const samples = decodeG711('PCMU', message.subarray(12 + 4 * (message[0]! & 0x0f)));
    if (firstAudibleIndex(samples) >= 0) this.audibleAtMs.push(now - this.firstAtMs);
  }

  private send(samples: Int16Array, to: RemoteInfo): void {
    const frames = Math.ceil(samples.length / 160);
    let index = 0;
    const ssrc = 0x1234abcd;
    const next = () => {
      if (index >= frames) return;
      const frame = new Int16Array(160);
      frame.set(samples.subarray(index * 160, (index + 1) * 160));
      const header = Buffer.alloc(12);
      header[0] = 0x80;
      header[1] = index === 0 ? 0x80 : 0x00;
      header.writeUInt16BE(index & 0xffff, 2);
      header.writeUInt32BE(index * 160, 4);
      header.writeUInt32BE(ssrc, 8);
      this.socket.send(Buffer.concat([header, Buffer.from(encodeG711('PCMU', frame))]), to.port, to.address);
      index++;
      this.timers.push(setTimeout(next, 20));
    };
    next();
  }
}

/** A call whose callee presses 1 and is transferred (warm) to a person played by `operator`. */
async function transferTo(operator: OperatorMedia, transfer: Record<string, unknown>): Promise<CallRecord> {
  const rtpPort = await operator.start();
  const { port, run } = await startSipp(
    'uas_transfer_operator.xml',
    [...['-m', '2', '-timeout', '60s'], ...['-key', 'rtp_port', String(rtpPort)]],
    70_000,
  );
  try {
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
            whisper: 'A caller who pressed one.',
            ...transfer,
          },
        },
      },
    );
    await expectSippPassed(run);
    return record;
  } finally {
    operator.close();
  }
}

function transferNotes(record: CallRecord): string[] {
  return record.transcript.filter((entry) => entry.event === 'transfer').map((entry) => entry.text);
}

describe('the person a warm transfer reaches', () => {
  it('is briefed only once they have said hello and stopped (wait_for_operator)', async () => {
    const operator = new OperatorMedia({ atMs: 2_000, samples: concat(hello, silence(200)) });
    const record = await transferTo(operator, { wait_for_operator: true, decline_by_voice: true });
    expect(transferNotes(record), JSON.stringify(record.transcript)).toEqual([
      'human: briefed ("A caller who pressed one.") and bridged (200)',
    ]);
    expect(record).toMatchObject({ status: 'completed', endReason: 'transferred' });
    // The brief is the first audible thing the person heard; it began after their "Hello?" ended
    // (without waiting, it starts as soon as it is synthesised: well before the 2 s).
    const briefAtMs = operator.audibleAtMs[0];
    expect(briefAtMs, JSON.stringify(operator.audibleAtMs.slice(0, 5))).toBeGreaterThan(operator.speechEndMs);
  }, 90_000);

  it('is briefed anyway after wait_for_operator_timeout_ms when they say nothing', async () => {
    const operator = new OperatorMedia(null);
    const record = await transferTo(operator, {
      wait_for_operator: true,
      wait_for_operator_timeout_ms: 2_500,
    });
    expect(record).toMatchObject({ status: 'completed', endReason: 'transferred' });
    const briefAtMs = operator.audibleAtMs[0];
    expect(briefAtMs).toBeGreaterThanOrEqual(2_500);
    expect(briefAtMs).toBeLessThan(8_000);
  }, 90_000);

  it('declines by saying "No, I can\'t take it": the agent goes back to the callee and says so', async () => {
    const operator = new OperatorMedia({ atMs: 1_000, samples: concat(cannotTakeIt, silence(200)) });
    const record = await transferTo(operator, { decline_by_voice: true });
    expect(transferNotes(record), JSON.stringify(record.transcript)).toEqual([
      `human: failed: the person declined the call by voice ("no i can't take it")`,
    ]);
    expect(record).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    expect(record.transcript.at(-1)).toMatchObject({
      role: 'agent',
      text: 'Sorry, nobody is free. Goodbye!',
    });
  }, 90_000);

  it('is not taken as declining when what they say only sounds like it ("No problem, I can take it")', async () => {
    const operator = new OperatorMedia({ atMs: 1_000, samples: concat(canTakeIt, silence(200)) });
    const record = await transferTo(operator, { decline_by_voice: true });
    expect(transferNotes(record), JSON.stringify(record.transcript)).toEqual([
      'human: briefed ("A caller who pressed one.") and bridged (200)',
    ]);
    expect(record).toMatchObject({ status: 'completed', endReason: 'transferred' });
  }, 90_000);
});
