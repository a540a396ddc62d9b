import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { sdpAnswer, sdpOffer } from '../../../test/helpers/sipPeers.js';
import {
  headerValue,
  headerValues,
  type ParsedSipMessage,
  type ParsedSipRequest,
  parseSipMessage,
} from './message.js';
import { SipUserAgent } from './userAgent.js';

/**
 * In-dialog correctness against a raw UDP far end written here: session timers (RFC 4028) as the
 * dialog's UAC — asked for, refreshed, expired, 422 — and re-INVITE/UPDATE answered from the new
 * offer, with Require checked.
 */

const logger = pino({ level: 'silent' });
/** The offer and answer every SIP test on loopback uses. */
const offer = sdpOffer;
const answer = sdpAnswer;
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface FarEnd {
  port: number;
  received: ParsedSipMessage[];
  requests(method: string): ParsedSipRequest[];
  /** Sends raw text to the caller's last address. */
  send(text: string): void;
  next(predicate: (message: ParsedSipMessage) => boolean, limitMs?: number): Promise<ParsedSipMessage>;
}

/** Answers the INVITE with `inviteReply(request)` extra headers (or a status), every other request 200. */
async function startFarEnd(
  inviteReply: (request: ParsedSipRequest, count: number) => { status?: number; headers?: string[] },
): Promise<FarEnd> {
  const socket: Socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => socket.close(() => resolve())));
  const received: ParsedSipMessage[] = [];
  let last: RemoteInfo | null = null;
  let invites = 0;
  const waiters: Array<() => void> = [];
  const farEnd: FarEnd = {
    port: socket.address().port,
    received,
    requests: (method) =>
      received.filter((m): m is ParsedSipRequest => m.kind === 'request' && m.method === method),
    send: (text) => {
      if (last) socket.send(text, last.port, last.address);
    },
    next: async (predicate, limitMs = 3_000) => {
      const deadline = Date.now() + limitMs;
      for (;;) {
        const found = received.find(predicate);
        if (found) return found;
        if (Date.now() > deadline) throw new Error('the far end did not receive the expected message');
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 20);
        });
      }
    },
  };
  socket.on('message', (data, remote) => {
    last = remote;
    const parsed = parseSipMessage(data);
    if (!parsed.ok) return;
    const message = parsed.message;
    received.push(message);
    for (const wake of waiters.splice(0)) wake();
    if (message.kind !== 'request' || message.method === 'ACK') return;
    const isInvite = message.method === 'INVITE' && !/;\s*tag=/.test(headerValue(message, 'To') ?? '');
    const reply = isInvite ? inviteReply(message, ++invites) : {};
    const status = reply.status ?? 200;
    const body = isInvite && status === 200 ? answer : '';
    const lines = [
      `SIP/2.0 ${status} ${status === 200 ? 'OK' : 'Nope'}`,
      ...headerValues(message, 'Via').map((via) => `Via: ${via}`),
      `From: ${headerValue(message, 'From')}`,
      `To: ${headerValue(message, 'To')}${isInvite ? ';tag=far' : ''}`,
      `Call-ID: ${message.callId}`,
      `CSeq: ${message.cseq.seq} ${message.method}`,
      `Contact: <sip:far@127.0.0.1:${farEnd.port}>`,
      ...(reply.headers ?? []),
      ...(body ? ['Content-Type: application/sdp'] : []),
      `Content-Length: ${Buffer.byteLength(body)}`,
      '',
      body,
    ];
    socket.send(lines.join('\r\n'), remote.port, remote.address);
  });
  return farEnd;
}

async function startCaller(): Promise<SipUserAgent> {
  const agent = await SipUserAgent.start({ bindAddress: '127.0.0.1', port: 0, logger, timers: { t1Ms: 20 } });
  cleanups.push(() => agent.close());
  return agent;
}

