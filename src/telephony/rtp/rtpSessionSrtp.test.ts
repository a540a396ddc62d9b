import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { describe, expect, it } from 'vitest';
import { rtpTestBench } from '../../../test/helpers/rtpBench.js';
import { decodeG711, encodeG711 } from './g711.js';
import { encodeRtpPacket } from './rtpPacket.js';
import type { RtpSession } from './rtpSession.js';
import { createCryptoLines } from './sdes.js';
import { createAnswer, createOffer, parseAnswer } from './sdp.js';
import { SrtpReceiver } from './srtp.js';

const { openSession, closeLater, sleep } = rtpTestBench(43000);

/** Two sessions keyed by an SDES offer/answer, and a socket that sees what goes to `b`. */
async function securePair(): Promise<{ a: RtpSession; b: RtpSession }> {
  const a = await openSession();
  const b = await openSession();
  const lines = createCryptoLines();
  const answer = createAnswer(
    createOffer({ address: a.publicAddress, port: a.localPort, crypto: { lines, secureProfile: true } }),
    { address: b.publicAddress, port: b.localPort, srtp: 'required' },
  );
  a.start(parseAnswer(answer.sdp, { srtp: { offered: lines, policy: 'required' } }));
  b.start(answer.remote);
  return { a, b };
}

describe('RtpSession over SRTP', () => {
  it('carries audio and DTMF encrypted both ways, and no plain RTP payload is on the wire', async () => {
    const { a, b } = await securePair();
    expect(a.secure && b.secure).toBe(true);
    const received: Int16Array[] = [];
    b.on('audio', (samples, kind) => {
      if (kind === 'received') received.push(samples.slice());
    });
    const digits: string[] = [];
    b.on('dtmf', ({ digit }) => digits.push(digit));
    const bytes = Uint8Array.from(randomBytes(25 * 160)).map((x) => (x === 0x7f || x === 0xff ? 0x80 : x));
    await a.play(decodeG711('PCMU', bytes));
    await a.sendDtmf('42', { durationMs: 80, gapMs: 40 });
    await sleep(150);
    const wire = Buffer.concat(received.map((s) => Buffer.from(encodeG711('PCMU', s))));
    const start = wire.indexOf(Buffer.from(bytes.subarray(0, 16)));
    expect(start).toBeGreaterThanOrEqual(0);
    expect(wire.subarray(start, start + bytes.length)).toEqual(Buffer.from(bytes));
    expect(digits).toEqual(['4', '2']);
    expect(b.stats()).toMatchObject({ packetsLost: 0, packetsUnauthenticated: 0, dtmfReceived: 2 });
  });

  it('sends packets only the far end’s key opens, each 10 bytes longer than RTP', async () => {
    const listener = createSocket('udp4');
    closeLater(listener);
    await new Promise<void>((resolve) => listener.bind(0, '127.0.0.1', resolve));
    const session = await openSession();
    const lines = createCryptoLines();
    const farKey = randomBytes(30);
    const answer = createAnswer(
      createOffer({
        address: '127.0.0.1',
        port: listener.address().port,
        crypto: { lines, secureProfile: true },
      }),
      { address: session.publicAddress, port: session.localPort, srtp: 'required' },
    );
    session.start({ ...answer.remote, srtp: { ...answer.remote.srtp!, localKey: farKey } });
    const packets: Buffer[] = [];
    listener.on('message', (message) => packets.push(message));
    const bytes = Uint8Array.from(randomBytes(5 * 160)).map((x) => (x === 0x7f || x === 0xff ? 0x80 : x));
    await session.play(decodeG711('PCMU', bytes));
    await sleep(60);
    const speech = Buffer.from(bytes.subarray(0, 160));
    expect(packets.length).toBeGreaterThan(4);
    expect(packets.every((p) => p.length === 12 + 160 + 10)).toBe(true);
    expect(packets.some((p) => p.includes(speech))).toBe(false);
    const opener = new SrtpReceiver('AES_CM_128_HMAC_SHA1_80', farKey);
    const opened = packets.map((p) => opener.unprotect(Buffer.from(p)));
    expect(opened.every((r) => 'length' in r && r.length === 172)).toBe(true);
    const wrong = new SrtpReceiver('AES_CM_128_HMAC_SHA1_80', randomBytes(30));
    expect(wrong.unprotect(Buffer.from(packets[0]!))).toEqual({ refused: 'authentication' });
  });

  it('drops and counts plain or forged packets before they can latch or be heard', async () => {
    const { a, b } = await securePair();
    a.clear();
    const heard: Int16Array[] = [];
    b.on('audio', (samples, kind) => {
      if (kind === 'received' && samples.some((x) => x !== 0)) heard.push(samples);
    });
    const latched: number[] = [];
    b.on('latched', ({ port }) => latched.push(port));
    const attacker = createSocket('udp4');
    closeLater(attacker);
    await new Promise<void>((resolve) => attacker.bind(0, '127.0.0.1', resolve));
    for (let seq = 0; seq < 10; seq++) {
      const forged = encodeRtpPacket({
        payloadType: 0,
        sequenceNumber: seq,
        timestamp: seq * 160,
        ssrc: 0xbad,
        marker: false,
        payload: Buffer.alloc(160, 0x10),
      });
      attacker.send(Buffer.concat([forged, randomBytes(10)]), b.localPort, '127.0.0.1');
    }
    await sleep(100);
    expect(b.stats().packetsUnauthenticated).toBeGreaterThanOrEqual(10);
    expect(latched).not.toContain(attacker.address().port);
    expect(heard.some((s) => s.every((x) => x === decodeG711('PCMU', Buffer.alloc(1, 0x10))[0]))).toBe(false);
  });
});
