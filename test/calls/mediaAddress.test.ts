import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { CallSession } from '../../src/calls/callSession.js';
import { completedEventBuilder } from '../../src/calls/completedEvents.js';
import { createLogger } from '../../src/logger.js';
import { FileRecordingStorage } from '../../src/recordings/recordingStorage.js';
import { SecretBox } from '../../src/secrets/secretBox.js';
import { MediaClock, PortAllocator } from '../../src/telephony/rtp/index.js';
import { sipTestBench, thirdAddress } from '../helpers/sipPeers.js';
import { createCallOwner, newQueuedCall, openTestStore, type TestStoreHandle } from '../helpers/stores.js';

/**
 * The far end chooses where our RTP goes (its SDP answer's c=): an address the call may not reach
 * ends the call rather than receiving our media (issue 12). A real CallSession places a call on
 * a real SQLite store through a real user agent; a raw UDP peer on 127.0.0.1 answers with
 * c=127.0.0.77, where a socket watches for packets. The call's route (here the sandbox's, which
 * lets only its own address steer anything) decides what may be reached.
 */

const { defer, bindSocket, startRawUas, startUserAgent } = sipTestBench();

/** Answers INVITE with 200 and an SDP naming `mediaAddress:mediaPort`; answers BYE with 200. */
function startAnsweringPeer(mediaAddress: string, mediaPort: number) {
  return startRawUas({
    toTag: 'peer',
    inviteHeaders: (port) => [`Contact: <sip:peer@127.0.0.1:${port}>`],
    sdp: `v=0\r\no=- 2 2 IN IP4 ${mediaAddress}\r\ns=-\r\nc=IN IP4 ${mediaAddress}\r\nt=0 0\r\nm=audio ${mediaPort} RTP/AVP 0\r\na=sendrecv\r\n`,
  });
}

describe('the SDP answer names where our media goes', () => {
  let handle: TestStoreHandle;

  it('ends the call as failed/carrier_error when that address is refused, and sends it nothing', async () => {
    handle = await openTestStore('sqlite');
    defer(() => handle.dispose());
    const store = handle.store;
    const logger = createLogger('silent');
    const third = await bindSocket(thirdAddress);
    const packetsAtThird: number[] = [];
    third.on('message', (data) => packetsAtThird.push(data.length));
    const peer = await startAnsweringPeer(thirdAddress, third.address().port);

    const { account, agent, owner } = await createCallOwner(store, {
      account: { name: 'media', maxLiveCalls: 2 },
      agent: { maxDurationS: 3 },
    });
    await addPhoneNumber(store, account.id, '+15550009999');
    const queued = await store.calls.createQueued(
      newQueuedCall(owner, { fromNumber: '+15550009999', toNumber: '+15550100001' }),
    );
    if (!queued) throw new Error('not created');
    const nowMs = Date.now();
    const claimed = await store.calls.claimForDialing(queued.id, {
      workerId: 'wrk_media',
      untilIso: new Date(nowMs + 60_000).toISOString(),
      atIso: new Date(nowMs).toISOString(),
    });
    if (!('claimed' in claimed)) throw new Error('not claimed');

    const ua = await startUserAgent({ logger, timers: { t1Ms: 20 } });
    const clock = new MediaClock({ logger });
    defer(() => clock.stop());
    const recordingsDir = mkdtempSync(join(tmpdir(), 'callwright-media-'));
    defer(() => rmSync(recordingsDir, { recursive: true, force: true }));
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
        toolAllowPrivate: false,
        buildEvent: completedEventBuilder(() => null),
        voice: null,
        recordings: new FileRecordingStorage(recordingsDir),
      },
      claimed.claimed,
      agent,
    );
    const finished = await session.done;
    expect(finished).toMatchObject({ status: 'failed', endReason: 'carrier_error' });
    // The call ends as its BYE is sent (RFC 3261 §15.1.1), a moment before the peer reads it.
    await vi.waitFor(() => expect(peer.methods).toContain('BYE'), { timeout: 2_000 });
    expect(packetsAtThird).toEqual([]);
  });
});
