import { describe, expect, it } from 'vitest';
import { sdpAnswer, sdpOffer, sipTestBench, thirdAddress } from '../../../test/helpers/sipPeers.js';
import type { InviteOptions } from './callTypes.js';
import { headerValue, headerValues, parseSipMessage } from './message.js';

/**
 * A call's INVITE moving on (RFC 3263 §4.3, RFC 3261 §8.1.3.4): to the trunk's next server after a
 * 503 or silence, to a redirect's Contact when the address guard allows it — each a new INVITE
 * with CSeq + 1 and the same Call-ID — and nowhere the far end may not steer it.
 */

const { bindSocket, startUserAgent } = sipTestBench();

interface SeenInvite {
  requestUri: string;
  cseq: number;
  callId: string;
}

/** A UDP SIP server on `address` answering each INVITE with `reply(n)` (n counts its INVITEs). */
async function startServer(
  reply: (n: number, port: number) => { status: number; headers?: string[] } | 'silent',
  address = '127.0.0.1',
) {
  const socket = await bindSocket(address);
  const port = socket.address().port;
  const invites: SeenInvite[] = [];
  socket.on('message', (data, remote) => {
    const parsed = parseSipMessage(data);
    if (!parsed.ok || parsed.message.kind !== 'request') return;
    const request = parsed.message;
    if (request.method === 'ACK') return;
    const isInvite = request.method === 'INVITE';
    // Retransmissions (T1 is 10 ms here) are answered again but counted once.
    const seen = invites.some((i) => i.callId === request.callId && i.cseq === request.cseq.seq);
    if (isInvite && !seen)
      invites.push({ requestUri: request.requestUri, cseq: request.cseq.seq, callId: request.callId });
    const answer = isInvite ? reply(invites.length, port) : { status: 200 };
    if (answer === 'silent') return;
    const body = isInvite && answer.status < 300 ? sdpAnswer : '';
    const lines = [
      `SIP/2.0 ${answer.status} X`,
      ...headerValues(request, 'Via').map((via) => `Via: ${via}`),
      `From: ${headerValue(request, 'From')}`,
      `To: ${headerValue(request, 'To')};tag=srv${port}`,
      `Call-ID: ${request.callId}`,
      `CSeq: ${request.cseq.seq} ${request.method}`,
      ...(answer.status < 300 ? [`Contact: <sip:callee@127.0.0.1:${port}>`] : []),
      ...(answer.headers ?? []),
      ...(body ? ['Content-Type: application/sdp'] : []),
      `Content-Length: ${Buffer.byteLength(body)}`,
      '',
      body,
    ];
    socket.send(lines.join('\r\n'), remote.port, remote.address);
  });
  return { port, invites };
}

const requestUri = 'sip:+15550100001@carrier.example';

function invite(first: number, overrides: Partial<InviteOptions> = {}): InviteOptions {
  return {
    requestUri,
    from: { uri: 'sip:+15557654321@carrier.example' },
    to: { uri: requestUri },
    sdpOffer,
    ringTimeoutMs: 5_000,
    destination: { host: '127.0.0.1', port: first },
    allowsRemoteAddress: (address) => address === '127.0.0.1',
    ...overrides,
  };
}

