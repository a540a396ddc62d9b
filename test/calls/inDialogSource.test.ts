import { createSocket, type Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SipDialogRecord } from '../../src/domain/records.js';
import { placeTrunkCall, startFullService, waitForTerminal } from '../helpers/fullService.js';
import { freeUdpPort, startSippCallee } from '../sipp/harness.js';

/**
 * Issue 34, finding 5: a third party that learns a live call's Call-ID and tags must not take its
 * media. SIPp is the carrier (answers, echoes RTP, hangs up after 5 s); a raw UDP socket is the
 * third party. Its re-INVITE carries the dialog's Call-ID, tags and a valid CSeq and offers media
 * at its own address. It must be refused (RFC 3261 §12.2.2: the dialog is bound to the trunk's
 * address and transport), and not one RTP packet of the agent may reach the offered address.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
const sockets: Socket[] = [];

beforeAll(async () => {
  service = await startFullService({ CALLWRIGHT_TRUNK_ALLOW_PRIVATE: 'true' });
}, 60_000);

afterAll(async () => {
  for (const socket of sockets) socket.close();
  await service?.dispose();
});

async function udpSocket(address: string): Promise<Socket> {
  const socket = createSocket('udp4');
  sockets.push(socket);
  await new Promise<void>((resolve) => socket.bind(0, address, resolve));
  return socket;
}

/** The dialog the service stored for the call, once it is answered. */
async function answeredDialog(callId: string): Promise<SipDialogRecord> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const dialog = await service.store.calls.getSipDialog(callId);
    if (dialog !== null) return dialog;
    if (Date.now() > deadline) throw new Error('the call was not answered within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A re-INVITE in the call's dialog, sent over UDP from `signalling`, offering media at `media`. */
async function hijackingReinvite(
  dialog: SipDialogRecord,
  signalling: Socket,
  media: Socket,
): Promise<{ status: number | null }> {
  const sipPort = service.calls?.ua.boundPort as number;
  const from = signalling.address();
  const mediaAddress = media.address();
  const sdp = [
    'v=0',
    `o=thief 7 7 IN IP4 ${mediaAddress.address}`,
    's=-',
    `c=IN IP4 ${mediaAddress.address}`,
    't=0 0',
    `m=audio ${mediaAddress.port} RTP/AVP 0`,
    'a=rtpmap:0 PCMU/8000',
    'a=sendrecv',
    '',
  ].join('\r\n');
  const request = [
    `INVITE sip:callwright@127.0.0.1:${sipPort} SIP/2.0`,
    `Via: SIP/2.0/UDP ${from.address}:${from.port};rport;branch=z9hG4bK-thief-${Date.now()}`,
    'Max-Forwards: 70',
    // The far end's own view: its To (with its tag) is our From's counterpart.
    `From: ${dialog.remoteAddress}`,
    `To: ${dialog.localAddress}`,
    `Call-ID: ${dialog.callId}`,
    'CSeq: 4711 INVITE',
    `Contact: <sip:thief@${from.address}:${from.port}>`,
    'Content-Type: application/sdp',
    `Content-Length: ${Buffer.byteLength(sdp)}`,
    '',
    sdp,
  ].join('\r\n');
  const final = new Promise<{ status: number | null }>((resolve) => {
    const timer = setTimeout(() => resolve({ status: null }), 3_000);
    signalling.on('message', (data) => {
      const status = Number(/^SIP\/2\.0 (\d{3})/.exec(data.toString('latin1'))?.[1]);
      if (status >= 200) {
        clearTimeout(timer);
        resolve({ status });
      }
    });
  });
  signalling.send(request, sipPort, '127.0.0.1');
  return final;
}

/** RTP packets reaching `media` during `ms`. */
function countPackets(media: Socket, ms: number): Promise<number> {
  let packets = 0;
  media.on('message', () => packets++);
  return new Promise((resolve) => setTimeout(() => resolve(packets), ms));
}

describe('in-dialog requests from outside the dialog (issue 34, finding 5)', () => {
  it('a re-INVITE from a third address with the dialog identifiers gets 403 and the media stays', async () => {
    const sipPort = await freeUdpPort();
    const scenario = new URL('../interop/uas_answer_hold_line.xml', import.meta.url).pathname;
    const { exited } = await startSippCallee(scenario, sipPort);
    const callId = await placeTrunkCall(service, { uri: `sip:127.0.0.1:${sipPort}` });
    const dialog = await answeredDialog(callId);

    const thief = await udpSocket('127.0.0.2');
    const thiefMedia = await udpSocket('127.0.0.2');
    const heard = countPackets(thiefMedia, 2_500);
    const answer = await hijackingReinvite(dialog, thief, thiefMedia);
    expect(answer.status).toBe(403);
    expect(await heard).toBe(0);

    const sipp = await exited;
    expect(sipp.code, sipp.output).toBe(0);
    const call = await waitForTerminal(service, callId, 20_000);
    expect(call).toMatchObject({ status: 'completed', endReason: 'callee_hangup' });
    const moved = service.logs.lines.filter((line) => line.includes('media renegotiated by the far end'));
    expect(moved).toEqual([]);
  }, 40_000);

  it('a call placed over TCP refuses a re-INVITE over UDP, even from the trunk’s own address', async () => {
    const sipPort = await freeUdpPort();
    const scenario = new URL('../interop/uas_answer_hold_line.xml', import.meta.url).pathname;
    const { exited } = await startSippCallee(scenario, sipPort, 20, ['-t', 't1']);
    const callId = await placeTrunkCall(service, { uri: `sip:127.0.0.1:${sipPort};transport=tcp` });
    const dialog = await answeredDialog(callId);
    expect(dialog.destination.transport).toBe('tcp');

    const sameHost = await udpSocket('127.0.0.1');
    const media = await udpSocket('127.0.0.1');
    const heard = countPackets(media, 2_500);
    const answer = await hijackingReinvite(dialog, sameHost, media);
    expect(answer.status).toBe(403);
    expect(await heard).toBe(0);

    const sipp = await exited;
    expect(sipp.code, sipp.output).toBe(0);
    const call = await waitForTerminal(service, callId, 20_000);
    expect(call).toMatchObject({ status: 'completed', endReason: 'callee_hangup' });
  }, 40_000);
});
