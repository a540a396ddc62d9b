import { createSocket, type Socket } from 'node:dgram';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { InviteOptions } from './callTypes.js';
import { buildDigestChallenge, verifyDigestAuthorization } from './digest.js';
import type { IncomingCall } from './incomingCall.js';
import { headerValue, parseSipMessage } from './message.js';
import { SipUserAgent } from './userAgent.js';

/**
 * UA-to-UA over loopback with real sockets: our UAC against our UAS, with T1 = 10 ms so
 * every RFC 3261 timer runs 50 times faster.
 */

const logLines: string[] = [];
const logger = pino(
  { level: 'debug' },
  new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString('utf8'));
      done();
    },
  }),
);

const fastTimers = { t1Ms: 10 };
const offer =
  'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0 8\r\n';
const answer =
  'v=0\r\no=- 2 2 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40002 RTP/AVP 0\r\n';

const started: Array<{ close(): Promise<void> | void }> = [];

async function startAgent(): Promise<SipUserAgent> {
  const agent = await SipUserAgent.start({ bindAddress: '127.0.0.1', port: 0, logger, timers: fastTimers });
  started.push(agent);
  return agent;
}

afterEach(async () => {
  for (const item of started.splice(0)) await item.close();
});

function inviteTo(callee: SipUserAgent, overrides: Partial<InviteOptions> = {}): InviteOptions {
  const port = callee.localEndpoint.port;
  return {
    requestUri: `sip:+15550100001@127.0.0.1:${port}`,
    from: { uri: 'sip:+15557654321@127.0.0.1', displayName: 'Callwright' },
    to: { uri: `sip:+15550100001@127.0.0.1:${port}` },
    sdpOffer: offer,
    ringTimeoutMs: 5_000,
    ...overrides,
  };
}

function nextIncoming(callee: SipUserAgent, handle: (call: IncomingCall) => void): Promise<IncomingCall> {
  return new Promise((resolve) => {
    callee.onInvite((call) => {
      handle(call);
      resolve(call);
    });
  });
}

function waitFor<T>(register: (resolve: (value: T) => void) => void): Promise<T> {
  return new Promise((resolve) => register(resolve));
}

/** A UDP relay between caller and callee that can drop chosen datagrams. */
async function startRelay(calleePort: number, drop: (text: string, towardsCallee: boolean) => boolean) {
  const socket: Socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const seen: string[] = [];
  let callerPort = 0;
  socket.on('message', (data, remote) => {
    const towardsCallee = remote.port !== calleePort;
    if (towardsCallee) callerPort = remote.port;
    const text = data.toString('utf8');
    seen.push(`${towardsCallee ? '>' : '<'} ${text.split('\r\n')[0]}`);
    if (drop(text, towardsCallee)) return;
    socket.send(data, towardsCallee ? calleePort : callerPort, '127.0.0.1');
  });
  const relay = {
    port: socket.address().port,
    seen,
    close: () => new Promise<void>((r) => socket.close(() => r())),
  };
  started.push(relay);
  return relay;
}

