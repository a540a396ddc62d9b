import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { describe, expect, it } from 'vitest';
import { rtpTestBench } from '../../../test/helpers/rtpBench.js';
import { decodeG711, encodeG711 } from './g711.js';
import { encodeRtpPacket, parseRtpPacket, type RtpPacket } from './rtpPacket.js';
import { createAnswer, createOffer, parseAnswer, type RemoteMedia } from './sdp.js';

const { ports, openSession, closeLater, sleep } = rtpTestBench(41000);

/** A plain UDP socket that records the RTP packets it receives. */
async function rawPeer(): Promise<{ socket: Socket; port: number; packets: (RtpPacket & { at: number })[] }> {
  const socket = createSocket('udp4');
  closeLater(socket);
  const packets: (RtpPacket & { at: number })[] = [];
  socket.on('message', (message) => {
    const packet = parseRtpPacket(message);
    if (packet) packets.push({ ...packet, at: performance.now() });
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { socket, port: socket.address().port, packets };
}

function remoteAt(port: number, extra: Partial<RemoteMedia> = {}): RemoteMedia {
  return {
    address: '127.0.0.1',
    port,
    codec: 'PCMU',
    payloadType: 0,
    telephoneEventPayloadType: 101,
    ptimeMs: 20,
    direction: 'sendrecv',
    srtp: null,
    ...extra,
  };
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!condition() && Date.now() < end) await sleep(10);
}

/** Samples exactly representable in µ-law, from bytes that avoid the duplicate zero code 0x7f. */
function representableSamples(frames: number): { samples: Int16Array; bytes: Uint8Array } {
  const bytes = Uint8Array.from(randomBytes(frames * 160)).map((b) => (b === 0x7f || b === 0xff ? 0x80 : b));
  return { samples: decodeG711('PCMU', bytes), bytes };
}

describe('RtpSession', () => {
  it('binds an even port of the range and releases it on close', async () => {
    const session = await openSession();
    expect(session.localPort % 2).toBe(0);
    expect(session.localPort).toBeGreaterThanOrEqual(41000);
    const before = ports.inUseCount;
    await session.close();
    expect(ports.inUseCount).toBe(before - 1);
  });

  it('sends paced 20 ms packets with consecutive sequence numbers and timestamps', async () => {
    const peer = await rawPeer();
    const session = await openSession();
    const { samples, bytes } = representableSamples(10);
    session.start(remoteAt(peer.port));
    const played = session.play(samples);
    expect(await played).toEqual({ playedMs: 200, durationMs: 200, interrupted: false });
    await sleep(60);
    const speech = peer.packets.filter((p) => p.payload[0] !== 0xff || p.payload[1] !== 0xff);
    expect(Buffer.concat(speech.map((p) => p.payload))).toEqual(Buffer.from(bytes));
    for (let i = 1; i < peer.packets.length; i++) {
      const [a, b] = [peer.packets[i - 1]!, peer.packets[i]!];
      expect(b.sequenceNumber).toBe((a.sequenceNumber + 1) & 0xffff);
      expect(b.timestamp).toBe((a.timestamp + 160) >>> 0);
      expect(b.ssrc).toBe(session.ssrc);
      expect(b.payloadType).toBe(0);
      expect(b.payload.length).toBe(160);
    }
    expect(peer.packets[0]?.marker).toBe(true);
    const spanMs = peer.packets.at(-1)!.at - peer.packets[0]!.at;
    expect(spanMs / (peer.packets.length - 1)).toBeGreaterThan(15);
    expect(spanMs / (peer.packets.length - 1)).toBeLessThan(25);
  });

  it('carries audio and DTMF between two sessions negotiated by offer/answer', async () => {
    const a = await openSession();
    const b = await openSession();
    const answer = createAnswer(createOffer({ address: a.publicAddress, port: a.localPort }), {
      address: b.publicAddress,
      port: b.localPort,
    });
    a.start(parseAnswer(answer.sdp));
    b.start(answer.remote);
    const received: Int16Array[] = [];
    b.on('audio', (samples, kind) => {
      if (kind === 'received') received.push(samples.slice());
    });
    const digits: string[] = [];
    b.on('dtmf', ({ digit }) => digits.push(digit));

    const { samples, bytes } = representableSamples(25);
    await a.play(samples);
    await a.sendDtmf('159#', { durationMs: 80, gapMs: 40 });
    await sleep(150);

    const wire = Buffer.concat(received.map((s) => Buffer.from(encodeG711('PCMU', s))));
    const start = wire.indexOf(Buffer.from(bytes.subarray(0, 16)));
    expect(start).toBeGreaterThanOrEqual(0);
    expect(wire.subarray(start, start + bytes.length)).toEqual(Buffer.from(bytes));
    expect(digits).toEqual(['1', '5', '9', '#']);
    expect(b.stats()).toMatchObject({ packetsLost: 0, dtmfReceived: 4, packetsLate: 0 });
    expect(a.isLatched && b.isLatched).toBe(true);
  });

  it('latches on to the port packets really come from, and ignores strangers after that', async () => {
    const advertised = await rawPeer(); // the port the far end's SDP names
    const actual = await rawPeer(); // the port it really sends from
    const stranger = await rawPeer();
    const session = await openSession();
    const latched: number[] = [];
    session.on('latched', ({ port }) => latched.push(port));
    session.start(remoteAt(advertised.port));
    await waitFor(() => advertised.packets.length >= 2, 500);
    expect(advertised.packets.length).toBeGreaterThanOrEqual(2);

    const packet = (seq: number): Buffer =>
      encodeRtpPacket({
        marker: false,
        payloadType: 0,
        sequenceNumber: seq,
        timestamp: seq * 160,
        ssrc: 99,
        payload: new Uint8Array(160),
      });
    actual.socket.send(packet(1), session.localPort, '127.0.0.1');
    await waitFor(() => actual.packets.length >= 3, 500);
    expect(latched).toEqual([actual.port]);
    expect(session.sendTarget).toEqual({ address: '127.0.0.1', port: actual.port });
    const advertisedCount = advertised.packets.length;
    const receivedBefore = session.stats().packetsReceived;
    stranger.socket.send(packet(2), session.localPort, '127.0.0.1');
    await sleep(80);
    expect(advertised.packets.length).toBeLessThanOrEqual(advertisedCount + 1);
    // The socket is connected to the latched source now: the stranger's packet never counts.
    expect(session.stats().packetsReceived).toBe(receivedBefore);
    expect(latched).toHaveLength(1);
    expect(session.sendTarget).toEqual({ address: '127.0.0.1', port: actual.port });
    actual.socket.send(packet(3), session.localPort, '127.0.0.1');
    await waitFor(() => session.stats().packetsReceived > receivedBefore, 500);
    expect(session.stats().packetsReceived).toBe(receivedBefore + 1);
  });

  it('never latches on to a third party at another address, even one that speaks first', async () => {
    const advertised = await rawPeer();
    const stranger = createSocket('udp4');
    closeLater(stranger);
    await new Promise<void>((resolve) => stranger.bind(0, '127.0.0.77', resolve));
    const strangerPackets: number[] = [];
    stranger.on('message', (message) => strangerPackets.push(message.length));
    const session = await openSession();
    const latched: string[] = [];
    session.on('latched', ({ address }) => latched.push(address));
    session.start(remoteAt(advertised.port));
    const packet = (seq: number): Buffer =>
      encodeRtpPacket({
        marker: false,
        payloadType: 0,
        sequenceNumber: seq,
        timestamp: seq * 160,
        ssrc: 7,
        payload: new Uint8Array(160),
      });
    for (let seq = 1; seq <= 5; seq++) stranger.send(packet(seq), session.localPort, '127.0.0.1');
    await waitFor(() => session.stats().packetsFromStranger >= 5, 1_000);
    expect(session.stats().packetsFromStranger).toBe(5);
    expect(session.stats().packetsReceived).toBe(0);
    expect(latched).toEqual([]);
    expect(session.sendTarget).toEqual({ address: '127.0.0.1', port: advertised.port });
    await waitFor(() => advertised.packets.length >= 2, 500);
    expect(strangerPackets).toEqual([]);
    // The far end itself, from another port of the SDP address, is latched on to.
    const actual = await rawPeer();
    actual.socket.send(packet(6), session.localPort, '127.0.0.1');
    await waitFor(() => latched.length > 0, 1_000);
    expect(latched).toEqual(['127.0.0.1']);
  });

  it('follows a new far-end address after latching (re-INVITE)', async () => {
    const first = await rawPeer();
    const second = await rawPeer();
    const session = await openSession();
    session.start(remoteAt(first.port));
    first.socket.send(
      encodeRtpPacket({
        marker: true,
        payloadType: 0,
        sequenceNumber: 1,
        timestamp: 0,
        ssrc: 5,
        payload: new Uint8Array(160),
      }),
      session.localPort,
      '127.0.0.1',
    );
    await waitFor(() => session.isLatched && first.packets.length >= 3, 1000);
    expect(session.isLatched).toBe(true);
    session.start(remoteAt(second.port));
    expect(session.isLatched).toBe(false);
    await waitFor(() => second.packets.length >= 3, 1000);
    expect(second.packets.length).toBeGreaterThanOrEqual(3);
    const firstCount = first.packets.length;
    await sleep(60);
    expect(first.packets.length).toBe(firstCount);
    expect(session.stats().sendErrors).toBe(0);
  });

  it('stops agent audio within one frame on clear() and says how much was sent', async () => {
    const peer = await rawPeer();
    const session = await openSession();
    session.start(remoteAt(peer.port));
    const tone = Int16Array.from({ length: 8000 * 2 }, (_, i) =>
      Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000)),
    );
    const playback = session.play(tone);
    await sleep(300);
    const { discardedMs } = session.clear();
    const sentBeforeClear = session.stats().packetsSent;
    const result = await playback;
    await sleep(100);
    expect(result.interrupted).toBe(true);
    expect(result.playedMs).toBeGreaterThan(200);
    expect(result.playedMs).toBeLessThan(600);
    expect(result.playedMs + discardedMs).toBeCloseTo(2000, 5);
    const silence = (p: RtpPacket): boolean => p.payload.every((b) => b === 0xff);
    // Every packet sent after clear() is silence: not one more frame of speech.
    const afterClear = peer.packets.slice(sentBeforeClear);
    expect(afterClear.length).toBeGreaterThan(2); // comfort silence goes on
    expect(afterClear.filter((p) => !silence(p))).toHaveLength(0);
    const speechSent = peer.packets.filter((p) => !silence(p)).length;
    expect(speechSent * 20).toBeCloseTo(result.playedMs, -1.5);
  });

  it('reorders, drops duplicates, and counts loss from a jittery sender', async () => {
    const peer = await rawPeer();
    const session = await openSession({ jitterBuffer: { targetDepthFrames: 4 } });
    session.start(remoteAt(peer.port));
    const frames: { kind: string; first: number }[] = [];
    session.on('audio', (samples, kind) => frames.push({ kind, first: samples[0]! }));
    const order = [0, 1, 3, 2, 4, 4, 6, 7, 8, 9];
    for (const seq of order) {
      const payload = new Uint8Array(160).fill(encodeG711('PCMU', Int16Array.of(seq * 1000))[0]!);
      peer.socket.send(
        encodeRtpPacket({
          marker: seq === 0,
          payloadType: 0,
          sequenceNumber: 500 + seq,
          timestamp: seq * 160,
          ssrc: 7,
          payload,
        }),
        session.localPort,
        '127.0.0.1',
      );
    }
    await waitFor(() => frames.filter((f) => f.kind !== 'silence').length >= 10, 1000);
    const played = frames.filter((f) => f.kind !== 'silence').slice(0, 10);
    expect(played.map((f) => (f.kind === 'received' ? Math.round(f.first / 1000) : f.kind))).toEqual(
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => (n === 5 ? 'concealed' : n)),
    );
    expect(session.stats()).toMatchObject({
      packetsReceived: 9,
      packetsLost: 1,
      duplicates: 1,
      concealedFrames: 1,
    });
  });

  it('survives hostile datagrams', async () => {
    const peer = await rawPeer();
    const session = await openSession();
    session.start(remoteAt(peer.port));
    for (let i = 0; i < 200; i++) {
      const junk = Buffer.from(Array.from({ length: i % 40 }, (_, j) => (i * 31 + j * 17) & 0xff));
      if (junk.length > 0) junk[0] = (junk[0]! & 0x3f) | (i % 2 === 0 ? 0x80 : 0);
      peer.socket.send(junk, session.localPort, '127.0.0.1');
    }
    await waitFor(() => session.stats().packetsIgnored >= 150 && peer.packets.length > 2, 2000);
    expect(session.stats().packetsIgnored).toBeGreaterThan(150);
    expect(peer.packets.length).toBeGreaterThan(2);
  });

  it('gives a frame per tick from the start, silence while the far end sends nothing (the media clock)', async () => {
    const peer = await rawPeer();
    const session = await openSession();
    const kinds: string[] = [];
    session.on('audio', (_samples, kind) => kinds.push(kind));
    session.start(remoteAt(peer.port));
    await sleep(500);
    // The far end never sent a packet: the clock still ran (about 25 ticks; a loaded machine less).
    expect(kinds.length).toBeGreaterThanOrEqual(10);
    expect(new Set(kinds)).toEqual(new Set(['silence']));
  });

  it('logs a far end whose port is closed once, not once per packet', async () => {
    const lines: string[] = [];
    const { pino } = await import('pino');
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    // Not closed after the test: the test closes it itself.
    const peer = { socket: createSocket('udp4'), port: 0 };
    await new Promise<void>((resolve) => peer.socket.bind(0, '127.0.0.1', resolve));
    peer.port = peer.socket.address().port;
    const session = await openSession({ logger });
    session.start(remoteAt(peer.port));
    // The far end speaks (the session latches and connects), then its port closes: each packet
    // sent now comes back as an ICMP port unreachable (ECONNREFUSED on the connected socket).
    const packet = encodeRtpPacket({
      payloadType: 0,
      sequenceNumber: 1,
      timestamp: 160,
      ssrc: 7,
      marker: false,
      payload: new Uint8Array(160).fill(0xff),
    });
    peer.socket.send(packet, session.localPort, '127.0.0.1');
    await waitFor(() => session.stats().packetsReceived >= 1, 1_000);
    await sleep(100);
    peer.socket.close();
    await waitFor(() => session.stats().sendErrors >= 20, 3_000);
    expect(session.stats().sendErrors).toBeGreaterThanOrEqual(20);
    const warnings = lines.filter((line) => line.includes('RTP socket error'));
    expect(warnings).toHaveLength(1);
  });
});