function callTo(agent: SipUserAgent, farEnd: FarEnd) {
  const uri = `sip:+15550100001@127.0.0.1:${farEnd.port}`;
  return agent.invite({
    requestUri: uri,
    from: { uri: 'sip:+15557654321@127.0.0.1' },
    to: { uri },
    sdpOffer: offer,
  });
}

/** A request from the far end inside the dialog the caller's INVITE made. */
function inDialog(invite: ParsedSipRequest, method: string, seq: number, extra: string[], body = ''): string {
  return [
    `${method} sip:callwright@127.0.0.1 SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:1;rport;branch=z9hG4bK${method}${seq}`,
    `From: ${headerValue(invite, 'To')};tag=far`,
    `To: ${headerValue(invite, 'From')}`,
    `Call-ID: ${invite.callId}`,
    `CSeq: ${seq} ${method}`,
    ...extra,
    ...(body ? ['Content-Type: application/sdp'] : []),
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ].join('\r\n');
}

/** The final response to the far end's request `method` number `seq`. */
const isResponseTo = (method: string, seq: number) => (message: ParsedSipMessage) =>
  message.kind === 'response' &&
  message.status >= 200 &&
  message.cseq.method === method &&
  message.cseq.seq === seq;

describe('session timers (RFC 4028) on calls we place', () => {
  it('asks for them, and refreshes by UPDATE at half the interval when the 2xx makes us the refresher', async () => {
    const farEnd = await startFarEnd(() => ({
      headers: ['Session-Expires: 1;refresher=uac', 'Require: timer', 'Allow: INVITE, ACK, BYE, UPDATE'],
    }));
    const agent = await startCaller();
    const call = callTo(agent, farEnd);
    await new Promise((resolve) => call.on('answered', resolve));
    const [invite] = farEnd.requests('INVITE') as [ParsedSipRequest];
    expect(headerValue(invite, 'Supported')).toBe('timer');
    expect(headerValue(invite, 'Session-Expires')).toBe('1800');
    expect(headerValue(invite, 'Min-SE')).toBe('90');
    const update = (await farEnd.next(
      (m) => m.kind === 'request' && m.method === 'UPDATE',
    )) as ParsedSipRequest;
    expect(headerValue(update, 'Session-Expires')).toBe('1;refresher=uac');
    expect(update.body).toBe('');
    expect(call.state).toBe('answered');
    await call.hangUp();
  });

  it('refreshes by re-INVITE with our SDP when UPDATE is not allowed, and acknowledges it', async () => {
    const farEnd = await startFarEnd(() => ({ headers: ['Session-Expires: 1;refresher=uac'] }));
    const agent = await startCaller();
    const call = callTo(agent, farEnd);
    await new Promise((resolve) => call.on('answered', resolve));
    await farEnd.next((m) => m.kind === 'request' && m.method === 'INVITE' && m.cseq.seq === 2);
    const reinvite = farEnd.requests('INVITE')[1] as ParsedSipRequest;
    expect(reinvite.body).toBe(offer);
    await farEnd.next((m) => m.kind === 'request' && m.method === 'ACK' && m.cseq.seq === 2);
    await call.hangUp();
  });

  it('hangs up when the far end is the refresher and lets the session lapse', async () => {
    const farEnd = await startFarEnd(() => ({ headers: ['Session-Expires: 1;refresher=uas'] }));
    const agent = await startCaller();
    const call = callTo(agent, farEnd);
    const outcome = await call.outcome;
    // The call ends once its BYE is handed to the transaction (RFC 3261 §15.1.1, issue 35), which
    // can be before the datagram reaches the far end: wait for it to arrive.
    expect(outcome).toMatchObject({ kind: 'ended', ended: { by: 'local', reason: 'BYE sent' } });
    await farEnd.next((m) => m.kind === 'request' && m.method === 'BYE');
    expect(farEnd.requests('BYE')).toHaveLength(1);
  });

  it('a refresh from the far end keeps the call: 200 echoes the interval with Require: timer', async () => {
    const farEnd = await startFarEnd(() => ({ headers: ['Session-Expires: 1;refresher=uas'] }));
    const agent = await startCaller();
    const call = callTo(agent, farEnd);
    await new Promise((resolve) => call.on('answered', resolve));
    const invite = farEnd.requests('INVITE')[0] as ParsedSipRequest;
    for (let seq = 1; seq <= 3; seq++) {
      await new Promise((resolve) => setTimeout(resolve, 400));
      farEnd.send(inDialog(invite, 'UPDATE', seq, ['Supported: timer', 'Session-Expires: 1;refresher=uac']));
      const reply = await farEnd.next(isResponseTo('UPDATE', seq));
      expect(reply.kind === 'response' && reply.status).toBe(200);
      expect(headerValue(reply, 'Session-Expires')).toBe('1;refresher=uac');
      expect(headerValue(reply, 'Require')).toBe('timer');
    }
    // 1.2 s after the answer, past the lapse of the first interval: still up, no BYE.
    expect(call.state).toBe('answered');
    expect(farEnd.requests('BYE')).toHaveLength(0);
    await call.hangUp();
  });

  it('answers 422 by asking again with the Min-SE the far end names', async () => {
    const farEnd = await startFarEnd((_request, count) =>
      count === 1 ? { status: 422, headers: ['Min-SE: 3600'] } : {},
    );
    const agent = await startCaller();
    const call = callTo(agent, farEnd);
    await new Promise((resolve) => call.on('answered', resolve));
    const [first, second] = farEnd.requests('INVITE') as [ParsedSipRequest, ParsedSipRequest];
    expect(headerValue(first, 'Session-Expires')).toBe('1800');
    expect(headerValue(second, 'Session-Expires')).toBe('3600');
    expect(second.cseq.seq).toBe(first.cseq.seq + 1);
    await call.hangUp();
  });
});

