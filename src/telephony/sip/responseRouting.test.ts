import { describe, expect, it } from 'vitest';
import { sipTestBench, thirdAddress, until } from '../../../test/helpers/sipPeers.js';
import { parseSipMessage } from './message.js';

/**
 * Where our responses go when a request names another address in its Via (issue 12, defect 5): a
 * raw UDP peer on 127.0.0.1 sends requests whose Via carries maddr= or received= naming a third
 * address, 127.0.0.77, where another socket listens on the same port. Nothing may reach it: every
 * response goes to the source address (and the source port with rport, RFC 3581).
 */

const { bindSocket, startUserAgent } = sipTestBench();

function request(method: string, via: string, toTag = ''): string {
  return [
    `${method} sip:x@127.0.0.1 SIP/2.0`,
    `Via: ${via}`,
    'Max-Forwards: 70',
    'From: <sip:probe@127.0.0.1>;tag=probe',
    `To: <sip:x@127.0.0.1>${toTag}`,
    `Call-ID: hostile-via-${method}`,
    `CSeq: 1 ${method}`,
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
}

describe('responses to requests with a hostile Via', () => {
  it('never go to a Via maddr or received address: only to the source (rport) or its sent-by port', async () => {
    const agent = await startUserAgent();
    const third = await bindSocket(thirdAddress);
    const port = third.address().port;
    // The peer sends from the same port number on 127.0.0.1, so a response that honoured maddr
    // would land on `third`, and one routed as RFC 3581 says lands here.
    const peer = await bindSocket('127.0.0.1', port);
    const atThird: string[] = [];
    third.on('message', (data) => atThird.push(data.toString('latin1').split('\r\n')[0] ?? ''));
    const statuses: number[] = [];
    peer.on('message', (data) => {
      const parsed = parseSipMessage(data);
      if (parsed.ok && parsed.message.kind === 'response') statuses.push(parsed.message.status);
    });
    const send = (text: string) => peer.send(text, agent.localEndpoint.port, '127.0.0.1');

    // An INVITE without a handler gets 100 then 480, retransmitted until an ACK that never comes.
    send(request('INVITE', `SIP/2.0/UDP 127.0.0.1:${port};rport;maddr=${thirdAddress};branch=z9hG4bKinv`));
    send(request('OPTIONS', `SIP/2.0/UDP 127.0.0.1:${port};maddr=${thirdAddress};branch=z9hG4bKopt`));
    send(
      request(
        'BYE',
        `SIP/2.0/UDP 127.0.0.1:${port};received=${thirdAddress};rport;branch=z9hG4bKbye`,
        ';tag=gone',
      ),
    );
    await until(() => statuses.filter((status) => status === 480).length >= 4, 5_000);
    expect(atThird).toEqual([]);
    expect(statuses.filter((status) => status === 480).length).toBeGreaterThanOrEqual(4);
    expect(statuses).toContain(100);
    expect(statuses).toContain(200);
    expect(statuses).toContain(481);
  });

  it('answer the source port when the Via asks for rport, whatever port its sent-by names', async () => {
    const agent = await startUserAgent({ timers: undefined });
    const peer = await bindSocket('127.0.0.1');
    const elsewhere = await bindSocket('127.0.0.1');
    const atElsewhere: string[] = [];
    elsewhere.on('message', (data) => atElsewhere.push(data.toString('latin1').split('\r\n')[0] ?? ''));
    const statuses: number[] = [];
    peer.on('message', (data) => {
      const parsed = parseSipMessage(data);
      if (parsed.ok && parsed.message.kind === 'response') statuses.push(parsed.message.status);
    });
    const via = `SIP/2.0/UDP 127.0.0.1:${elsewhere.address().port};rport;branch=z9hG4bKrport`;
    peer.send(request('OPTIONS', via), agent.localEndpoint.port, '127.0.0.1');
    await until(() => statuses.length > 0, 5_000);
    expect(statuses).toEqual([200]);
    expect(atElsewhere).toEqual([]);
  });
});
