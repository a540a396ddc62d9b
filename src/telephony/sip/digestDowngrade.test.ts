import { createSocket } from 'node:dgram';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { buildDigestChallenge } from './digest.js';
import { headerValue, headerValues, type ParsedSipRequest, parseSipMessage } from './message.js';
import { SipUserAgent } from './userAgent.js';

/**
 * Issue 34, finding 9: once a server (or whoever answers in its place) has challenged with
 * SHA-256, a re-challenge offering only MD5 is not answered — an attacker on the path must not
 * talk a call down to the weaker hash. A carrier that offers MD5 from the start still gets MD5.
 */

const logger = pino({ level: 'silent' });
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A UAS that answers the n-th INVITE with `challenges[n]` (a 401), and 486 once they run out. */
async function challengingServer(challenges: readonly string[]) {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => socket.close(() => resolve())));
  const invites: ParsedSipRequest[] = [];
  socket.on('message', (data, remote) => {
    const parsed = parseSipMessage(data);
    if (!parsed.ok || parsed.message.kind !== 'request' || parsed.message.method !== 'INVITE') return;
    const request = parsed.message;
    if (invites.some((seen) => seen.cseq.seq === request.cseq.seq)) return; // a retransmission
    const challenge = challenges[invites.length];
    invites.push(request);
    const lines = [
      challenge === undefined ? 'SIP/2.0 486 Busy Here' : 'SIP/2.0 401 Unauthorized',
      ...headerValues(request, 'Via').map((via) => `Via: ${via}`),
      `From: ${headerValue(request, 'From')}`,
      `To: ${headerValue(request, 'To')};tag=uas`,
      `Call-ID: ${request.callId}`,
      `CSeq: ${request.cseq.seq} INVITE`,
      ...(challenge === undefined ? [] : [`WWW-Authenticate: ${challenge}`]),
      'Content-Length: 0',
      '',
      '',
    ];
    socket.send(lines.join('\r\n'), remote.port, remote.address);
  });
  return { port: socket.address().port, invites };
}

async function callThrough(port: number) {
  const agent = await SipUserAgent.start({ bindAddress: '127.0.0.1', port: 0, logger, timers: { t1Ms: 20 } });
  cleanups.push(() => agent.close());
  const call = agent.invite({
    requestUri: `sip:+15550100001@127.0.0.1:${port}`,
    from: { uri: 'sip:+15557654321@127.0.0.1' },
    to: { uri: 'sip:+15550100001@127.0.0.1' },
    sdpOffer: 'v=0\r\n',
    credentials: { username: 'user', password: 'secret' },
    ringTimeoutMs: 5_000,
  });
  return call.outcome;
}

const algorithmOf = (invite: ParsedSipRequest) =>
  /algorithm=([A-Za-z0-9-]+)/.exec(headerValue(invite, 'Authorization') ?? '')?.[1] ?? null;

describe('digest algorithm downgrade (issue 34, finding 9)', () => {
  it('after a SHA-256 challenge, an MD5-only re-challenge is not answered: the call fails', async () => {
    const server = await challengingServer([
      buildDigestChallenge({ realm: 'carrier', algorithm: 'SHA-256', nonce: 'first' }),
      `${buildDigestChallenge({ realm: 'carrier', algorithm: 'MD5', nonce: 'second' })}, stale=true`,
    ]);
    const outcome = await callThrough(server.port);
    expect(server.invites.map(algorithmOf)).toEqual([null, 'SHA-256']);
    expect(outcome).toMatchObject({ kind: 'failed', failure: { status: 401, cause: 'auth_failed' } });
  });

  it('a stale SHA-256 re-challenge is still answered, and MD5 offered from the start is used', async () => {
    const server = await challengingServer([
      buildDigestChallenge({ realm: 'carrier', algorithm: 'SHA-256', nonce: 'first' }),
      `${buildDigestChallenge({ realm: 'carrier', algorithm: 'SHA-256', nonce: 'second' })}, stale=true`,
    ]);
    await callThrough(server.port);
    expect(server.invites.map(algorithmOf)).toEqual([null, 'SHA-256', 'SHA-256']);

    const md5 = await challengingServer([buildDigestChallenge({ realm: 'carrier', algorithm: 'MD5' })]);
    const outcome = await callThrough(md5.port);
    expect(md5.invites.map(algorithmOf)).toEqual([null, 'MD5']);
    expect(outcome).toMatchObject({ kind: 'failed', failure: { status: 486 } });
  });
});
