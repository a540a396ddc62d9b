import { describe, expect, it } from 'vitest';
import { sdpAnswer as answer, sdpOffer as offer, sipTestBench } from '../../../test/helpers/sipPeers.js';
import type { DialogInit } from './dialog.js';
import { buildDigestChallenge, verifyDigestAuthorization } from './digest.js';
import type { IncomingCall } from './incomingCall.js';
import { headerValue, headerValues, parseSipMessage } from './message.js';

/**
 * A BYE for a dialog another user agent held (its process died): built from the stored dialog
 * state alone, sent by a new user agent, answered by the far end (issue 12, defect 10).
 */

const { bindSocket, startUserAgent: startAgent } = sipTestBench();

describe('BYE for a stored dialog', () => {
  it('ends the far end of a call whose user agent is gone, from the state stored at the answer', async () => {
    const caller = await startAgent();
    const callee = await startAgent();
    const port = callee.localEndpoint.port;
    const incoming = new Promise<IncomingCall>((resolve) =>
      callee.onInvite((call) => {
        void call.answer(answer);
        resolve(call);
      }),
    );
    const call = caller.invite({
      requestUri: `sip:+15550100001@127.0.0.1:${port}`,
      from: { uri: 'sip:+15557654321@127.0.0.1' },
      to: { uri: `sip:+15550100001@127.0.0.1:${port}` },
      sdpOffer: offer,
      ringTimeoutMs: 5_000,
    });
    await new Promise((resolve) => call.on('answered', resolve));
    const calleeCall = await incoming;
    await new Promise<void>((resolve) =>
      calleeCall.state === 'confirmed' ? resolve() : calleeCall.on('acknowledged', () => resolve()),
    );
    const stored = call.dialogState;
    expect(stored).not.toBeNull();
    const ended = new Promise<string>((resolve) => calleeCall.on('ended', (event) => resolve(event.by)));
    // The process dies: no BYE leaves with it.
    await caller.close();
    expect(calleeCall.state).toBe('confirmed');

    const restarted = await startAgent();
    const result = await restarted.byeStoredDialog({
      dialog: JSON.parse(JSON.stringify(stored)) as DialogInit,
      destination: { host: '127.0.0.1', port },
    });
    expect(result).toEqual({ kind: 'answered', status: 200 });
    expect(await ended).toBe('remote');
  });

  it('answers a 407 challenge to the BYE once with the trunk credentials', async () => {
    const credentials = { username: 'trunk', password: 'pa55word' };
    const peer = await bindSocket('127.0.0.1');
    const byes: Array<{ cseq: number; authorized: boolean }> = [];
    peer.on('message', (data, remote) => {
      const parsed = parseSipMessage(data);
      if (!parsed.ok || parsed.message.kind !== 'request') return;
      const request = parsed.message;
      const authorization = headerValue(request, 'Proxy-Authorization');
      const authorized =
        authorization !== undefined &&
        verifyDigestAuthorization(authorization, {
          method: 'BYE',
          realm: 'carrier',
          nonce: 'n0nce',
          credentials,
        });
      byes.push({ cseq: request.cseq.seq, authorized });
      const status = authorized ? '200 OK' : '407 Proxy Authentication Required';
      const challenge = buildDigestChallenge({ realm: 'carrier', nonce: 'n0nce', algorithm: 'SHA-256' });
      const response = [
        `SIP/2.0 ${status}`,
        ...headerValues(request, 'Via').map((via) => `Via: ${via}`),
        `From: ${headerValue(request, 'From')}`,
        `To: ${headerValue(request, 'To')}`,
        `Call-ID: ${request.callId}`,
        `CSeq: ${request.cseq.seq} BYE`,
        ...(authorized ? [] : [`Proxy-Authenticate: ${challenge}`]),
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n');
      peer.send(response, remote.port, remote.address);
    });
    const peerPort = peer.address().port;
    const restarted = await startAgent();
    const result = await restarted.byeStoredDialog({
      dialog: {
        callId: 'dead0000dead0000dead0000dead0000',
        localTag: 'ours',
        remoteTag: 'theirs',
        localAddress: '<sip:+15557654321@carrier.example>;tag=ours',
        remoteAddress: '<sip:+15550100001@carrier.example>;tag=theirs',
        remoteTarget: `sip:callee@127.0.0.1:${peerPort}`,
        routeSet: [],
        localSeq: 2,
        remoteSeq: null,
      },
      destination: { host: '127.0.0.1', port: peerPort },
      credentials,
    });
    expect(result).toEqual({ kind: 'answered', status: 200 });
    expect(byes.filter((bye) => !bye.authorized)[0]?.cseq).toBe(3);
    expect(byes.filter((bye) => bye.authorized)[0]?.cseq).toBe(4);
  });
});
