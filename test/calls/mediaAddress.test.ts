import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { CallSession } from '../../src/calls/callSession.js';
import { completedEventBuilder } from '../../src/calls/completedEvents.js';
import { newId } from '../../src/domain/ids.js';
import { createLogger } from '../../src/logger.js';
import { FileRecordingStorage } from '../../src/recordings/recordingStorage.js';
import { SecretBox } from '../../src/secrets/secretBox.js';
import { MediaClock, PortAllocator } from '../../src/telephony/rtp/index.js';
import { headerValue, headerValues, parseSipMessage, SipUserAgent } from '../../src/telephony/sip/index.js';
import { openTestStore, type TestStoreHandle } from '../helpers/stores.js';

/**
 * The far end chooses where our RTP goes (its SDP answer's c=): an address the call may not reach
 * ends the call rather than receiving our media (issue 12). A real CallSession places a call on
 * a real SQLite store through a real user agent; a raw UDP peer on 127.0.0.1 answers with
 * c=127.0.0.77, where a socket watches for packets. The call's route (here the sandbox's, which
 * lets only its own address steer anything) decides what may be reached.
 */

const thirdAddress = '127.0.0.77';
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function bindSocket(address: string, port = 0): Promise<Socket> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(port, address, resolve));
  cleanups.push(() => new Promise<void>((resolve) => socket.close(() => resolve())));
  return socket;
}

/** Answers INVITE with 200 and an SDP naming `mediaAddress:mediaPort`; answers BYE with 200. */
async function startAnsweringPeer(mediaAddress: string, mediaPort: number) {
  const socket = await bindSocket('127.0.0.1');
  const methods: string[] = [];
  const sdp = `v=0\r\no=- 2 2 IN IP4 ${mediaAddress}\r\ns=-\r\nc=IN IP4 ${mediaAddress}\r\nt=0 0\r\nm=audio ${mediaPort} RTP/AVP 0\r\na=sendrecv\r\n`;
  socket.on('message', (data, remote) => {
    const parsed = parseSipMessage(data);
    if (!parsed.ok || parsed.message.kind !== 'request') return;
    const request = parsed.message;
    methods.push(request.method);
    if (request.method === 'ACK') return;
    const isInvite = request.method === 'INVITE';
    const body = isInvite ? sdp : '';
    const lines = [
      'SIP/2.0 200 OK',
      ...headerValues(request, 'Via').map((via) => `Via: ${via}`),
      `From: ${headerValue(request, 'From')}`,
      `To: ${headerValue(request, 'To')}${isInvite ? ';tag=peer' : ''}`,
      `Call-ID: ${request.callId}`,
      `CSeq: ${request.cseq.seq} ${request.method}`,
      ...(isInvite
        ? [`Contact: <sip:peer@127.0.0.1:${socket.address().port}>`, 'Content-Type: application/sdp']
        : []),
      `Content-Length: ${Buffer.byteLength(body)}`,
      '',
      body,
    ];
    socket.send(lines.join('\r\n'), remote.port, remote.address);
  });
  return { port: socket.address().port, methods };
}

describe('the SDP answer names where our media goes', () => {
  let handle: TestStoreHandle;

  it('ends the call as failed/carrier_error when that address is refused, and sends it nothing', async () => {
    handle = await openTestStore('sqlite');
    cleanups.push(() => handle.dispose());
    const store = handle.store;
    const logger = createLogger('silent');
    const third = await bindSocket(thirdAddress);
    const packetsAtThird: number[] = [];
    third.on('message', (data) => packetsAtThird.push(data.length));
    const peer = await startAnsweringPeer(thirdAddress, third.address().port);

    const account = await store.accounts.create({ name: 'media', maxLiveCalls: 2 });
    const key = await store.apiKeys.create({
      accountId: account.id,
      name: 'k',
      keyHash: newId('apiKey'),
      prefix: 'p',
      last4: 'l',
    });
    const agent = await store.agents.create({
      accountId: account.id,
      name: 'a',
      active: true,
      prompt: 'p',
      firstMessage: 'hi',
      variables: [],
      extraction: [],
      brain: 'script',
      script: null,
      settings: {},
      maxDurationS: 3,
      silenceTimeoutS: 20,
    });
    await addPhoneNumber(store, account.id, '+15550009999');
    const queued = await store.calls.createQueued({
      id: newId('call'),
      accountId: account.id,
      agentId: agent.id,
      apiKeyId: key.id,
      fromNumber: '+15550009999',
      toNumber: '+15550100001',
      firstMessage: null,
      context: null,
      variables: null,
      createdAt: new Date().toISOString(),
    });
    if (!queued) throw new Error('not created');
    const nowMs = Date.now();
    const claimed = await store.calls.claimForDialing(queued.id, {
      workerId: 'wrk_media',
      untilIso: new Date(nowMs + 60_000).toISOString(),
      atIso: new Date(nowMs).toISOString(),
    });
    if (!('claimed' in claimed)) throw new Error('not claimed');

    const ua = await SipUserAgent.start({ bindAddress: '127.0.0.1', port: 0, logger, timers: { t1Ms: 20 } });
    cleanups.push(() => ua.close());
    const clock = new MediaClock({ logger });
    cleanups.push(() => clock.stop());
    const recordingsDir = mkdtempSync(join(tmpdir(), 'callwright-media-'));
    cleanups.push(() => rmSync(recordingsDir, { recursive: true, force: true }));
    const session = new CallSession(
      {
        store,
        logger,
        workerId: 'wrk_media',
        ua,
        clock,
        ports: new PortAllocator({ minPort: 46_000, maxPort: 46_998 }),
        mediaBindAddress: '127.0.0.1',
        mediaPublicAddress: '127.0.0.1',
        // The raw peer stands where the sandbox carrier would: only 127.0.0.1 may be reached.
        sandbox: { host: '127.0.0.1', port: peer.port },
        secretBox: new SecretBox(randomBytes(32)),
        ringTimeoutMs: 5_000,
        trunkAllowPrivate: false,
        buildEvent: completedEventBuilder(() => null),
        voice: null,
        recordings: new FileRecordingStorage(recordingsDir),
      },
      claimed.claimed,
      agent,
    );
    const finished = await session.done;
    expect(finished).toMatchObject({ status: 'failed', endReason: 'carrier_error' });
    expect(peer.methods).toContain('BYE');
    expect(packetsAtThird).toEqual([]);
  });
});
