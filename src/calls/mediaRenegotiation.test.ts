import { createSocket, type Socket } from 'node:dgram';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import {
  encodeRtpPacket,
  MediaClock,
  PortAllocator,
  parseRtpPacket,
  RtpSession,
} from '../telephony/rtp/index.js';
import { MediaRenegotiation } from './mediaRenegotiation.js';

/** Offers from the far end applied to a real RTP session: hold, resume, a media move, refusals. */

const logger = pino({ level: 'silent' });
const clock = new MediaClock({ logger });
const ports = new PortAllocator({ minPort: 42000, maxPort: 42998 });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function peer(): Promise<{ socket: Socket; port: number; count: () => number }> {
  const socket = createSocket('udp4');
  let packets = 0;
  socket.on('message', (message) => {
    if (parseRtpPacket(message)) packets++;
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => socket.close(() => resolve())));
  return { socket, port: socket.address().port, count: () => packets };
}

const sdp = (port: number, version: number, direction = 'sendrecv', address = '127.0.0.1') =>
  `v=0\r\no=- 7 ${version} IN IP4 ${address}\r\ns=-\r\nc=IN IP4 ${address}\r\nt=0 0\r\n` +
  `m=audio ${port} RTP/AVP 0 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:101 telephone-event/8000\r\na=${direction}\r\n`;

async function setUp() {
  const rtp = await RtpSession.open({ logger, clock, ports, bindAddress: '127.0.0.1' });
  cleanups.push(() => rtp.close());
  const media = new MediaRenegotiation(
    rtp,
    '127.0.0.1',
    { inviteOptions: { allowsRemoteAddress: (a) => a === '127.0.0.1' }, srtp: 'off' },
    logger,
  );
  return { rtp, media };
}

describe('media renegotiation', () => {
  it('holds (no RTP sent, nothing heard), resumes, and moves the media to a new port', async () => {
    const { rtp, media } = await setUp();
    const first = await peer();
    const offer = media.offer();
    const sessionId = /^o=callwright (\d+) 1 IN IP4 127\.0\.0\.1$/m.exec(offer)?.[1];
    expect(sessionId).toBeDefined();
    const remote = media.remoteOfAnswer(sdp(first.port, 1));
    if ('refused' in remote) throw new Error(remote.refused);
    rtp.start(remote);
    await sleep(200);
    expect(first.count()).toBeGreaterThan(3);

    // The far end holds the call: our answer is recvonly, and its music is not passed up as speech.
    const heard: number[] = [];
    rtp.on('audio', (_samples, kind) => heard.push(kind === 'received' ? 1 : 0));
    const hold = media.answer(sdp(first.port, 2, 'sendonly'));
    expect('sdp' in hold && hold.sdp).toMatch(/a=recvonly/);
    // Same session, next version (RFC 3264 §8).
    expect('sdp' in hold && hold.sdp).toContain(`o=callwright ${sessionId} 2 IN IP4`);
    const sentBeforeHold = first.count();
    for (let sequence = 0; sequence < 10; sequence++) {
      first.socket.send(
        encodeRtpPacket({
          payloadType: 0,
          sequenceNumber: sequence,
          timestamp: sequence * 160,
          ssrc: 9,
          marker: false,
          payload: Buffer.alloc(160, 0x55),
        }),
        rtp.localPort,
        '127.0.0.1',
      );
      await sleep(20);
    }
    await sleep(100);
    expect(first.count() - sentBeforeHold).toBeLessThanOrEqual(1);
    expect(heard.filter((received) => received === 1)).toEqual([]);

    // Resumed and moved to another port: the RTP follows the new offer.
    const second = await peer();
    const moved = media.answer(sdp(second.port, 3, 'sendrecv'));
    expect('sdp' in moved && moved.sdp).toMatch(/a=sendrecv/);
    await sleep(200);
    expect(second.count()).toBeGreaterThan(3);
    expect(rtp.sendTarget).toEqual({ address: '127.0.0.1', port: second.port });
  });

  it('refuses (488) an offer with no common codec or a media address the call may not reach', async () => {
    const { rtp, media } = await setUp();
    const first = await peer();
    rtp.start(media.remoteOfAnswer(sdp(first.port, 1)) as never);
    const g729 = sdp(first.port, 2)
      .replace('RTP/AVP 0 101', 'RTP/AVP 18')
      .replace('a=rtpmap:0 PCMU/8000\r\n', '');
    expect(media.answer(g729)).toMatchObject({ status: 488 });
    expect(media.answer(sdp(first.port, 2, 'sendrecv', '169.254.169.254'))).toEqual({
      status: 488,
      reason: 'refused media address',
    });
    expect(rtp.sendTarget).toEqual({ address: '127.0.0.1', port: first.port });
    expect(media.remoteOfAnswer(sdp(first.port, 1, 'sendrecv', '10.1.1.1'))).toEqual({
      refused: 'refused media address',
    });
  });
});
