import { createSocket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addTrunk } from '../../src/admin/trunks.js';
import { loadSecretBox } from '../../src/secrets/secretBox.js';
import { headerValue, headerValues, parseSipMessage } from '../../src/telephony/sip/message.js';
import { callThroughTrunk, startFullService } from '../helpers/fullService.js';

/**
 * A trunk with its own public address (callwright behind a NAT toward that carrier only): its
 * calls advertise that address in Via, Contact and the SDP, while other trunks keep the service's.
 * The carrier here is a UDP socket that records the INVITE and answers 486.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
beforeAll(async () => {
  service = await startFullService({ CALLWRIGHT_TRUNK_ALLOW_PRIVATE: 'true' });
}, 60_000);
afterAll(async () => {
  await service?.dispose();
});

async function inviteSeenThrough(publicAddress: string | undefined): Promise<string> {
  const carrier = createSocket('udp4');
  await new Promise<void>((resolve) => carrier.bind(0, '127.0.0.1', resolve));
  const invites: string[] = [];
  carrier.on('message', (data, remote) => {
    const parsed = parseSipMessage(data);
    if (!parsed.ok || parsed.message.kind !== 'request' || parsed.message.method !== 'INVITE') return;
    const request = parsed.message;
    invites.push(data.toString('utf8'));
    const reply = [
      'SIP/2.0 486 Busy Here',
      ...headerValues(request, 'Via').map((via) => `Via: ${via}`),
      `From: ${headerValue(request, 'From')}`,
      `To: ${headerValue(request, 'To')};tag=busy`,
      `Call-ID: ${request.callId}`,
      `CSeq: ${request.cseq.seq} INVITE`,
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
    carrier.send(reply, remote.port, remote.address);
  });
  try {
    const call = await callThroughTrunk(
      service,
      { uri: `sip:127.0.0.1:${carrier.address().port}`, ...(publicAddress ? { publicAddress } : {}) },
      { maxDurationS: 5, timeoutMs: 15_000 },
    );
    expect(call).toMatchObject({ status: 'busy' });
    expect(invites.length).toBeGreaterThan(0);
    return invites[0]!;
  } finally {
    carrier.close();
  }
}

describe('a public address per trunk', () => {
  it('advertises the trunk’s address in Via, Contact, o= and c=; a trunk without one keeps the service’s', async () => {
    const invite = await inviteSeenThrough('203.0.113.7');
    expect(invite).toMatch(/^Via: SIP\/2\.0\/UDP 203\.0\.113\.7:\d+;/m);
    expect(invite).toMatch(/^Contact: <sip:callwright@203\.0\.113\.7:\d+/m);
    expect(invite).toMatch(/^o=callwright \d+ \d+ IN IP4 203\.0\.113\.7\r?$/m);
    expect(invite).toMatch(/^c=IN IP4 203\.0\.113\.7\r?$/m);
    const plain = await inviteSeenThrough(undefined);
    expect(plain).not.toContain('203.0.113.7');
  }, 40_000);

  it('refuses a public address that is not an IP address', async () => {
    const account = await service.store.accounts.create({ name: 'nat bad' });
    const secretBox = loadSecretBox({ configuredKeyBase64: null, dataDir: service.dataDir });
    for (const publicAddress of ['nat.example.com', '0.0.0.0', '203.0.113.7:5060']) {
      await expect(
        addTrunk(
          service.store,
          secretBox,
          account.id,
          { name: 'x', uri: 'sip:127.0.0.1', publicAddress },
          { allowPrivate: true },
        ),
      ).rejects.toMatchObject({ code: 'validation_error' });
    }
  });
});
