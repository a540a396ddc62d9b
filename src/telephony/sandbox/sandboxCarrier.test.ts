import { createSocket, type Socket } from 'node:dgram';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { MediaClock, PortAllocator } from '../rtp/index.js';
import { MemoryInviteLog } from './inviteLog.js';
import { SandboxCarrier } from './sandboxCarrier.js';
import { type Harness, sleep, startHarness, waitUntil, within } from './testCaller.js';

/** The carrier itself: the INVITE record, rejections before any persona, and close(). */

const fast = { answerDelayMs: 50, replyAfterSilenceMs: 250, replyMs: 120 };

const harnesses: Harness[] = [];
const sockets: Socket[] = [];
async function harness(...args: Parameters<typeof startHarness>): Promise<Harness> {
  const started = await startHarness(...args);
  harnesses.push(started);
  return started;
}

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.close();
  for (const started of harnesses.splice(0)) {
    await started.close();
    expect(started.sandboxPorts.inUseCount).toBe(0);
    expect(started.carrier.activeCalls).toBe(0);
  }
});

/** A bare UDP socket that sends hand-written SIP and keeps the status lines it gets back. */
async function rawSipPeer(): Promise<{
  port: number;
  statuses: number[];
  send(text: string, port: number): void;
}> {
  const socket = createSocket('udp4');
  sockets.push(socket);
  const statuses: number[] = [];
  socket.on('message', (data) => {
    const match = /^SIP\/2\.0 (\d{3})/.exec(data.toString('utf8'));
    if (match) statuses.push(Number(match[1]));
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    port: socket.address().port,
    statuses,
    send: (text, port) => socket.send(Buffer.from(text, 'utf8'), port, '127.0.0.1'),
  };
}

function rawInvite(options: {
  number: string;
  sandboxPort: number;
  peerPort: number;
  branch: string;
  callId: string;
}) {
  const sdp = [
    'v=0',
    'o=- 1 1 IN IP4 127.0.0.1',
    's=-',
    'c=IN IP4 127.0.0.1',
    't=0 0',
    'm=audio 49170 RTP/AVP 0 101',
    'a=rtpmap:101 telephone-event/8000',
    '',
  ].join('\r\n');
  const uri = `sip:${options.number}@127.0.0.1:${options.sandboxPort}`;
  return [
    `INVITE ${uri} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${options.peerPort};branch=${options.branch};rport`,
    'Max-Forwards: 70',
    `From: <sip:+15557654321@127.0.0.1>;tag=raw-from`,
    `To: <${uri}>`,
    `Call-ID: ${options.callId}`,
    'CSeq: 1 INVITE',
    `Contact: <sip:caller@127.0.0.1:${options.peerPort}>`,
    'Content-Type: application/sdp',
    `Content-Length: ${Buffer.byteLength(sdp)}`,
    '',
    sdp,
  ].join('\r\n');
}

function sipPort(carrier: SandboxCarrier): number {
  return Number(carrier.sipUri.split(':').at(-1));
}

describe('sandbox INVITE record', () => {
  it('records each new Call-ID once, whatever the number of copies of its INVITE', async () => {
    const h = await harness(fast);
    const peer = await rawSipPeer();
    const sandboxPort = sipPort(h.carrier);
    const invite = rawInvite({
      number: '+15550100002',
      sandboxPort,
      peerPort: peer.port,
      branch: 'z9hG4bK-raw-busy',
      callId: 'raw-busy@test',
    });
    for (let copy = 0; copy < 3; copy++) {
      peer.send(invite, sandboxPort);
      await sleep(30);
    }
    await waitUntil(() => peer.statuses.filter((status) => status === 486).length >= 3, 2_000, 'three 486s');
    // Same Call-ID under a new branch: a copy that is not a retransmission, refused as a loop.
    peer.send(invite.replace('z9hG4bK-raw-busy', 'z9hG4bK-raw-busy-2'), sandboxPort);
    await waitUntil(() => peer.statuses.includes(482), 2_000, 'the 482');
    expect(peer.statuses[0]).toBe(100);
    expect(h.inviteLog.entries.map((entry) => [entry.sipCallId, entry.toNumber])).toEqual([
      ['raw-busy@test', '+15550100002'],
    ]);
    expect(Number.isNaN(Date.parse(h.inviteLog.entries[0]?.receivedAt ?? ''))).toBe(false);

    // A ringing call retransmitted stays one call.
    const ringing = rawInvite({
      number: '+15550100003',
      sandboxPort,
      peerPort: peer.port,
      branch: 'z9hG4bK-raw-ring',
      callId: 'raw-ring@test',
    });
    for (let copy = 0; copy < 3; copy++) {
      peer.send(ringing, sandboxPort);
      await sleep(30);
    }
    await waitUntil(() => peer.statuses.filter((status) => status === 180).length >= 2, 2_000, '180s');
    expect(h.carrier.activeCalls).toBe(1);
    expect(h.inviteLog.entriesFor('raw-ring@test')).toHaveLength(1);
    expect(h.inviteLog.duplicateCallIds()).toEqual([]);
  });

  it('records once when our UAC retransmits the INVITE because responses were lost', async () => {
    const h = await harness(fast);
    const sandboxPort = sipPort(h.carrier);
    // A relay that loses the sandbox's first three responses: the caller retransmits (timer A).
    const relay = createSocket('udp4');
    sockets.push(relay);
    await new Promise<void>((resolve) => relay.bind(0, '127.0.0.1', resolve));
    let callerPort = 0;
    let invitesRelayed = 0;
    let responsesDropped = 0;
    relay.on('message', (data, remote) => {
      if (remote.port !== sandboxPort) {
        callerPort = remote.port;
        if (data.toString('utf8').startsWith('INVITE ')) invitesRelayed++;
        relay.send(data, sandboxPort, '127.0.0.1');
      } else if (responsesDropped < 3) {
        responsesDropped++;
      } else {
        relay.send(data, callerPort, '127.0.0.1');
      }
    });
    const number = '+15550100001';
    const requestUri = `sip:${number}@127.0.0.1:${relay.address().port}`;
    const call = h.caller.invite({
      requestUri,
      from: { uri: 'sip:+15557654321@127.0.0.1' },
      to: { uri: requestUri },
      sdpOffer:
        'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 49172 RTP/AVP 0\r\n',
      ringTimeoutMs: 5_000,
    });
    await within(
      new Promise<void>((resolve) => call.on('answered', () => resolve())),
      3_000,
      'the answer through the lossy relay',
    );
    expect(invitesRelayed).toBeGreaterThanOrEqual(2);
    expect(h.inviteLog.entries).toHaveLength(1);
    expect(h.inviteLog.entries[0]?.sipCallId).toBe(call.callId);
    await call.hangUp();
    await waitUntil(() => h.carrier.activeCalls === 0, 2_000, 'the sandbox to drop the call');
  });

  it('keeps a CANCEL that arrives while the INVITE is being recorded from becoming an answer', async () => {
    class SlowInviteLog extends MemoryInviteLog {
      override async record(entry: Parameters<MemoryInviteLog['record']>[0]): Promise<void> {
        await sleep(300);
        await super.record(entry);
      }
    }
    const h = await harness(fast, { inviteLog: new SlowInviteLog() });
    const call = await h.dial('+15550100001', { ringTimeoutMs: 100 });
    const outcome = await within(call.outcome, 2_000, 'the cancelled call');
    expect(outcome).toMatchObject({ kind: 'failed', failure: { cause: 'ring_timeout', status: 487 } });
    await waitUntil(() => h.inviteLog.entries.length === 1, 2_000, 'the record');
    await sleep(fast.answerDelayMs + 100);
    expect(h.carrier.activeCalls).toBe(0);
    expect(h.sandboxPorts.inUseCount).toBe(0);
  });

  it('refuses the call with 500 when the INVITE cannot be recorded', async () => {
    class FailingInviteLog extends MemoryInviteLog {
      override async record(): Promise<void> {
        throw new Error('disk full');
      }
    }
    const h = await harness(fast, { inviteLog: new FailingInviteLog() });
    const call = await h.dial('+15550100001');
    const outcome = await within(call.outcome, 2_000, 'the refusal');
    expect(outcome).toMatchObject({ kind: 'failed', failure: { status: 500 } });
  });
});

describe('sandbox rejections before any persona', () => {
  it('answers 484 to a Request-URI whose user is not an E.164 number, after recording it', async () => {
    const h = await harness(fast);
    const call = await h.dial('alice');
    expect(await within(call.outcome, 2_000, 'the 484')).toMatchObject({ failure: { status: 484 } });
    expect(h.inviteLog.entries.map((entry) => entry.toNumber)).toEqual(['alice']);
  });

  it('answers 488 to an offer without G.711', async () => {
    const h = await harness(fast);
    const requestUri = h.carrier.requestUriFor('+15550100001');
    const call = h.caller.invite({
      requestUri,
      from: { uri: 'sip:+15557654321@127.0.0.1' },
      to: { uri: requestUri },
      sdpOffer:
        'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 49174 RTP/AVP 18\r\na=rtpmap:18 G729/8000\r\n',
    });
    expect(await within(call.outcome, 2_000, 'the 488')).toMatchObject({ failure: { status: 488 } });
    expect(h.sandboxPorts.inUseCount).toBe(0);
  });

  it('refuses to bind anywhere but loopback', async () => {
    const logger = pino({ level: 'silent' });
    await expect(
      SandboxCarrier.start({
        logger,
        clock: new MediaClock({ logger }),
        ports: new PortAllocator({ minPort: 49_000, maxPort: 49_010 }),
        bindAddress: '0.0.0.0',
        sipPort: 0,
        inviteLog: new MemoryInviteLog(),
      }),
    ).rejects.toThrow(/loopback/);
  });
});

describe('sandbox close()', () => {
  it('hangs up live calls and leaves no socket, port or timer behind', async () => {
    const resourceCount = (type: string) => process.getActiveResourcesInfo().filter((r) => r === type).length;
    const timeoutsBefore = resourceCount('Timeout');
    const udpBefore = resourceCount('UDPWrap');
    // Long persona delays: a timer the sandbox forgot would still be pending afterwards.
    const h = await startHarness({ answerDelayMs: 50, hangUpAfterMs: 10_000, dtmfAfterMs: 10_000 });
    const answeredNumbers = ['+15550100001', '+15550100004', '+15550100006', '+15550100007', '+15550100008'];
    const answered = await Promise.all(answeredNumbers.map((number) => h.dial(number)));
    const ringing = await h.dial('+15550100003');
    await Promise.all(answered.map((call) => within(call.answered, 3_000, 'the answers')));
    await waitUntil(() => ringing.provisionalStatuses.includes(180), 2_000, '180 Ringing');
    expect(h.carrier.activeCalls).toBe(6);
    expect(new Set(h.inviteLog.entries.map((entry) => entry.sipCallId)).size).toBe(6);

    await within(h.carrier.close(), 3_000, 'close()');
    expect(h.carrier.activeCalls).toBe(0);
    expect(h.sandboxPorts.inUseCount).toBe(0);
    for (const call of answered) {
      expect(await within(call.outcome, 2_000, 'the BYE')).toMatchObject({
        kind: 'ended',
        ended: { by: 'remote' },
      });
    }
    expect(await within(ringing.outcome, 2_000, 'the 480')).toMatchObject({
      kind: 'failed',
      failure: { status: 480 },
    });
    await h.close();
    await waitUntil(
      () => resourceCount('UDPWrap') <= udpBefore && resourceCount('Timeout') <= timeoutsBefore,
      2_000,
      'every socket and timer to be gone',
    );
  });
});
