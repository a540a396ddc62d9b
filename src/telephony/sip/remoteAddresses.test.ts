import { describe, expect, it } from 'vitest';
import {
  sdpAnswer as answer,
  sdpOffer as offer,
  sipTestBench,
  thirdAddress,
  until,
} from '../../../test/helpers/sipPeers.js';
import type { InviteOptions } from './callTypes.js';
import { headerValue, type ParsedSipMessage, parseSipMessage } from './message.js';

/**
 * Addresses the far end writes into its messages (3xx Contact, 2xx Contact and Record-Route) must
 * not steer our requests at a third address (issue 12, defects 5 and 6): a raw UDP peer on
 * 127.0.0.1 plays the trunk, a socket on 127.0.0.77 stands for the address it tries to aim us at.
 */

const { bindSocket, startUserAgent: startCaller, startRawUas } = sipTestBench();

/** A raw UAS: answers each INVITE with `status` and the extra headers, 200s BYE, records methods. */
function startRawCallee(status: number, extraHeaders: (port: number) => string[]) {
  return startRawUas({ inviteStatus: status, inviteHeaders: extraHeaders });
}

/** Records whatever reaches the third address on `port`. */
async function watchThirdAddress(port: number): Promise<string[]> {
  const socket = await bindSocket(thirdAddress, port);
  const seen: string[] = [];
  socket.on('message', (data) => seen.push(data.toString('latin1').split('\r\n')[0] ?? ''));
  return seen;
}

function inviteTo(port: number, overrides: Partial<InviteOptions> = {}): InviteOptions {
  return {
    requestUri: `sip:+15550100001@127.0.0.1:${port}`,
    from: { uri: 'sip:+15557654321@127.0.0.1' },
    to: { uri: `sip:+15550100001@127.0.0.1:${port}` },
    sdpOffer: offer,
    ringTimeoutMs: 5_000,
    ...overrides,
  };
}

describe('addresses taken from the far end', () => {
  it('a 3xx Contact at an address the guard refuses is not followed: the call fails, nothing is sent there', async () => {
    const caller = await startCaller();
    const callee = await startRawCallee(302, (port) => [
      `Contact: <sip:+15550100001@${thirdAddress}:${port}>`,
    ]);
    const third = await watchThirdAddress(callee.port);
    const outcome = await caller.invite(
      inviteTo(callee.port, { allowsRemoteAddress: (host: string) => host === '127.0.0.1' }),
    ).outcome;
    expect(outcome).toMatchObject({ kind: 'failed', failure: { cause: 'rejected', status: 302 } });
    await until(() => callee.methods.includes('ACK'), 2_000);
    expect([...new Set(callee.methods)]).toEqual(['INVITE', 'ACK']);
    expect(third).toEqual([]);
  });

  it('a 2xx Contact naming a refused address: ACK and BYE go to the call destination instead', async () => {
    const caller = await startCaller();
    const callee = await startRawCallee(200, (port) => [`Contact: <sip:callee@${thirdAddress}:${port}>`]);
    const third = await watchThirdAddress(callee.port);
    const call = caller.invite(
      inviteTo(callee.port, { allowsRemoteAddress: (host: string) => host === '127.0.0.1' }),
    );
    await new Promise((resolve) => call.on('answered', resolve));
    await call.hangUp();
    expect(await call.outcome).toMatchObject({ kind: 'ended', ended: { reason: 'BYE sent' } });
    expect([...new Set(callee.methods)]).toEqual(['INVITE', 'ACK', 'BYE']);
    expect(third).toEqual([]);
  });

  it('a Record-Route naming a host name is not resolved: in-dialog requests go to the destination', async () => {
    const caller = await startCaller();
    const callee = await startRawCallee(200, (port) => [
      `Record-Route: <sip:steer.invalid:${port};lr>`,
      `Contact: <sip:callee@127.0.0.1:${port}>`,
    ]);
    const call = caller.invite(inviteTo(callee.port));
    await new Promise((resolve) => call.on('answered', resolve));
    await call.hangUp();
    expect(await call.outcome).toMatchObject({ kind: 'ended', ended: { reason: 'BYE sent' } });
    expect([...new Set(callee.methods)]).toEqual(['INVITE', 'ACK', 'BYE']);
  });

  it('sends the INVITE to the pinned destination while the Request-URI keeps the trunk name', async () => {
    const caller = await startCaller();
    const callee = await startRawCallee(486, () => []);
    const outcome = await caller.invite(
      inviteTo(callee.port, {
        requestUri: 'sip:+15550100001@pbx.example.invalid:5070',
        to: { uri: 'sip:+15550100001@pbx.example.invalid' },
        destination: { host: '127.0.0.1', port: callee.port },
      }),
    ).outcome;
    expect(outcome).toMatchObject({ kind: 'failed', failure: { cause: 'rejected', status: 486 } });
    expect(callee.methods).toContain('INVITE');
  });

  it('the answering side sends its BYE to the INVITE source when the Contact names a host name', async () => {
    const callee = await startCaller();
    const peer = await bindSocket('127.0.0.1');
    const port = peer.address().port;
    const received: ParsedSipMessage[] = [];
    peer.on('message', (data) => {
      const parsed = parseSipMessage(data);
      if (parsed.ok) received.push(parsed.message);
    });
    callee.onInvite((call) => {
      void call.answer(answer).then((acknowledged) => {
        if (acknowledged) void call.hangUp();
      });
    });
    const invite = [
      `INVITE sip:+15550100001@127.0.0.1:${callee.localEndpoint.port} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.1:${port};rport;branch=z9hG4bKhostcontact`,
      'Max-Forwards: 70',
      'From: <sip:caller@127.0.0.1>;tag=caller',
      'To: <sip:+15550100001@127.0.0.1>',
      'Call-ID: contact-host-name',
      'CSeq: 1 INVITE',
      `Contact: <sip:caller@steer.invalid:${port}>`,
      'Content-Type: application/sdp',
      `Content-Length: ${Buffer.byteLength(offer)}`,
      '',
      offer,
    ].join('\r\n');
    peer.send(invite, callee.localEndpoint.port, '127.0.0.1');
    await until(
      () => received.some((message) => message.kind === 'response' && message.status === 200),
      2_000,
    );
    const ok = received.find((message) => message.kind === 'response' && message.status === 200);
    expect(ok).toBeDefined();
    const toTagged = ok === undefined ? '' : (headerValue(ok, 'To') ?? '');
    const ack = [
      `ACK sip:callee@127.0.0.1:${callee.localEndpoint.port} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.1:${port};rport;branch=z9hG4bKhostcontactack`,
      'Max-Forwards: 70',
      'From: <sip:caller@127.0.0.1>;tag=caller',
      `To: ${toTagged}`,
      'Call-ID: contact-host-name',
      'CSeq: 1 ACK',
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
    peer.send(ack, callee.localEndpoint.port, '127.0.0.1');
    await until(
      () => received.some((message) => message.kind === 'request' && message.method === 'BYE'),
      2_000,
    );
    expect(received.some((message) => message.kind === 'request' && message.method === 'BYE')).toBe(true);
  });
});
