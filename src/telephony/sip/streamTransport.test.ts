import { type Server, type Socket, createServer as tcpServer } from 'node:net';
import { createServer as tlsServer } from 'node:tls';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { sdpAnswer, sdpOffer } from '../../../test/helpers/sipPeers.js';
import { testCertificates } from '../../../test/helpers/testCertificates.js';
import type { InviteOptions } from './callTypes.js';
import { headerValue, headerValues, type ParsedSipRequest, parseSipMessage } from './message.js';
import { StreamFramer } from './streamFraming.js';
import type { NetworkTarget } from './transport.js';
import { SipUserAgent } from './userAgent.js';

/**
 * Our user agent over TCP and TLS against a raw stream peer written here: framing, the Via and
 * Contact a stream request carries, no retransmissions, responses and in-dialog requests on the
 * same connection, and TLS certificate checks.
 */

const logger = pino({ level: 'silent' });
/** The offer and answer every SIP test on loopback uses. */
const offer = sdpOffer;
const answer = sdpAnswer;
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startAgent(): Promise<SipUserAgent> {
  const agent = await SipUserAgent.start({ bindAddress: '127.0.0.1', port: 0, logger, timers: { t1Ms: 10 } });
  cleanups.push(() => agent.close());
  return agent;
}

interface StreamPeer {
  port: number;
  requests: ParsedSipRequest[];
  sockets: Socket[];
  /** Writes raw text on the latest connection. */
  write(text: string): void;
}

/** A far end that answers INVITE with 180 then 200 (in one write, so framing must split them). */
async function startPeer(server: Server, options: { answerInvite?: boolean } = {}): Promise<StreamPeer> {
  const peer: StreamPeer = {
    port: 0,
    requests: [],
    sockets: [],
    write: (text) => peer.sockets.at(-1)?.write(text),
  };
  const connection = (socket: Socket) => {
    peer.sockets.push(socket);
    const framer = new StreamFramer(65_535);
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      for (const item of framer.push(chunk)) {
        if (item.kind === 'ping') continue;
        const parsed = parseSipMessage(item.data);
        if (!parsed.ok || parsed.message.kind !== 'request') continue;
        const request = parsed.message;
        peer.requests.push(request);
        if (request.method === 'ACK') continue;
        const response = (status: number, reason: string, body = '') =>
          [
            `SIP/2.0 ${status} ${reason}`,
            ...headerValues(request, 'Via').map((via) => `Via: ${via}`),
            `From: ${headerValue(request, 'From')}`,
            `To: ${headerValue(request, 'To')}${request.method === 'INVITE' ? ';tag=callee' : ''}`,
            `Call-ID: ${request.callId}`,
            `CSeq: ${request.cseq.seq} ${request.method}`,
            ...(request.method === 'INVITE'
              ? [`Contact: <sip:callee@127.0.0.1:${socket.localPort};transport=tcp>`]
              : []),
            ...(body ? ['Content-Type: application/sdp'] : []),
            `Content-Length: ${Buffer.byteLength(body)}`,
            '',
            body,
          ].join('\r\n');
        if (request.method === 'INVITE' && options.answerInvite === false) continue;
        if (request.method === 'INVITE') socket.write(response(180, 'Ringing') + response(200, 'OK', answer));
        else socket.write(response(200, 'OK'));
      }
    });
  };
  server.on('connection', connection);
  server.on('secureConnection', connection);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  peer.port = typeof address === 'object' && address ? address.port : 0;
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of peer.sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return peer;
}

function invite(target: NetworkTarget): InviteOptions {
  const uri = `sip:+15550100001@${target.host}:${target.port}`;
  return {
    requestUri: uri,
    from: { uri: 'sip:+15557654321@callwright.test' },
    to: { uri },
    sdpOffer: offer,
    ringTimeoutMs: 5_000,
    destination: target,
  };
}