describe('re-INVITE and UPDATE from the far end', () => {
  it('answers a new offer through the answerer, 488s what it refuses, and 420s an unknown Require', async () => {
    const farEnd = await startFarEnd(() => ({}));
    const agent = await startCaller();
    const call = callTo(agent, farEnd);
    const offers: string[] = [];
    call.answerOffersWith((sdp) => {
      offers.push(sdp);
      return sdp.includes('a=sendonly')
        ? { sdp: answer.replace('m=audio 40002 RTP/AVP 0\r\n', 'm=audio 40002 RTP/AVP 0\r\na=recvonly\r\n') }
        : { status: 488, reason: 'no common codec' };
    });
    await new Promise((resolve) => call.on('answered', resolve));
    const invite = farEnd.requests('INVITE')[0] as ParsedSipRequest;
    const hold = offer.replace('o=- 1 1', 'o=- 1 2').concat('a=sendonly\r\n');
    farEnd.send(inDialog(invite, 'INVITE', 1, [`Contact: <sip:far@127.0.0.1:${farEnd.port}>`], hold));
    const held = await farEnd.next(isResponseTo('INVITE', 1));
    expect(held.kind === 'response' && held.status).toBe(200);
    expect(held.body).toContain('a=recvonly');
    expect(offers).toEqual([hold]);

    farEnd.send(inDialog(invite, 'UPDATE', 2, [], offer.replace('RTP/AVP 0', 'RTP/AVP 18')));
    const refused = await farEnd.next(isResponseTo('UPDATE', 2));
    expect(refused.kind === 'response' && refused.status).toBe(488);

    farEnd.send(inDialog(invite, 'UPDATE', 3, ['Require: 100rel, timer']));
    const unsupported = await farEnd.next(isResponseTo('UPDATE', 3));
    expect(unsupported.kind === 'response' && unsupported.status).toBe(420);
    expect(headerValue(unsupported, 'Unsupported')).toBe('100rel');
    expect(call.state).toBe('answered');
    await call.hangUp();
  });
});
