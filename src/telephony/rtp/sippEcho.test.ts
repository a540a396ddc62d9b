import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { tmpdir } from 'node:os';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeG711, encodeG711 } from './g711.js';
import { MediaClock } from './mediaClock.js';
import { PortAllocator } from './portAllocator.js';
import { RtpSession } from './rtpSession.js';
import { createOffer, parseAnswer } from './sdp.js';

/**
 * Interop with a real far end: SIPp (Debian sip-tester) as a UAS with -rtp_echo. The test places a
 * minimal SIP call to get SIPp's real SDP answer, then checks our PCMU comes back byte for byte.
 */
const logger = pino({ level: 'silent' });
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let sipp: ChildProcess | null = null;
let sipExited: Promise<number | null>;
let sip: Socket;
const sipPort = randomInt(16000, 16400) * 2;
const mediaPort = sipPort + 10;

function sipRequest(method: string, cseq: number, toTag: string, callId: string, body = ''): string {
  const localPort = sip.address().port;
  return [
    `${method} sip:echo@127.0.0.1:${sipPort} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${localPort};branch=z9hG4bK${randomBytes(6).toString('hex')};rport`,
    'Max-Forwards: 70',
    'From: <sip:test@127.0.0.1>;tag=cwtest',
    `To: <sip:echo@127.0.0.1:${sipPort}>${toTag ? `;tag=${toTag}` : ''}`,
    `Call-ID: ${callId}`,
    `CSeq: ${cseq} ${method}`,
    `Contact: <sip:test@127.0.0.1:${localPort}>`,
    ...(body ? ['Content-Type: application/sdp'] : []),
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ].join('\r\n');
}

function nextResponse(status: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sip.off('message', onMessage);
      reject(new Error(`no SIP ${status} within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (message: Buffer): void => {
      const text = message.toString('utf8');
      if (!text.startsWith(`SIP/2.0 ${status}`)) return;
      clearTimeout(timer);
      sip.off('message', onMessage);
      resolve(text);
    };
    sip.on('message', onMessage);
  });
}

beforeAll(async () => {
  sipp = spawn(
    'sipp',
    [
      '-sn',
      'uas',
      '-i',
      '127.0.0.1',
      '-p',
      String(sipPort),
      '-mi',
      '127.0.0.1',
      '-mp',
      String(mediaPort),
    ].concat(['-rtp_echo', '-nostdin', '-m', '1', '-timeout', '30s']),
    { cwd: tmpdir(), stdio: 'ignore' },
  );
  const child = sipp;
  sipExited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  sip = createSocket('udp4');
  await new Promise<void>((resolve) => sip.bind(0, '127.0.0.1', resolve));
  await sleep(300); // SIPp binds its sockets
});

afterAll(async () => {
  sip.close();
  if (sipp?.pid !== undefined && sipp.exitCode === null) {
    process.kill(sipp.pid, 'SIGTERM');
    await Promise.race([sipExited, sleep(2000)]);
    if (sipp.exitCode === null && sipp.signalCode === null) process.kill(sipp.pid, 'SIGKILL');
  }
});

describe('SIPp interop', () => {
  it("reads SIPp's SDP answer and gets PCMU echoed back byte for byte", async () => {
    const clock = new MediaClock({ logger });
    const ports = new PortAllocator({ minPort: 42000, maxPort: 42998 });
    const session = await RtpSession.open({ logger, clock, ports, bindAddress: '127.0.0.1' });
    try {
      const callId = `${randomBytes(8).toString('hex')}@127.0.0.1`;
      const offer = createOffer({ address: session.publicAddress, port: session.localPort });
      const ok = nextResponse('200', 5000);
      sip.send(sipRequest('INVITE', 1, '', callId, offer), sipPort, '127.0.0.1');
      const response = await ok;
      const toTag = /^To:.*;tag=([^;\s]+)/im.exec(response)?.[1] ?? '';
      sip.send(sipRequest('ACK', 1, toTag, callId), sipPort, '127.0.0.1');
      const remote = parseAnswer(response.slice(response.indexOf('\r\n\r\n') + 4));
      expect(remote).toMatchObject({ address: '127.0.0.1', port: mediaPort, codec: 'PCMU', payloadType: 0 });

      const received: Int16Array[] = [];
      session.on('audio', (samples, kind) => {
        if (kind === 'received') received.push(samples.slice());
      });
      session.start(remote);
      // Random (non-periodic) codes, avoiding µ-law's second zero 0x7f and the silence byte 0xff.
      const bytes = randomBytes(50 * 160).map((b) => (b === 0x7f || b === 0xff ? 0x81 : b));
      await session.play(decodeG711('PCMU', bytes));
      const deadline = Date.now() + 3000;
      const wire = (): Buffer => Buffer.concat(received.map((s) => Buffer.from(encodeG711('PCMU', s))));
      while (Date.now() < deadline && !wire().includes(Buffer.from(bytes.subarray(-160)))) await sleep(20);

      const echoed = wire();
      const start = echoed.indexOf(Buffer.from(bytes.subarray(0, 32)));
      expect(start).toBeGreaterThanOrEqual(0);
      expect(echoed.subarray(start, start + bytes.length)).toEqual(Buffer.from(bytes));
      expect(session.isLatched).toBe(true);
      expect(session.stats().packetsLost).toBe(0);

      const bye = nextResponse('200', 5000);
      sip.send(sipRequest('BYE', 2, toTag, callId), sipPort, '127.0.0.1');
      await bye;
    } finally {
      await session.close();
    }
  });
});
