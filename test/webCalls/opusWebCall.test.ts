import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { launchChromium } from '../dashboard/browser.js';
import { fakeMicrophoneWav } from '../helpers/fakeMicrophone.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { request } from '../helpers/http.js';
import { agentChannel, calleeChannel, loudFrames } from '../helpers/recordings.js';

/**
 * The codec of a web call (issue 39: "Opus … with PCMU as fallback"): Debian's Chromium through
 * `callwright/web` to the example appointment agent, with a fake microphone answering "yes that
 * works for me", the service started with CALLWRIGHT_WEB_CALL_OPUS=true (Opus is opt-in). Chromium
 * offers Opus first, so the service answers Opus and transcodes at its
 * bridge (the call's pipeline stays 8 kHz PCMU); a page that offers only PCMU still talks, in
 * PCMU; a page that offers neither is refused as before. What Chromium itself reports
 * (`getStats()`: the codec of each direction) is the evidence, not our own logs.
 */

const script = JSON.parse(
  readFileSync(resolve(import.meta.dirname, '../../examples/agents/appointment-confirmation.json'), 'utf8'),
);

let service: Awaited<ReturnType<typeof startFullService>>;
let browser: Browser;
let key: string;
let agentId: string;
let workDir: string;

/** What the page reports about its call (from the SDK's peer connection and Chromium's stats). */
interface PageCall {
  callId: string | null;
  error: { code: string; message: string } | null;
  answerSdp: string | null;
  codecs: { inbound?: string; outbound?: string };
  packets: { inbound?: number; outbound?: number };
  /** Payload bytes and the seconds they took, per direction (Chromium's stats). */
  bytes: { inbound?: number; outbound?: number };
  seconds: { inbound?: number; outbound?: number };
  ended: string | null;
}

/**
 * The page: the SDK's call, with the offer limited to `onlyCodec` when given (as a site could with
 * setCodecPreferences), and Chromium's view of it kept on `window.pageCall`.
 */
const page = `<!doctype html><body><script type="module">
import { startWebCall } from '/v1/web-calls/sdk.js';
window.callInPage = async (baseUrl, token, onlyCodec) => {
  const state = { callId: null, error: null, answerSdp: null, codecs: {}, packets: {}, bytes: {}, seconds: {}, since: {}, ended: null };
  window.pageCall = state;
  if (onlyCodec) {
    const addTrack = RTCPeerConnection.prototype.addTrack;
    RTCPeerConnection.prototype.addTrack = function (...args) {
      const sender = addTrack.apply(this, args);
      const codecs = RTCRtpReceiver.getCapabilities('audio').codecs.filter((c) => c.mimeType === onlyCodec);
      this.getTransceivers().find((t) => t.sender === sender).setCodecPreferences(codecs);
      return sender;
    };
  }
  const audio = document.createElement('audio');
  document.body.append(audio);
  let call;
  try {
    call = await startWebCall({ baseUrl, token, audioElement: audio });
  } catch (error) {
    state.error = { code: error.code, message: error.message };
    return;
  }
  const pc = call.peerConnection;
  state.callId = call.callId;
  state.answerSdp = pc.remoteDescription.sdp;
  call.ended.then((reason) => { state.ended = reason; });
  const timer = setInterval(async () => {
    if (pc.connectionState === 'closed') return clearInterval(timer);
    const stats = await pc.getStats();
    for (const report of stats.values()) {
      if (report.type !== 'inbound-rtp' && report.type !== 'outbound-rtp') continue;
      const direction = report.type === 'inbound-rtp' ? 'inbound' : 'outbound';
      const codec = stats.get(report.codecId);
      if (codec) state.codecs[direction] = codec.mimeType;
      state.packets[direction] = report.packetsReceived ?? report.packetsSent;
      state.bytes[direction] = report.bytesReceived ?? report.bytesSent;
      state.seconds[direction] = (report.timestamp - (state.since[direction] ??= report.timestamp)) / 1000;
    }
  }, 500);
};
</script></body>`;

interface PageApi {
  callInPage?: (baseUrl: string, token: string, onlyCodec: string | null) => Promise<void>;
  pageCall: PageCall;
}

async function webCall(
  onlyCodec: string | null,
): Promise<{ callId: string; page: Page; state: () => Promise<PageCall> }> {
  const made = await request(`${service.url}/v1/web-calls`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
    body: JSON.stringify({
      agent_id: agentId,
      variables: { customer_name: 'Ann', appointment_day: 'Tuesday' },
    }),
  });
  expect(made.status, JSON.stringify(made.body)).toBe(200);
  const { token, call_id: callId } = made.body as { token: string; call_id: string };
  const tab = await (await browser.newContext()).newPage();
  // A page on the service's own origin (allowed without an origin list), the SDK from the service.
  await tab.route(`${service.url}/test/opus.html`, (route) =>
    route.fulfill({ contentType: 'text/html', body: page }),
  );
  await tab.goto(`${service.url}/test/opus.html`);
  await tab.waitForFunction(() => Boolean((globalThis as unknown as PageApi).callInPage));
  await tab.evaluate(([url, t, only]) => (globalThis as unknown as PageApi).callInPage?.(url, t, only), [
    service.url,
    token,
    onlyCodec,
  ] as [string, string, string | null]);
  return { callId, page: tab, state: () => tab.evaluate(() => (globalThis as unknown as PageApi).pageCall) };
}

