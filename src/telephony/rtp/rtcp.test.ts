import { createSocket } from 'node:dgram';
import { describe, expect, it } from 'vitest';
import { rtpTestBench } from '../../../test/helpers/rtpBench.js';
import { buildRtcpReport, ntpMiddle, ntpTime, parseRtcpReports } from './rtcp.js';
import type { RtpSession } from './rtpSession.js';
import { createCryptoLines } from './sdes.js';
import { createAnswer, createOffer, parseAnswer } from './sdp.js';

const { openSession, closeLater, sleep } = rtpTestBench(45000);

async function pair(srtp: boolean, rtcpMux: boolean): Promise<[RtpSession, RtpSession]> {
  const [a, b] = [await openSession({ rtcpIntervalMs: 150 }), await openSession({ rtcpIntervalMs: 150 })];
  const lines = srtp ? createCryptoLines() : [];
  const answer = createAnswer(
    createOffer({
      address: a.publicAddress,
      port: a.localPort,
      rtcpMux,
      ...(srtp ? { crypto: { lines, secureProfile: true } } : {}),
    }),
    { address: b.publicAddress, port: b.localPort, srtp: srtp ? 'required' : 'off' },
  );
  // RFC 5761: the answer multiplexes exactly when the offer asked.
  expect(answer.sdp.includes('a=rtcp-mux')).toBe(rtcpMux);
  const remote = parseAnswer(answer.sdp, srtp ? { srtp: { offered: lines, policy: 'required' } } : {});
  expect(remote.rtcpMux).toBe(rtcpMux);
  a.start(remote);
  b.start(answer.remote);
  return [a, b];
}

describe('RTCP (RFC 3550 §6)', () => {
  it('writes and reads back an SR with a report block and a CNAME, and an RR', () => {
    const ntp = ntpTime(Date.UTC(2026, 10, 26, 12, 0, 0, 500));
    expect(ntp.msw).toBe(Math.floor(Date.UTC(2026, 10, 26, 12) / 1000) + 2_208_988_800);
    expect(ntp.lsw).toBe(2 ** 31);
    const block = {
      ssrc: 0xcafe,
      fractionLost: 64,
      cumulativeLost: 12,
      extendedHighestSeq: 0x1_0005,
      jitter: 40,
      lastSr: ntpMiddle(ntp),
      delaySinceLastSr: 65536,
    };
    const sender = {
      ntpMsw: ntp.msw,
      ntpLsw: ntp.lsw,
      rtpTimestamp: 1600,
      packetCount: 10,
      octetCount: 1600,
    };
    const sr = buildRtcpReport({ ssrc: 0xbeef, sender, block, cname: 'callwright-beef' });
    expect(sr.length % 4).toBe(0);
    expect(parseRtcpReports(sr)).toEqual([{ type: 200, ssrc: 0xbeef, sender, blocks: [block] }]);
    const rr = buildRtcpReport({ ssrc: 1, sender: null, block: null, cname: 'x' });
    expect(parseRtcpReports(rr)).toEqual([{ type: 201, ssrc: 1, sender: null, blocks: [] }]);
    expect(parseRtcpReports(sr.subarray(0, 20))).toEqual([]);
    expect(parseRtcpReports(Buffer.from('not rtcp at all'))).toEqual([]);
  });

  it.each([
    ['plain RTP, RTCP on port + 1', false, false],
    ['plain RTP, RTCP multiplexed on the RTP port (rtcp-mux)', false, true],
    ['SRTP (SRTCP both ways), on port + 1', true, false],
    ['SRTP (SRTCP both ways), multiplexed', true, true],
  ])('two sessions over %s report to each other: no loss, a round trip, jitter', async (_, srtp, rtcpMux) => {
    const [a, b] = await pair(srtp, rtcpMux);
    for (let i = 0; i < 100 && (a.stats().remoteReport?.roundTripMs ?? null) === null; i++) await sleep(20);
    for (const session of [a, b]) {
      const stats = session.stats();
      expect(stats.rtcpReportsReceived).toBeGreaterThan(0);
      expect(stats.remoteReport).toMatchObject({ fractionLost: 0, cumulativeLost: 0 });
      expect(stats.remoteReport!.jitterMs).toBeLessThan(50);
    }
    // Reports multiplexed on the RTP port are told from RTP, never taken for media.
    for (const session of [a, b]) expect(session.stats().packetsIgnored).toBe(0);
    const roundTrip = a.stats().remoteReport!.roundTripMs;
    expect(roundTrip).not.toBeNull();
    expect(roundTrip!).toBeGreaterThanOrEqual(0);
    expect(roundTrip!).toBeLessThan(1_000);
  });

  it('an SRTP session sends SRTCP: a plain RTCP reader finds no report in it', async () => {
    const listener = createSocket('udp4');
    closeLater(listener);
    await new Promise<void>((resolve) => listener.bind(0, '127.0.0.1', resolve));
    const session = await openSession({ rtcpIntervalMs: 100 });
    const key = Buffer.alloc(30, 7);
    const packets: Buffer[] = [];
    const rtcp = createSocket('udp4');
    closeLater(rtcp);
    await new Promise<void>((resolve) => rtcp.bind(listener.address().port + 1, '127.0.0.1', resolve));
    rtcp.on('message', (m) => packets.push(m));
    session.start({
      address: '127.0.0.1',
      port: listener.address().port,
      codec: 'PCMU',
      payloadType: 0,
      telephoneEventPayloadType: null,
      ptimeMs: 20,
      direction: 'sendrecv',
      srtp: { suite: 'AES_CM_128_HMAC_SHA1_80', localKey: key, remoteKey: key },
    });
    for (let i = 0; i < 50 && packets.length === 0; i++) await sleep(20);
    expect(packets.length).toBeGreaterThan(0);
    // The SR's sender info and CNAME are encrypted: the bytes after the first 8 do not parse as
    // the SR we would write, and the SRTCP index word carries the E flag.
    const packet = packets[0]!;
    expect(packet.includes(Buffer.from('callwright-'))).toBe(false);
    expect(packet.readUInt32BE(packet.length - 14) & 0x80000000).not.toBe(0);
  });

  it('multiplexed (rtcp-mux), the reports go to the RTP port of the far end, and none to the port above', async () => {
    const rtpPeer = createSocket('udp4');
    closeLater(rtpPeer);
    await new Promise<void>((resolve) => rtpPeer.bind(0, '127.0.0.1', resolve));
    const abovePeer = createSocket('udp4');
    closeLater(abovePeer);
    await new Promise<void>((resolve) => abovePeer.bind(rtpPeer.address().port + 1, '127.0.0.1', resolve));
    const reportsOnRtpPort: Buffer[] = [];
    const packetsAbove: Buffer[] = [];
    rtpPeer.on('message', (m) => {
      if (m[1]! >= 192 && m[1]! <= 223) reportsOnRtpPort.push(m);
    });
    abovePeer.on('message', (m) => packetsAbove.push(m));
    const session = await openSession({ rtcpIntervalMs: 100 });
    session.start({
      address: '127.0.0.1',
      port: rtpPeer.address().port,
      codec: 'PCMU',
      payloadType: 0,
      telephoneEventPayloadType: null,
      ptimeMs: 20,
      direction: 'sendrecv',
      srtp: null,
      rtcpMux: true,
    });
    for (let i = 0; i < 50 && reportsOnRtpPort.length === 0; i++) await sleep(20);
    expect(parseRtcpReports(reportsOnRtpPort[0] as Buffer)[0]?.ssrc).toBeDefined();
    expect(packetsAbove).toEqual([]);
  });
});
