import { createSocket, type Socket } from 'node:dgram';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { sdpAnswer, sdpOffer } from '../../../test/helpers/sipPeers.js';
import { headerValue, type ParsedSipMessage, type ParsedSipRequest, parseSipMessage } from './message.js';
import { SipUserAgent } from './userAgent.js';

/**
 * Session timers (RFC 4028) on calls we answer (issue 40's inbound calls): a raw UDP caller
 * written here asks for them in its INVITE; our 200 names the interval and the refresher, and
 * then we either refresh the dialog ourselves or end it when the caller lets it lapse.
 */

const logger = pino({ level: 'silent' });
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface RawCaller {
  received: ParsedSipMessage[];
  send(text: string): void;
  next(predicate: (message: ParsedSipMessage) => boolean, limitMs?: number): Promise<ParsedSipMessage>;
}

/** A UDP socket that sends what it is told to our UA and answers every request it gets with 200. */
async function startRawCaller(uaPort: number): Promise<RawCaller & { port: number }> {
  const socket: Socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => socket.close(() => resolve())));
  const received: ParsedSipMessage[] = [];
  socket.on('message', (data) => {
    const parsed = parseSipMessage(data);
    if (!parsed.ok) return;
    const message = parsed.message;
    received.push(message);
    if (message.kind !== 'request' || message.method === 'ACK') return;
    const reply = [
      'SIP/2.0 200 OK',
      `Via: ${headerValue(message, 'Via')}`,
      `From: ${headerValue(message, 'From')}`,
      `To: ${headerValue(message, 'To')}`,
      `Call-ID: ${message.callId}`,
      `CSeq: ${message.cseq.seq} ${message.method}`,
      ...(message.method === 'INVITE' ? ['Content-Type: application/sdp'] : []),
      `Content-Length: ${message.method === 'INVITE' ? Buffer.byteLength(sdpOffer) : 0}`,
      '',
      message.method === 'INVITE' ? sdpOffer : '',
    ].join('\r\n');
    socket.send(reply, uaPort, '127.0.0.1');
  });
  return {
    port: socket.address().port,
    received,
    send: (text) => socket.send(text, uaPort, '127.0.0.1'),
    next: async (predicate, limitMs = 4_000) => {
      const deadline = Date.now() + limitMs;
      for (;;) {
        const found = received.find(predicate);
        if (found) return found;
        if (Date.now() > deadline) throw new Error('the caller did not receive the expected message');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  };
}

/** Our UA, answering every INVITE with the standard answer. */
async function startAnswerer(): Promise<SipUserAgent> {
  const agent = await SipUserAgent.start({ bindAddress: '127.0.0.1', port: 0, logger, timers: { t1Ms: 20 } });
  cleanups.push(() => agent.close());
  agent.onInvite((incoming) => void incoming.answer(sdpAnswer));
  return agent;
}

function invite(callerPort: number, uaPort: number, extra: string[]): string {
  return [
    `INVITE sip:+15550009999@127.0.0.1:${uaPort} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${callerPort};rport;branch=z9hG4bKinv1`,
    'Max-Forwards: 70',
    'From: <sip:+15557654321@127.0.0.1>;tag=caller',
    `To: <sip:+15550009999@127.0.0.1:${uaPort}>`,
    'Call-ID: answered-session-timer',
    'CSeq: 1 INVITE',
    `Contact: <sip:caller@127.0.0.1:${callerPort}>`,
    ...extra,
    'Content-Type: application/sdp',
    `Content-Length: ${Buffer.byteLength(sdpOffer)}`,
    '',
    sdpOffer,
  ].join('\r\n');
}

function ack(callerPort: number, uaPort: number, ok: ParsedSipMessage): string {
  return [
    `ACK sip:callwright@127.0.0.1:${uaPort} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${callerPort};rport;branch=z9hG4bKack1`,
    'Max-Forwards: 70',
    'From: <sip:+15557654321@127.0.0.1>;tag=caller',
    `To: ${headerValue(ok, 'To')}`,
    'Call-ID: answered-session-timer',
    'CSeq: 1 ACK',
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
}

const isOk = (message: ParsedSipMessage) =>
  message.kind === 'response' && message.status === 200 && message.cseq.method === 'INVITE';
const isRequest = (method: string) => (message: ParsedSipMessage) =>
  message.kind === 'request' && message.method === method;

describe('session timers (RFC 4028) on calls we answer', () => {
  it('the caller refreshes: our 200 says so with Require: timer, and a lapsed session ends with our BYE', async () => {
    const agent = await startAnswerer();
    const caller = await startRawCaller(agent.boundPort);
    caller.send(
      invite(caller.port, agent.boundPort, [
        'Supported: timer',
        'Session-Expires: 1;refresher=uac',
        'Min-SE: 1',
      ]),
    );
    const ok = await caller.next(isOk);
    expect(headerValue(ok, 'Session-Expires')).toBe('1;refresher=uac');
    expect(headerValue(ok, 'Require')).toBe('timer');
    caller.send(ack(caller.port, agent.boundPort, ok));
    // No refresh comes: before the interval is over (less a third), we end the dialog.
    const bye = (await caller.next(isRequest('BYE'))) as ParsedSipRequest;
    expect(bye.callId).toBe('answered-session-timer');
  });

  it('we refresh when the caller names us (or cannot), by UPDATE when it allows UPDATE', async () => {
    const agent = await startAnswerer();
    const caller = await startRawCaller(agent.boundPort);
    caller.send(
      invite(caller.port, agent.boundPort, ['Session-Expires: 1', 'Allow: INVITE, ACK, BYE, CANCEL, UPDATE']),
    );
    const ok = await caller.next(isOk);
    // It did not say it supports timers: we are the refresher, and Require is not sent.
    expect(headerValue(ok, 'Session-Expires')).toBe('1;refresher=uas');
    expect(headerValue(ok, 'Require')).toBeUndefined();
    caller.send(ack(caller.port, agent.boundPort, ok));
    const update = (await caller.next(isRequest('UPDATE'))) as ParsedSipRequest;
    expect(headerValue(update, 'Session-Expires')).toBe('1;refresher=uac');
    // The refresh was answered: the call goes on, no BYE.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(caller.received.some(isRequest('BYE'))).toBe(false);
  });

  it('without Session-Expires in the INVITE, our 200 names none and no timer runs', async () => {
    const agent = await startAnswerer();
    const caller = await startRawCaller(agent.boundPort);
    caller.send(invite(caller.port, agent.boundPort, []));
    const ok = await caller.next(isOk);
    expect(headerValue(ok, 'Session-Expires')).toBeUndefined();
    caller.send(ack(caller.port, agent.boundPort, ok));
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(caller.received.some((message) => isRequest('BYE')(message) || isRequest('UPDATE')(message))).toBe(
      false,
    );
  });
});