/** The audio section's codecs in an SDP, as `name/rate`. */
function sdpCodecs(sdp: string | null): string[] {
  return [...(sdp ?? '').matchAll(/^a=rtpmap:\d+ ([^/\s]+\/\d+)/gm)].map((match) => match[1] as string);
}

/** The conversation every codec must carry: confirmed, the agent hanging up, both voices recorded. */
async function expectWholeConversation(callId: string): Promise<void> {
  const call = await waitForTerminal(service, callId, 60_000);
  const heard = JSON.stringify(call.transcript);
  expect(call, heard).toMatchObject({
    status: 'completed',
    endReason: 'agent_hangup',
    channel: 'web',
    extractedData: { confirmed: true },
  });
  expect(
    call.transcript.some((line) => line.role === 'callee' && /works/.test(line.text)),
    heard,
  ).toBe(true);
  const recording = readFileSync(call.recordingPath as string);
  expect(loudFrames(agentChannel(recording))).toBeGreaterThan(100);
  expect(loudFrames(calleeChannel(recording)), heard).toBeGreaterThan(20);
  // The pipeline stays 8 kHz PCMU whatever the browser's codec.
  expect(call.metrics).toMatchObject({ media: { codec: 'PCMU' } });
}

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'callwright-opus-'));
  service = await startFullService({ CALLWRIGHT_WEB_CALL_OPUS: 'true' });
  const account = await service.store.accounts.create({ name: 'codecs', maxLiveCalls: 2 });
  key = (await createApiKey(service.store, account.id, 'site')).key;
  agentId = (
    await createAgent(service.store, account.id, {
      name: 'Dental',
      prompt: 'p',
      script,
      maxDurationS: 60,
      variables: ['customer_name', 'appointment_day'].map(parseVariableDeclaration),
    })
  ).id;
  browser = await launchChromium({
    args: [
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
      `--use-file-for-fake-audio-capture=${fakeMicrophoneWav(workDir, 'yes that works for me', {
        answerAtS: 9,
        totalS: 24,
        espeakArgs: ['-v', 'en-us', '-s', '165'],
      })}`,
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await service?.dispose();
  rmSync(workDir, { recursive: true, force: true });
});

describe('the codec of a web call', () => {
  it("answers Chromium's offer in Opus: both directions Opus in the browser, the whole conversation", async () => {
    const { callId, page, state } = await webCall(null);
    const started = await state();
    expect(started.error).toBeNull();
    expect(started.callId).toBe(callId);
    // Chromium offered Opus first among others; the answer holds Opus alone.
    expect(sdpCodecs(started.answerSdp)).toEqual(['opus/48000']);
    // Telephone-band both ways: the browser may encode narrowband (cheaper for both sides).
    expect(started.answerSdp).toMatch(/^a=fmtp:\d+ maxplaybackrate=8000;sprop-maxcapturerate=8000\r?$/m);
    await expect
      .poll(async () => (await state()).codecs, { timeout: 20_000 })
      .toEqual({
        inbound: 'audio/opus',
        outbound: 'audio/opus',
      });
    await expectWholeConversation(callId);
    const ended = await state();
    // The page heard the agent through Opus (20 ms packets: >100 is more than two seconds).
    expect(ended.packets.inbound).toBeGreaterThan(100);
    const kbps = (direction: 'inbound' | 'outbound') =>
      (((ended.bytes[direction] ?? 0) * 8) / (ended.seconds[direction] ?? 1) / 1000).toFixed(1);
    // Figures for docs/benchmarks.md (payload only, printed, not asserted).
    console.log(`opus web call: browser sends ${kbps('outbound')} kb/s, receives ${kbps('inbound')} kb/s`);
    await expect.poll(async () => (await state()).ended, { timeout: 15_000 }).toBe('ended');
    await page.context().close();
  }, 120_000);

  it('answers an offer without Opus in PCMU, and the conversation is the same', async () => {
    const { callId, page, state } = await webCall('audio/PCMU');
    const started = await state();
    expect(started.error).toBeNull();
    expect(sdpCodecs(started.answerSdp)).toEqual(['PCMU/8000']);
    await expect
      .poll(async () => (await state()).codecs, { timeout: 20_000 })
      .toEqual({
        inbound: 'audio/PCMU',
        outbound: 'audio/PCMU',
      });
    await expectWholeConversation(callId);
    await page.context().close();
  }, 120_000);

  it('refuses an offer with neither Opus nor PCMU (validation_error), ending its call failed', async () => {
    const { callId, page, state } = await webCall('audio/PCMA');
    expect((await state()).error).toMatchObject({ code: 'validation_error' });
    expect(await service.store.calls.getById(callId)).toMatchObject({
      status: 'failed',
      endReason: 'carrier_error',
      channel: 'web',
    });
    await page.context().close();
  }, 60_000);
});