describe('INVITE failover and redirects', () => {
  it('a 503 moves the INVITE to the next server of the trunk, same Call-ID, CSeq + 1, same Request-URI', async () => {
    const ua = await startUserAgent();
    const down = await startServer(() => ({ status: 503, headers: ['Retry-After: 60'] }));
    const up = await startServer(() => ({ status: 200 }));
    const call = ua.invite(
      invite(down.port, { alternateDestinations: [{ host: '127.0.0.1', port: up.port }] }),
    );
    await new Promise((resolve) => call.on('answered', resolve));
    await call.hangUp();
    expect(down.invites).toHaveLength(1);
    expect(up.invites).toEqual([
      { requestUri, cseq: down.invites[0]!.cseq + 1, callId: down.invites[0]!.callId },
    ]);
  });

  it('a server that says nothing is skipped after failoverAfterMs; the last one left fails as before', async () => {
    const ua = await startUserAgent({ timers: { t1Ms: 50 } });
    const silent = await startServer(() => 'silent');
    const up = await startServer(() => ({ status: 200 }));
    const call = ua.invite(
      invite(silent.port, {
        alternateDestinations: [{ host: '127.0.0.1', port: up.port }],
        failoverAfterMs: 300,
      }),
    );
    await new Promise((resolve) => call.on('answered', resolve));
    await call.hangUp();
    expect(silent.invites.length).toBeGreaterThanOrEqual(1);
    expect(up.invites).toHaveLength(1);

    const busy = await startServer(() => ({ status: 503 }));
    const alsoBusy = await startServer(() => ({ status: 503 }));
    const failed = await ua.invite(
      invite(busy.port, { alternateDestinations: [{ host: '127.0.0.1', port: alsoBusy.port }] }),
    ).outcome;
    expect(failed).toMatchObject({ kind: 'failed', failure: { cause: 'rejected', status: 503 } });
    expect([busy.invites.length, alsoBusy.invites.length]).toEqual([1, 1]);
  });

  it('a 486 or a 404 is final: the next server is not tried', async () => {
    const ua = await startUserAgent();
    const busy = await startServer(() => ({ status: 486 }));
    const other = await startServer(() => ({ status: 200 }));
    const outcome = await ua.invite(
      invite(busy.port, { alternateDestinations: [{ host: '127.0.0.1', port: other.port }] }),
    ).outcome;
    expect(outcome).toMatchObject({ kind: 'failed', failure: { status: 486 } });
    expect(other.invites).toHaveLength(0);
  });

  it('a 302 to an allowed address is followed with its Contact as Request-URI, best q first', async () => {
    const ua = await startUserAgent();
    const target = await startServer(() => ({ status: 200 }));
    const moved = `sip:+15550109999@127.0.0.1:${target.port}`;
    const redirector = await startServer(() => ({
      status: 302,
      headers: [`Contact: <sip:+15550100000@127.0.0.1:9>;q=0.1, <${moved}>;q=0.9`],
    }));
    const call = ua.invite(invite(redirector.port));
    await new Promise((resolve) => call.on('answered', resolve));
    await call.hangUp();
    expect(target.invites).toEqual([
      { requestUri: moved, cseq: redirector.invites[0]!.cseq + 1, callId: redirector.invites[0]!.callId },
    ]);
  });

  it('a redirect to a refused address, to a host name or round in a loop is not followed', async () => {
    const ua = await startUserAgent();
    const third = await bindSocket(thirdAddress);
    const seenAtThird: string[] = [];
    third.on('message', (data) => seenAtThird.push(data.toString('latin1')));
    const refused = await startServer(() => ({
      status: 302,
      headers: [`Contact: <sip:+1@${thirdAddress}:${third.address().port}>, <sip:+2@steer.invalid>`],
    }));
    expect(await ua.invite(invite(refused.port)).outcome).toMatchObject({
      kind: 'failed',
      failure: { cause: 'rejected', status: 302 },
    });
    expect(seenAtThird).toEqual([]);

    // A and B redirect to each other: A → B → (A already tried) stop.
    let bPort = 0;
    const a = await startServer(() => ({ status: 302, headers: [`Contact: <sip:+3@127.0.0.1:${bPort}>`] }));
    const b = await startServer((_, port) => {
      bPort = port;
      return { status: 302, headers: [`Contact: <sip:+4@127.0.0.1:${a.port}>`] };
    });
    bPort = b.port;
    const loop = await ua.invite(invite(a.port)).outcome;
    expect(loop).toMatchObject({ kind: 'failed', failure: { status: 302 } });
    expect(a.invites.length + b.invites.length).toBeLessThanOrEqual(4);
  });

  it('through an outbound proxy a 503 is final (the proxy does the routing)', async () => {
    const ua = await startUserAgent();
    const proxy = await startServer(() => ({ status: 503 }));
    const other = await startServer(() => ({ status: 200 }));
    const outcome = await ua.invite(
      invite(proxy.port, {
        outboundProxy: { host: '127.0.0.1', port: proxy.port },
        alternateDestinations: [{ host: '127.0.0.1', port: other.port }],
      }),
    ).outcome;
    expect(outcome).toMatchObject({ kind: 'failed', failure: { status: 503 } });
    expect(other.invites).toHaveLength(0);
  });
});
