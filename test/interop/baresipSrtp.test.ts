import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { goertzelCoefficient, goertzelPower } from '../../src/telephony/rtp/goertzel.js';
import { startBaresipCallee } from '../helpers/baresip.js';
import { callThroughTrunk, startFullService } from '../helpers/fullService.js';
import { calleeChannel, loudFrames } from '../helpers/recordings.js';
import { freeUdpPort } from '../sipp/harness.js';

/**
 * SRTP with a real softphone: the service dials baresip (Debian's package, its own SRTP module)
 * with SDES keys, and each side must hear the other through the encryption — baresip's 700 Hz
 * tone in the call's recording, the agent's greeting in what baresip recorded. A key or cipher
 * wrong on either side leaves that side silence (the packets fail authentication and are dropped).
 */

let service: Awaited<ReturnType<typeof startFullService>>;

beforeAll(async () => {
  service = await startFullService({ CALLWRIGHT_TRUNK_ALLOW_PRIVATE: 'true' });
}, 60_000);

afterAll(async () => {
  await service?.dispose();
});

const toneHz = 700;

/**
 * 3 s of a 700 Hz tone, then silence, for baresip to play once it answers (it hangs up at the
 * end): 9 s, long enough for its first RTCP report (about every 5 s). The tests ask for 1.5 s of
 * the tone: baresip plays from its answer, our recording from when we have taken the answer in;
 * on a loaded machine 1.4 s of a 2 s tone reached the recording.
 */
function toneThenSilence(): Int16Array {
  const samples = new Int16Array(8000 * 9);
  for (let i = 0; i < 24_000; i++)
    samples[i] = Math.round(6000 * Math.sin((2 * Math.PI * toneHz * i) / 8000));
  return samples;
}

/** How many 20 ms frames of `samples` are mostly the tone. */
function toneFrames(samples: Int16Array): number {
  const coefficient = goertzelCoefficient(toneHz);
  let frames = 0;
  for (let at = 0; at + 160 <= samples.length; at += 160) {
    const frame = samples.subarray(at, at + 160);
    let energy = 0;
    for (const s of frame) energy += s * s;
    if (energy > 160 * 200 ** 2 && goertzelPower(frame, coefficient) / ((energy * 160) / 2) > 0.8) frames++;
  }
  return frames;
}

async function callBaresip(
  srtp: 'required' | 'optional',
  mediaEncryption: 'srtp' | 'srtp-mand' | undefined,
  rtcpMux = false,
) {
  // baresip also binds TCP and TLS beside the UDP port picked: a port taken meanwhile by another
  // suite fails its start, so a few free ports are tried.
  let sipPort = 0;
  let baresip: Awaited<ReturnType<typeof startBaresipCallee>> | undefined;
  for (let attempt = 0; baresip === undefined; attempt++) {
    sipPort = await freeUdpPort();
    baresip = await startBaresipCallee({
      sipPort,
      user: '+14155550188',
      say: toneThenSilence(),
      rtcpMux,
      ...(mediaEncryption ? { mediaEncryption } : {}),
      lifetimeMs: 40_000,
    }).catch((error: Error) => {
      if (attempt >= 2 || !error.message.includes('Address already in use')) throw error;
      return undefined;
    });
  }
  try {
    const call = await callThroughTrunk(
      service,
      { uri: `sip:127.0.0.1:${sipPort}`, srtp },
      {
        firstMessage: 'Hello, this is a line check from the support team. Can you hear me clearly?',
        maxDurationS: 15,
        toNumber: '+14155550188',
      },
    );
    return { call, heard: baresip.heard(), output: baresip.output() };
  } finally {
    await baresip.stop();
  }
}

describe('SRTP with baresip', () => {
  it('required (RTP/SAVP): both sides hear each other through the encryption', async () => {
    const { call, heard, output } = await callBaresip('required', 'srtp-mand');
    expect(call.status, output).toBe('completed');
    const callee = calleeChannel(readFileSync(call.recordingPath as string));
    // baresip's 3 s tone reached the agent's side decrypted (at least 1.5 s of it).
    expect(toneFrames(callee), output).toBeGreaterThan(75);
    // The agent's greeting reached baresip decrypted: over a second of speech in what it heard.
    expect(loudFrames(heard), output).toBeGreaterThan(50);
    expect(service.logs.text()).toContain('media is SRTP');
    // baresip's SRTCP reports reached us decrypted, and say it lost nothing of ours.
    const media = (call.metrics as { media: Record<string, unknown> }).media;
    expect(media, output).toMatchObject({ srtp: true, packets_unauthenticated: 0, rtcp_mux: false });
    expect(media.remote_report, output).toMatchObject({ fraction_lost: 0, packets_lost: 0 });
  }, 60_000);

  it('required with rtcp-mux (RFC 5761): SRTCP shares the RTP ports both ways, and nothing of it is taken for audio', async () => {
    const { call, heard, output } = await callBaresip('required', 'srtp-mand', true);
    expect(call.status, output).toBe('completed');
    expect(toneFrames(calleeChannel(readFileSync(call.recordingPath as string))), output).toBeGreaterThan(75);
    expect(loudFrames(heard), output).toBeGreaterThan(50);
    const media = (call.metrics as { media: Record<string, unknown> }).media;
    expect(media, output).toMatchObject({ srtp: true, packets_unauthenticated: 0, rtcp_mux: true });
    // baresip's reports came multiplexed on our RTP port, were told from RTP and decrypted as SRTCP.
    expect(media.remote_report, output).toMatchObject({ fraction_lost: 0, packets_lost: 0 });
  }, 60_000);

  it('optional (keys offered in RTP/AVP): a best-effort SRTP phone takes them and the audio flows', async () => {
    const { call, heard, output } = await callBaresip('optional', 'srtp');
    expect(call.status, output).toBe('completed');
    expect(toneFrames(calleeChannel(readFileSync(call.recordingPath as string))), output).toBeGreaterThan(75);
    expect(loudFrames(heard), output).toBeGreaterThan(50);
  }, 60_000);

  it('required against a phone without SRTP: no call in clear, the failure says why', async () => {
    const { call, output } = await callBaresip('required', undefined);
    // The phone refuses the RTP/SAVP offer outright; nothing falls back to clear RTP.
    expect(call, output).toMatchObject({ status: 'failed', endReason: 'rejected', inProgressAt: null });
    expect(output).toContain('no common audio codecs');
    expect(call.recordingPath).toBeNull();
  }, 60_000);
});
