import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createOffer,
  type DtmfDigit,
  decodeG711,
  encodeG711,
  type G711Codec,
  MediaClock,
  PortAllocator,
  parseAnswer,
  type RemoteMedia,
  RtpSession,
} from '../../src/telephony/rtp/index.js';
import type { CallOutcome, OutgoingCall } from '../../src/telephony/sip/index.js';
import {
  expectSippPassed,
  freeEvenUdpPort,
  inviteOptions,
  logger,
  onCleanup,
  outcomeOf,
  startCaller,
  startSipp,
  stopAll,
} from './harness.js';

/**
 * Interoperability of signalling and media together: our UAC (SipUserAgent.invite) carries the SDP
 * of our own RtpSession, SIPp answers as the callee, and the session is started with
 * parseAnswer(answer). Verdict: SIPp's exit code and what our call and our session observed.
 */

afterEach(stopAll);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** An RtpSession on loopback, on a port the system reported free (bound to 0 first). */
async function openSession(): Promise<RtpSession> {
  const base = await freeEvenUdpPort();
  const clock = new MediaClock({ logger });
  const ports = new PortAllocator({ minPort: base, maxPort: base + 64 });
  const session = await RtpSession.open({ logger, clock, ports, bindAddress: '127.0.0.1' });
  onCleanup(() => session.close());
  return session;
}

interface MediaCall {
  readonly call: OutgoingCall;
  /** The far end's media as parseAnswer read it, once answered. */
  readonly remote: Promise<RemoteMedia>;
}

/** Places the call with the session's offer; on the answer, starts the session on SIPp's SDP. */
function placeCall(
  caller: Awaited<ReturnType<typeof startCaller>>,
  sippPort: number,
  session: RtpSession,
): MediaCall {
  const offer = createOffer({ address: session.publicAddress, port: session.localPort });
  const call = caller.invite(inviteOptions(sippPort, offer));
  const remote = new Promise<RemoteMedia>((resolve, reject) => {
    call.on('answered', (info) => {
      try {
        const media = parseAnswer(info.sdpAnswer);
        session.start(media);
        resolve(media);
      } catch (error) {
        reject(error);
      }
    });
    call.outcome.then((outcome) =>
      reject(new Error(`the call ended without an answer: ${JSON.stringify(outcome)}`)),
    );
  });
  remote.catch(() => {}); // awaited by the test; a late rejection after resolve is a no-op
  return { call, remote };
}

/** Random G.711 codes; for µ-law, avoiding its negative zero 0x7f (it decodes like 0xff). */
function randomG711(codec: G711Codec, frames: number): Uint8Array {
  const bytes = randomBytes(frames * 160);
  return codec === 'PCMU' ? bytes.map((b) => (b === 0x7f ? 0x80 : b)) : bytes;
}

/**
 * Collects the far end's payload bytes: each 'received' frame is the decoding of exactly one RTP
 * payload, and re-encoding it with the same table gives back the wire bytes (G.711 decode is
 * one-to-one apart from µ-law's two zeros, which randomG711 never sends).
 */
function collectReceived(session: RtpSession, codec: G711Codec): () => Buffer {
  const frames: Buffer[] = [];
  session.on('audio', (samples, kind) => {
    if (kind === 'received') frames.push(Buffer.from(encodeG711(codec, samples)));
  });
  return () => Buffer.concat(frames);
}

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await sleep(20);
}

function expectEchoed(received: Buffer, sent: Uint8Array): void {
  const start = received.indexOf(Buffer.from(sent.subarray(0, 32)));
  expect(start, 'the start of our audio never came back').toBeGreaterThanOrEqual(0);
  const echoed = received.subarray(start, start + sent.length);
  const firstDifference = echoed.findIndex((byte, i) => byte !== sent[i]);
  expect(echoed.length, 'echoed bytes').toBe(sent.length);
  expect(firstDifference, 'index of the first echoed byte that differs from what we sent').toBe(-1);
}

function expectEndedBy(outcome: CallOutcome, by: 'local' | 'remote'): void {
  expect(outcome.kind).toBe('ended');
  if (outcome.kind === 'ended') expect(outcome.ended.by).toBe(by);
}

describe('SIPp as the callee, with our RTP session', () => {
  it('answered call with RTP echo: PCMU comes back byte for byte, then our BYE', async () => {
    const { port, mediaPort, run } = await startSipp('uas_rtp_echo.xml', ['-rtp_echo']);
    const caller = await startCaller();
    const session = await openSession();
    const received = collectReceived(session, 'PCMU');
    const { call, remote } = placeCall(caller, port, session);

    expect(await remote).toMatchObject({
      address: '127.0.0.1',
      port: mediaPort,
      codec: 'PCMU',
      payloadType: 0,
      telephoneEventPayloadType: 101,
    });
    const sent = randomG711('PCMU', 50);
    const played = await session.play(decodeG711('PCMU', sent));
    expect(played.interrupted).toBe(false);
    const tail = Buffer.from(sent.subarray(-160));
    await until(() => received().includes(tail), 3_000);
    await call.hangUp();

    expectEndedBy(await outcomeOf(call, run), 'local');
    expectEchoed(received(), sent);
    expect(session.isLatched).toBe(true);
    expect(session.stats().packetsIgnored).toBe(0);
    await expectSippPassed(run);
  });

  it('callee hangs up with PCMA: we offer PCMU and PCMA, take PCMA, audio flows, SIPp sends BYE', async () => {
    const { port, mediaPort, run } = await startSipp('uas_callee_hangup_pcma.xml', ['-rtp_echo']);
    const caller = await startCaller();
    const session = await openSession();
    const received = collectReceived(session, 'PCMA');
    const { call, remote } = placeCall(caller, port, session);

    expect(await remote).toMatchObject({
      address: '127.0.0.1',
      port: mediaPort,
      codec: 'PCMA',
      payloadType: 8,
      telephoneEventPayloadType: null,
    });
    const sent = randomG711('PCMA', 25);
    void session.play(decodeG711('PCMA', sent));

    const outcome = await outcomeOf(call, run);
    expectEndedBy(outcome, 'remote');
    if (outcome.kind === 'ended') expect(outcome.answered.sdpAnswer).toMatch(/^m=audio \d+ RTP\/AVP 8\r?$/m);
    // The echo of our PCMA: received only if we sent payload type 8 (others would be ignored).
    expect(received().length).toBeGreaterThanOrEqual(sent.length);
    expectEchoed(received(), sent);
    expect(session.stats().packetsIgnored).toBe(0);
    await expectSippPassed(run);
  });

  // SIPp's play_pcap_audio needs root or CAP_NET_RAW (a raw socket); without it SIPp exits 255
  // and this test fails with SIPp's "Can't create raw IPv4 socket" in the report.
  it('callee DTMF: the packaged RFC 2833 capture of "1" is reported once, then SIPp hangs up', async () => {
    const { port, run } = await startSipp('uas_dtmf.xml');
    const caller = await startCaller();
    const session = await openSession();
    const digits: DtmfDigit[] = [];
    session.on('dtmf', (event) => digits.push(event.digit));
    const { call, remote } = placeCall(caller, port, session);

    expect(await remote).toMatchObject({ codec: 'PCMU', telephoneEventPayloadType: 101 });
    expectEndedBy(await outcomeOf(call, run), 'remote');
    expect(digits).toEqual(['1']);
    // All ten packets of the capture arrived (seven updates, the end packet three times).
    expect(session.stats().dtmfReceived).toBe(1);
    expect(session.stats().packetsReceived).toBeGreaterThanOrEqual(8);
    await expectSippPassed(run);
  });
});