describe('SIP UA to UA on loopback', () => {
  it('answers, then the caller hangs up with BYE', async () => {
    const caller = await startAgent();
    const callee = await startAgent();
    const incoming = nextIncoming(callee, (call) => {
      call.ring();
      setTimeout(() => void call.answer(answer), 20);
    });
    const call = caller.invite(inviteTo(callee));
    const provisional = waitFor<number>((resolve) => call.on('provisional', (info) => resolve(info.status)));
    const answered = waitFor<string>((resolve) => call.on('answered', (info) => resolve(info.sdpAnswer)));
    expect(await answered).toBe(answer);
    expect(await provisional).toBeGreaterThanOrEqual(100);
    const calleeCall = await incoming;
    expect(calleeCall.sdpOffer).toBe(offer);
    expect(calleeCall.callId).toBe(call.callId);
    expect(calleeCall.from.displayName).toBe('Callwright');
    const calleeEnded = waitFor<string>((resolve) => calleeCall.on('ended', (ended) => resolve(ended.by)));
    await waitFor<unknown>((resolve) =>
      calleeCall.state === 'confirmed' ? resolve(null) : calleeCall.on('acknowledged', resolve),
    );
    await call.hangUp();
    expect(await calleeEnded).toBe('remote');
    expect(await call.outcome).toEqual({
      kind: 'ended',
      answered: { status: 200, sdpAnswer: answer },
      ended: { by: 'local', reason: 'BYE sent' },
    });
    expect(call.state).toBe('ended');
  });

  it('answers, then the callee hangs up with BYE', async () => {
    const caller = await startAgent();
    const callee = await startAgent();
    const incoming = nextIncoming(callee, (call) => {
      void call.answer(answer).then((acknowledged) => {
        if (acknowledged) void call.hangUp();
      });
    });
    const call = caller.invite(inviteTo(callee));
    const outcome = await call.outcome;
    expect(outcome.kind).toBe('ended');
    if (outcome.kind === 'ended') expect(outcome.ended.by).toBe('remote');
    const calleeCall = await incoming;
    await waitFor<unknown>((resolve) =>
      calleeCall.state === 'ended' ? resolve(null) : calleeCall.on('ended', resolve),
    );
    expect(calleeCall.state).toBe('ended');
  });

  it('reports 486 Busy Here as rejected', async () => {
    const caller = await startAgent();
    const callee = await startAgent();
    nextIncoming(callee, (call) => call.reject(486));
    const call = caller.invite(inviteTo(callee));
    const failed = waitFor((resolve) => call.on('failed', resolve));
    const expected = { cause: 'rejected', status: 486, reason: 'Busy Here', timedOut: false };
    expect(await call.outcome).toEqual({ kind: 'failed', failure: expected });
    expect(await failed).toEqual(expected);
  });

  it('cancels on ring timeout and reports the 487 as ring_timeout', async () => {
    const caller = await startAgent();
    const callee = await startAgent();
    const incoming = nextIncoming(callee, (call) => call.ring());
    const call = caller.invite(inviteTo(callee, { ringTimeoutMs: 150 }));
    const outcome = await call.outcome;
    expect(outcome).toEqual({
      kind: 'failed',
      failure: { cause: 'ring_timeout', status: 487, reason: 'Request Terminated', timedOut: false },
    });
    expect((await incoming).state).toBe('canceled');
  });

  it('sends CANCEL only once a provisional arrives, when cancel() came first', async () => {
    const caller = await startAgent();
    const farEnd = createSocket('udp4');
    await new Promise<void>((resolve) => farEnd.bind(0, '127.0.0.1', resolve));
    started.push({ close: () => new Promise<void>((r) => farEnd.close(() => r())) });
    const received: string[] = [];
    farEnd.on('message', (data, remote) => {
      const parsed = parseSipMessage(data);
      if (!parsed.ok || parsed.message.kind !== 'request') return;
      const request = parsed.message;
      received.push(request.method);
      const reply = (status: number, reason: string, method = request.method) => {
        const lines = [
          `SIP/2.0 ${status} ${reason}`,
          `Via: ${headerValue(request, 'Via')}`,
          `From: ${headerValue(request, 'From')}`,
          `To: ${headerValue(request, 'To')}${status > 100 ? ';tag=far' : ''}`,
          `Call-ID: ${request.callId}`,
          `CSeq: ${request.cseq.seq} ${method}`,
          'Content-Length: 0',
          '',
          '',
        ];
        farEnd.send(lines.join('\r\n'), remote.port, remote.address);
      };
      if (request.method === 'INVITE' && received.filter((m) => m === 'INVITE').length === 1) {
        // Stay silent for a while (INVITE retransmissions arrive), then ring.
        setTimeout(() => reply(180, 'Ringing'), 120);
      }
      if (request.method === 'CANCEL') {
        reply(200, 'OK');
        reply(487, 'Request Terminated', 'INVITE');
      }
    });
    const call = caller.invite({
      ...inviteTo(caller),
      requestUri: `sip:+15550100001@127.0.0.1:${farEnd.address().port}`,
    });
    call.cancel();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(received).not.toContain('CANCEL');
    const outcome = await call.outcome;
    expect(outcome).toEqual({
      kind: 'failed',
      failure: { cause: 'canceled', status: 487, reason: 'Request Terminated', timedOut: false },
    });
    await new Promise((resolve) => setTimeout(resolve, 30)); // the ACK is in flight
    expect(received.filter((method) => method === 'INVITE').length).toBeGreaterThan(1);
    expect(received).toContain('CANCEL');
    expect(received).toContain('ACK');
  });

  it('reports timer B expiry as a transport timeout when nothing answers', async () => {
    const caller = await startAgent();
    const silent = createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    started.push({ close: () => new Promise<void>((r) => silent.close(() => r())) });
    let datagrams = 0;
    silent.on('message', () => datagrams++);
    const call = caller.invite({
      ...inviteTo(caller),
      requestUri: `sip:+15550100001@127.0.0.1:${silent.address().port}`,
    });
    expect(await call.outcome).toEqual({
      kind: 'failed',
      failure: { cause: 'transport_timeout', status: null, reason: 'no response to INVITE', timedOut: true },
    });
    // Timer A doubling from 10 ms within 640 ms: at 0, 10, 30, 70, 150, 310 and 630 ms (the last
    // one races timer B), so never more than 7 and, were it not doubling, many more.
    expect(datagrams).toBeGreaterThanOrEqual(6);
    expect(datagrams).toBeLessThanOrEqual(7);
  });

  for (const status of [401, 407] as const) {
    it(`answers a ${status} digest challenge with CSeq + 1, the same Call-ID and a new branch`, async () => {
      const caller = await startAgent();
      const callee = await startAgent();
      const credentials = { username: 'trunk', password: 'pa55word' };
      const seen: Array<{ cseq: number; callId: string; branch: string }> = [];
      const challengeName = status === 401 ? 'WWW-Authenticate' : 'Proxy-Authenticate';
      const authorizationName = status === 401 ? 'Authorization' : 'Proxy-Authorization';
      callee.onInvite((incoming) => {
        const branch = String(incoming.request.vias[0].params.find(([name]) => name === 'branch')?.[1]);
        seen.push({ cseq: incoming.request.cseq.seq, callId: incoming.callId, branch });
        const authorization = headerValue(incoming.request, authorizationName);
        const expected = { method: 'INVITE', realm: 'sandbox', nonce: 'n0nce', credentials };
        if (authorization !== undefined && verifyDigestAuthorization(authorization, expected)) {
          void incoming.answer(answer);
          return;
        }
        const challenge = buildDigestChallenge({ realm: 'sandbox', nonce: 'n0nce', algorithm: 'SHA-256' });
        incoming.reject(status, { headers: [{ name: challengeName, value: challenge }] });
      });
      const call = caller.invite(inviteTo(callee, { credentials }));
      const answered = waitFor((resolve) => call.on('answered', resolve));
      await answered;
      expect(seen).toHaveLength(2);
      expect(seen[1]?.cseq).toBe((seen[0]?.cseq ?? 0) + 1);
      expect(seen[1]?.callId).toBe(seen[0]?.callId);
      expect(seen[1]?.branch).not.toBe(seen[0]?.branch);
      await call.hangUp();
      expect(logLines.join('')).not.toContain('pa55word');
    });
  }

  it('reports auth_failed when the credentials are refused', async () => {
    const caller = await startAgent();
    const callee = await startAgent();
    callee.onInvite((incoming) =>
      incoming.reject(401, {
        headers: [{ name: 'WWW-Authenticate', value: buildDigestChallenge({ realm: 'r' }) }],
      }),
    );
    const call = caller.invite(inviteTo(callee, { credentials: { username: 'u', password: 'wrong' } }));
    const outcome = await call.outcome;
    expect(outcome.kind === 'failed' && outcome.failure.cause).toBe('auth_failed');
  });

  it('retransmits the INVITE when the first datagram is lost', async () => {
    const caller = await startAgent();
    const callee = await startAgent();
    let dropped = false;
    const relay = await startRelay(callee.localEndpoint.port, (text, towardsCallee) => {
      if (dropped || !towardsCallee || !text.startsWith('INVITE')) return false;
      dropped = true;
      return true;
    });
    nextIncoming(callee, (call) => void call.answer(answer));
    const call = caller.invite(inviteTo(callee, { outboundProxy: { host: '127.0.0.1', port: relay.port } }));
    await waitFor((resolve) => call.on('answered', resolve));
    expect(relay.seen.filter((line) => line.startsWith('> INVITE'))).toHaveLength(2);
    await call.hangUp();
  });

  it('retransmits the 200 OK until the ACK when the first 200 is lost', async () => {
    const caller = await startAgent();
    const callee = await startAgent();
    let dropped = false;
    const relay = await startRelay(callee.localEndpoint.port, (text, towardsCallee) => {
      if (dropped || towardsCallee || !text.startsWith('SIP/2.0 200') || !text.includes('INVITE'))
        return false;
      dropped = true;
      return true;
    });
    const incoming = nextIncoming(callee, (call) => void call.answer(answer));
    const call = caller.invite(inviteTo(callee, { outboundProxy: { host: '127.0.0.1', port: relay.port } }));
    await waitFor((resolve) => call.on('answered', resolve));
    const acknowledged = await (await incoming).answer(answer);
    expect(acknowledged).toBe(true);
    expect(relay.seen.filter((line) => line.startsWith('< SIP/2.0 200'))).toHaveLength(2);
    await call.hangUp();
  });

  it('answers OPTIONS with 200, unknown dialogs with 481, and survives garbage', async () => {
    const agent = await startAgent();
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    started.push({ close: () => new Promise<void>((r) => socket.close(() => r())) });
    const statuses: number[] = [];
    socket.on('message', (data) => {
      const parsed = parseSipMessage(data);
      if (parsed.ok && parsed.message.kind === 'response') statuses.push(parsed.message.status);
    });
    const port = socket.address().port;
    const request = (method: string, toTag: string) =>
      [
        `${method} sip:x@127.0.0.1 SIP/2.0`,
        `Via: SIP/2.0/UDP 127.0.0.1:${port};rport;branch=z9hG4bK${method}${toTag}`,
        'From: <sip:probe@127.0.0.1>;tag=p',
        `To: <sip:x@127.0.0.1>${toTag}`,
        `Call-ID: probe-${method}`,
        `CSeq: 1 ${method}`,
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n');
    const send = (text: string | Buffer) => socket.send(text, agent.localEndpoint.port, '127.0.0.1');
    send(Buffer.from([0, 1, 2, 255]));
    send('INVITE sip:x SIP/2.0\r\nVia: \0\r\n\r\n');
    send(request('OPTIONS', ''));
    await new Promise((resolve) => setTimeout(resolve, 50));
    send(request('BYE', ';tag=nope'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    send(request('MESSAGE', ''));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(statuses).toEqual([200, 481, 501]);
  });

  it('refuses to send a datagram above the size guard', async () => {
    const caller = await SipUserAgent.start({
      bindAddress: '127.0.0.1',
      port: 0,
      logger,
      timers: fastTimers,
      maxDatagramBytes: 600,
    });
    started.push(caller);
    const callee = await startAgent();
    let invited = false;
    callee.onInvite(() => {
      invited = true;
    });
    const call = caller.invite(
      inviteTo(callee, { extraHeaders: [{ name: 'X-Padding', value: 'p'.repeat(400) }] }),
    );
    const outcome = await call.outcome;
    expect(outcome.kind === 'failed' && outcome.failure.cause).toBe('transport_error');
    expect(invited).toBe(false);
  });

  it('leaves no timer running after close(), even mid-call', async () => {
    const caller = await startAgent();
    const callee = await startAgent();
    nextIncoming(callee, (call) => call.ring());
    const call = caller.invite(inviteTo(callee));
    await waitFor((resolve) => call.on('provisional', resolve));
    expect(caller.liveTimerCount).toBeGreaterThan(0);
    await caller.close();
    await callee.close();
    expect(caller.liveTimerCount).toBe(0);
    expect(callee.liveTimerCount).toBe(0);
    const outcome = await call.outcome;
    expect(outcome.kind === 'failed' && outcome.failure.cause).toBe('transport_error');
  });

  it('never logs a full phone number', () => {
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join('')).not.toMatch(/555010000|5557654321/);
  });
});