function tlsPeerServer() {
  const certificates = testCertificates();
  return tlsServer({ key: certificates.keyPem, cert: certificates.certPem });
}

describe('SIP over TCP', () => {
  it('places a call on one connection: stream Via with alias, Contact transport, ACK, BYE back on it', async () => {
    const peer = await startPeer(tcpServer());
    const agent = await startAgent();
    const call = agent.invite(invite({ host: '127.0.0.1', port: peer.port, transport: 'tcp' }));
    const answered = await new Promise((resolve) => call.on('answered', resolve));
    expect(answered).toMatchObject({ status: 200, sdpAnswer: answer });
    // Ten T1s later the INVITE is still the only one: a stream is not retransmitted over.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(peer.requests.map((request) => request.method)).toEqual(['INVITE', 'ACK']);
    const [sent] = peer.requests as [ParsedSipRequest];
    expect(headerValue(sent, 'Via')).toMatch(/^SIP\/2\.0\/TCP 127\.0\.0\.1:\d+;rport;alias;branch=z9hG4bK/);
    expect(headerValue(sent, 'Contact')).toMatch(/^<sip:callwright@127\.0\.0\.1:\d+;transport=tcp>$/);
    expect(peer.sockets).toHaveLength(1);

    // The callee hangs up on the same connection; our 200 comes back on it.
    const before = peer.requests.length;
    peer.write(
      [
        `BYE sip:callwright@127.0.0.1:${agent.localEndpoint.port};transport=tcp SIP/2.0`,
        'Via: SIP/2.0/TCP 127.0.0.1:1;branch=z9hG4bKbye1',
        `From: ${headerValue(sent, 'To')};tag=callee`,
        `To: ${headerValue(sent, 'From')}`,
        `Call-ID: ${sent.callId}`,
        'CSeq: 1 BYE',
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n'),
    );
    const outcome = await call.outcome;
    expect(outcome).toMatchObject({ kind: 'ended', ended: { by: 'remote' } });
    expect(peer.requests.length).toBe(before);
    expect(agent.streamConnectionCount).toBe(1);
  });

  it('reaches the far end over TCP when the UAC hangs up: BYE on the call connection', async () => {
    const peer = await startPeer(tcpServer());
    const agent = await startAgent();
    const call = agent.invite(invite({ host: '127.0.0.1', port: peer.port, transport: 'tcp' }));
    await new Promise((resolve) => call.on('answered', resolve));
    await call.hangUp();
    expect(peer.requests.map((request) => request.method)).toEqual(['INVITE', 'ACK', 'BYE']);
    expect(headerValue(peer.requests[2] as ParsedSipRequest, 'Via')).toMatch(/^SIP\/2\.0\/TCP /);
    expect(peer.sockets).toHaveLength(1);
  });

  it('fails the call with a transport error when nothing listens, and closes a connection that breaks framing', async () => {
    const agent = await startAgent();
    const closed = tcpServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const address = closed.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const outcome = await agent.invite(invite({ host: '127.0.0.1', port, transport: 'tcp' })).outcome;
    expect(outcome).toMatchObject({ kind: 'failed', failure: { cause: 'transport_error' } });

    const peer = await startPeer(tcpServer(), { answerInvite: false });
    const call = agent.invite(invite({ host: '127.0.0.1', port: peer.port, transport: 'tcp' }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(agent.streamConnectionCount).toBe(1);
    peer.write('SIP/2.0 180 Ringing\r\nVia: SIP/2.0/TCP x\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(agent.streamConnectionCount).toBe(0);
    call.cancel();
  });

  it('accepts TCP on the UDP port number for requests sent to us', async () => {
    const agent = await startAgent();
    expect(agent.tcpPort).toBe(agent.boundPort);
    const { connect } = await import('node:net');
    const socket = connect({ host: '127.0.0.1', port: agent.tcpPort as number });
    cleanups.push(() => void socket.destroy());
    const framer = new StreamFramer(65_535);
    const reply = new Promise<string>((resolve) =>
      socket.on('data', (chunk: Buffer) => {
        const item = framer.push(chunk).find((framed) => framed.kind === 'message');
        if (item?.kind === 'message') resolve(item.data.toString('latin1'));
      }),
    );
    socket.write(
      'OPTIONS sip:callwright@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:9;branch=z9hG4bKopt1\r\n' +
        'From: <sip:probe@127.0.0.1>;tag=p\r\nTo: <sip:callwright@127.0.0.1>\r\nCall-ID: opt-1\r\n' +
        'CSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n',
    );
    expect(await reply).toMatch(/^SIP\/2\.0 200 OK\r\n/);
  });

  it('goes on without a TCP listener when a configured port’s TCP number is taken, and says so', async () => {
    // A configured port is kept (Via and Contact name it); only a system-picked one is picked again.
    const blocker = tcpServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
    const port = (blocker.address() as { port: number }).port;
    const warnings: string[] = [];
    const recording = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
    const agent = await SipUserAgent.start({ bindAddress: '127.0.0.1', port, logger: recording });
    cleanups.push(() => agent.close());
    expect(agent.boundPort).toBe(port);
    expect(agent.tcpPort).toBeNull();
    expect(warnings.join('')).toContain('SIP TCP port unavailable');
  });
});

describe('SIP over TLS', () => {
  const tlsTarget = (port: number, tls: NetworkTarget['tls']): NetworkTarget => ({
    host: '127.0.0.1',
    port,
    transport: 'tls',
    ...(tls ? { tls } : {}),
  });

  it('places a call when the certificate chains to the trunk CA and names the configured host', async () => {
    const certificates = testCertificates();
    const peer = await startPeer(tlsPeerServer());
    const agent = await startAgent();
    const call = agent.invite(
      invite(tlsTarget(peer.port, { serverName: certificates.serverName, caPem: certificates.caPem })),
    );
    await new Promise((resolve) => call.on('answered', resolve));
    const [sent] = peer.requests as [ParsedSipRequest];
    expect(headerValue(sent, 'Via')).toMatch(/^SIP\/2\.0\/TLS /);
    expect(headerValue(sent, 'Contact')).toMatch(/;transport=tls>$/);
    await call.hangUp();
    expect(peer.requests.map((request) => request.method)).toEqual(['INVITE', 'ACK', 'BYE']);
    // The open connection was checked against that CA: a target that does not trust it cannot borrow it.
    const untrusting = await agent.invite(
      invite(tlsTarget(peer.port, { serverName: certificates.serverName })),
    ).outcome;
    expect(untrusting).toMatchObject({ kind: 'failed', failure: { cause: 'transport_error' } });
    expect(peer.requests).toHaveLength(3);
  });

  it('refuses an unknown CA and a certificate for another name, unless verification is turned off', async () => {
    const certificates = testCertificates();
    const peer = await startPeer(tlsPeerServer());
    const agent = await startAgent();
    const unknownCa = await agent.invite(
      invite(tlsTarget(peer.port, { serverName: certificates.serverName })),
    ).outcome;
    expect(unknownCa).toMatchObject({ kind: 'failed', failure: { cause: 'transport_error' } });
    const wrongName = await agent.invite(
      invite(tlsTarget(peer.port, { serverName: 'other.example', caPem: certificates.caPem })),
    ).outcome;
    expect(wrongName).toMatchObject({ kind: 'failed', failure: { cause: 'transport_error' } });
    expect(peer.requests).toHaveLength(0);
    const insecure = agent.invite(
      invite(tlsTarget(peer.port, { serverName: 'other.example', verify: false })),
    );
    await new Promise((resolve) => insecure.on('answered', resolve));
    await insecure.hangUp();
    expect(peer.requests.map((request) => request.method)).toEqual(['INVITE', 'ACK', 'BYE']);
  });
});
