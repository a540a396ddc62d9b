import { createSocket, type Socket } from 'node:dgram';
import { pino } from 'pino';
import { afterEach } from 'vitest';
import { headerValue, headerValues, parseSipMessage } from '../../src/telephony/sip/message.js';
import { SipUserAgent, type SipUserAgentOptions } from '../../src/telephony/sip/userAgent.js';

/**
 * SIP on loopback for tests: user agents and raw UDP peers on 127.0.0.1, and a third address
 * (127.0.0.77) that a hostile far end may try to steer our messages at.
 */

export const thirdAddress = '127.0.0.77';
export const sdpOffer =
  'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0\r\n';
export const sdpAnswer =
  'v=0\r\no=- 2 2 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40002 RTP/AVP 0\r\n';

/** Resolves once `condition` holds, checking every 10 ms for at most `limitMs`. */
export async function until(condition: () => boolean, limitMs: number): Promise<void> {
  for (let waitedMs = 0; !condition() && waitedMs < limitMs; waitedMs += 10) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export interface RawUasOptions {
  /** The final status of each INVITE (other requests get 200). Default 200. */
  inviteStatus?: number;
  /** Extra headers of the INVITE's response, given the peer's port. */
  inviteHeaders?: (port: number) => string[];
  /** The SDP of a 2xx to INVITE. Default `sdpAnswer`. */
  sdp?: string;
  /** The To tag the peer adds to its INVITE response. */
  toTag?: string;
}

/**
 * Everything a test opens is closed after it, last opened first. Call once at the top of a test
 * file (it registers an `afterEach`).
 */
export function sipTestBench() {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const defer = (cleanup: () => Promise<void> | void) => {
    cleanups.push(cleanup);
  };

  async function bindSocket(address: string, port = 0): Promise<Socket> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(port, address, resolve));
    defer(() => new Promise<void>((resolve) => socket.close(() => resolve())));
    return socket;
  }

  /** A user agent on 127.0.0.1 with T1 at 10 ms unless `options` say otherwise. */
  async function startUserAgent(options: Partial<SipUserAgentOptions> = {}): Promise<SipUserAgent> {
    const agent = await SipUserAgent.start({
      bindAddress: '127.0.0.1',
      port: 0,
      logger: pino({ level: 'silent' }),
      timers: { t1Ms: 10 },
      ...options,
    });
    defer(() => agent.close());
    return agent;
  }

  /** A raw UAS on 127.0.0.1: answers each INVITE as `options` say, 200s the rest, records methods. */
  async function startRawUas(options: RawUasOptions = {}) {
    const { inviteStatus = 200, inviteHeaders = () => [], sdp = sdpAnswer, toTag = 'callee' } = options;
    const socket = await bindSocket('127.0.0.1');
    const port = socket.address().port;
    /** Every request received, retransmissions included. */
    const methods: string[] = [];
    socket.on('message', (data, remote) => {
      const parsed = parseSipMessage(data);
      if (!parsed.ok || parsed.message.kind !== 'request') return;
      const request = parsed.message;
      methods.push(request.method);
      if (request.method === 'ACK') return;
      const isInvite = request.method === 'INVITE';
      const status = isInvite ? inviteStatus : 200;
      const lines = [
        `SIP/2.0 ${status} ${status >= 300 ? 'Moved' : 'OK'}`,
        ...headerValues(request, 'Via').map((via) => `Via: ${via}`),
        `From: ${headerValue(request, 'From')}`,
        `To: ${headerValue(request, 'To')}${isInvite ? `;tag=${toTag}` : ''}`,
        `Call-ID: ${request.callId}`,
        `CSeq: ${request.cseq.seq} ${request.method}`,
        ...(isInvite ? inviteHeaders(port) : []),
      ];
      const body = isInvite && status < 300 ? sdp : '';
      if (body !== '') lines.push('Content-Type: application/sdp');
      lines.push(`Content-Length: ${Buffer.byteLength(body)}`, '', body);
      socket.send(lines.join('\r\n'), remote.port, remote.address);
    });
    return { port, methods };
  }

  return { defer, bindSocket, startUserAgent, startRawUas };
}
