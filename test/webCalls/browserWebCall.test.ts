import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { setWebhookEndpoint } from '../../src/admin/webhooks.js';
import { webCallTokenHash, webCallTokenTtlMs } from '../../src/domain/webCalls.js';
import { verifyWebhook } from '../../src/webhooks/verify.js';
import { launchChromium } from '../dashboard/browser.js';
import { fakeMicrophoneWav } from '../helpers/fakeMicrophone.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { request } from '../helpers/http.js';
import { agentChannel, loudFrames } from '../helpers/recordings.js';

/**
 * A web call end to end: Debian's Chromium with a fake microphone (a WAV saying "yes that works")
 * on a page of the customer's own (another origin), a token from POST /v1/web-calls, the offer and
 * answer through POST /v1/web-calls/connect, werift's DTLS-SRTP on loopback, and the offline
 * stack (script agent, flite, pocketsphinx) running the same conversation as on a phone call.
 */

const greeting = 'Hello, this is Bright Smile Dental. Does Tuesday at ten in the morning work for you?';
const script = {
  start: 'greet',
  nodes: {
    greet: {
      say: greeting,
      listen: [{ phrases: ['yes that works', 'that works', 'yes', 'no'], capture: 'answer', next: 'bye' }],
      otherwise: 'greet',
    },
    bye: { say: 'Thank you. Goodbye.', end: true },
  },
};

/** The customer's page: its microphone to the agent, the agent's audio to an <audio> element. */
const page = `<!doctype html><html><body><audio id="agent" autoplay></audio><script>
window.webCall = async (apiUrl, token) => {
  const state = { connected: false, packetsReceived: 0, error: null };
  window.callState = state;
  try {
    const pc = new RTCPeerConnection();
    window.pc = pc;
    const microphone = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true } });
    for (const track of microphone.getTracks()) pc.addTrack(track, microphone);
    pc.ontrack = (event) => {
      const stream = event.streams[0] || new MediaStream([event.track]);
      document.getElementById('agent').srcObject = stream;
      // When the agent's first audible sound reaches the page (figures, never asserted on).
      const context = new AudioContext();
      const analyser = context.createAnalyser();
      context.createMediaStreamSource(stream).connect(analyser);
      const samples = new Float32Array(analyser.fftSize);
      const listen = () => {
        analyser.getFloatTimeDomainData(samples);
        if (samples.some((sample) => Math.abs(sample) > 0.05)) state.firstAudioMs = performance.now() - state.connectStartMs;
        else requestAnimationFrame(listen);
      };
      listen();
    };
    pc.onconnectionstatechange = () => {
      if (pc.connectionState === 'connected' && !state.connected) {
        state.connected = true;
        state.connectedMs = performance.now() - state.connectStartMs;
      }
    };
    await pc.setLocalDescription(await pc.createOffer());
    // Non-trickle: the offer goes once every candidate is in it.
    await new Promise((resolve) => {
      if (pc.iceGatheringState === 'complete') return resolve();
      pc.onicegatheringstatechange = () => pc.iceGatheringState === 'complete' && resolve();
    });
    state.connectStartMs = performance.now();
    const response = await fetch(apiUrl + '/v1/web-calls/connect', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token, sdp: pc.localDescription.sdp }),
    });
    const answer = await response.json();
    if (!response.ok) { state.error = answer; return state; }
    state.callId = answer.call_id;
    state.answerMs = performance.now() - state.connectStartMs;
    await pc.setRemoteDescription({ type: 'answer', sdp: answer.sdp });
    setInterval(async () => {
      for (const report of (await pc.getStats()).values()) {
        if (report.type === 'inbound-rtp' && report.kind === 'audio') state.packetsReceived = report.packetsReceived;
      }
    }, 250);
  } catch (error) { state.error = String(error); }
  return state;
};
</script></body></html>`;

/** What the page puts on `window`. */
interface PageState {
  connected: boolean;
  packetsReceived: number;
  error: unknown;
  callId?: string;
  answerMs?: number;
  connectedMs?: number;
  firstAudioMs?: number;
}
interface PageApi {
  webCall(apiUrl: string, token: string): Promise<PageState>;
  callState: PageState;
}

let service: Awaited<ReturnType<typeof startFullService>>;
let browser: Browser;
let pageServer: Server;
let pageUrl: string;
let key: string;
let agentId: string;
let webhookSecret: string;
let workDir: string;
const webhooks: { headers: Record<string, string>; body: string }[] = [];

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'callwright-webcall-'));
  service = await startFullService({ CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true' });
  const account = await service.store.accounts.create({ name: 'web', maxLiveCalls: 1 });
  key = (await createApiKey(service.store, account.id, 'web')).key;
  agentId = (
    await createAgent(service.store, account.id, { name: 'Dental', prompt: 'p', script, maxDurationS: 60 })
  ).id;
  pageServer = createServer((req, res) => {
    if (req.url === '/hooks') {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        webhooks.push({ headers: req.headers as Record<string, string>, body });
        res.end('ok');
      });
      return;
    }
    res.setHeader('Content-Type', 'text/html');
    res.end(page);
  });
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  pageUrl = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}`;
  // The customer's page is another origin than the service's: the account allows it.
  const allowed = await request(`${service.url}/v1/web-calls/origins`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
    body: JSON.stringify({ origins: [pageUrl] }),
  });
  expect(allowed.status).toBe(200);
  webhookSecret = (
    await setWebhookEndpoint(service.store, service.secretBox, account.id, `${pageUrl}/hooks`, {
      allowPrivate: true,
    })
  ).secret;
  browser = await launchChromium({
    args: [
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
      `--use-file-for-fake-audio-capture=${fakeMicrophoneWav(workDir, 'yes that works', {
        answerAtS: 10,
        totalS: 24,
        espeakArgs: ['-v', 'en-us', '-s', '165'],
      })}`,
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  pageServer?.close();
  await service?.dispose();
  rmSync(workDir, { recursive: true, force: true });
});

async function createWebCall(body: Record<string, unknown> = { agent_id: agentId }) {
  return request(`${service.url}/v1/web-calls`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
    body: JSON.stringify(body),
  });
}

describe('a web call from a browser', () => {
  it('runs the agent as on a phone: transcript, recording, channel web, signed webhook', async () => {
    const created = await createWebCall({ agent_id: agentId, metadata: { visitor: 'v-17' } });
    expect(created.status).toBe(200);
    const { token, call_id: callId } = created.body as { token: string; call_id: string };
    expect(created.body).toMatchObject({ channel: 'web', status: 'queued', metadata: { visitor: 'v-17' } });
    // Only the token's hash is kept.
    expect(JSON.stringify(await service.store.calls.getById(callId))).not.toContain(token);

    const tab = await (await browser.newContext()).newPage();
    await tab.goto(pageUrl);
    const state = await tab.evaluate(
      ([url, t]) => (globalThis as unknown as PageApi).webCall(url as string, t as string),
      [service.url, token],
    );
    expect(state.error).toBeNull();
    expect(state.callId).toBe(callId);

    // The account holds one live call: a second browser is refused while this one talks.
    const second = (await createWebCall()).body as { token: string; call_id: string };
    const tab2 = await (await browser.newContext()).newPage();
    await tab2.goto(pageUrl);
    const refused = await tab2.evaluate(
      ([url, t]) => (globalThis as unknown as PageApi).webCall(url as string, t as string),
      [service.url, second.token],
    );
    expect(refused.error).toMatchObject({ error: { code: 'rate_limited' } });
    expect(await service.store.calls.getById(second.call_id)).toMatchObject({
      status: 'canceled',
      channel: 'web',
    });
    await tab2.context().close();

    const call = await waitForTerminal(service, callId, 60_000);
    const heard = JSON.stringify(call.transcript);
    expect(call, heard).toMatchObject({
      status: 'completed',
      endReason: 'agent_hangup',
      channel: 'web',
      answeredBy: 'human',
    });
    // The callee's words, through the browser's microphone, SRTP and the recogniser's phrases.
    expect(
      call.transcript.some((line) => line.role === 'callee' && /that works/.test(line.text)),
      heard,
    ).toBe(true);
    expect(call.transcript[0]).toMatchObject({ role: 'agent', text: greeting });
    expect(call.extractedData, heard).toMatchObject({ answer: expect.stringContaining('that works') });
    // The browser heard the agent: packets arrived through its SRTP.
    const heardInPage = await tab.evaluate(() => (globalThis as unknown as PageApi).callState);
    expect(heardInPage.packetsReceived).toBeGreaterThan(100);
    // Figures for docs/benchmarks.md (a loaded machine moves them: printed, not asserted).
    console.log(
      `web call figures: answer ${heardInPage.answerMs?.toFixed(0)} ms, connected ${heardInPage.connectedMs?.toFixed(0)} ms, first agent audio ${heardInPage.firstAudioMs?.toFixed(0)} ms after the connect request`,
    );
    // The recording holds the agent's greeting (flite: a few seconds of speech).
    expect(loudFrames(agentChannel(readFileSync(call.recordingPath as string)))).toBeGreaterThan(100);
    expect(call.metrics).toMatchObject({ media: { codec: 'PCMU' } });

    const resource = await request(`${service.url}/v1/calls/${callId}`, { headers: { 'X-API-Key': key } });
    expect(resource.body).toMatchObject({ channel: 'web', status: 'completed' });

    const delivery = () => webhooks.find((hook) => hook.body.includes(callId));
    await expect.poll(delivery, { timeout: 20_000 }).toBeDefined();
    const hook = delivery() as { headers: Record<string, string>; body: string };
    const event = verifyWebhook(webhookSecret, hook.headers, hook.body) as {
      type: string;
      data: Record<string, unknown>;
    };
    expect(event).toMatchObject({ type: 'call.completed', data: { call_id: callId, channel: 'web' } });
    await tab.context().close();
  }, 120_000);

  it('ends as callee_hangup when the browser hangs up', async () => {
    const { token, call_id: callId } = (await createWebCall()).body as { token: string; call_id: string };
    const tab = await (await browser.newContext()).newPage();
    await tab.goto(pageUrl);
    const state = await tab.evaluate(
      ([url, t]) => (globalThis as unknown as PageApi).webCall(url as string, t as string),
      [service.url, token],
    );
    expect(state.error).toBeNull();
    await expect
      .poll(async () => (await service.store.calls.getById(callId))?.status, { timeout: 20_000 })
      .toBe('in_progress');
    await tab.evaluate(() => (globalThis as unknown as { pc: { close(): void } }).pc.close());
    // The DTLS alert is the hang-up: well within 10 s (ICE consent alone took ~30 s here).
    const call = await waitForTerminal(service, callId, 10_000);
    expect(call).toMatchObject({ status: 'completed', endReason: 'callee_hangup', channel: 'web' });
    await tab.context().close();
  }, 60_000);

  it('refuses a token used twice, an unknown one, and an expired one', async () => {
    const connect = (token: string) =>
      request(`${service.url}/v1/web-calls/connect`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ token, sdp: 'v=0\r\n' }),
      });
    const created = await createWebCall();
    const { token, call_id: callId } = created.body as { token: string; call_id: string };
    // The first use consumes it even though its offer is refused (its call ends, failed); the second is refused.
    expect((await connect(token)).status).toBe(400);
    expect(await service.store.calls.getById(callId)).toMatchObject({ status: 'failed', channel: 'web' });
    const again = await connect(token);
    expect(again.status).toBe(401);
    expect(again.body).toMatchObject({ error: { code: 'unauthorized' } });
    expect((await connect('wct_unknown')).status).toBe(401);

    // Expiry, in the store's one statement: two minutes are not waited for, the clock is moved.
    const expiring = (await createWebCall()).body as { token: string; call_id: string };
    const hash = webCallTokenHash(expiring.token);
    const later = (ms: number) => new Date(Date.now() + ms).toISOString();
    expect(await service.store.webCalls.consume(hash, later(webCallTokenTtlMs + 1_000))).toEqual({
      refused: 'expired',
    });
    expect(await service.store.webCalls.consume(hash, later(0))).toEqual({
      callId: expiring.call_id,
      accountId: expect.any(String),
    });
    expect(await service.store.webCalls.consume(hash, later(0))).toEqual({ refused: 'used' });
  });

  it('validates the creation at the edge', async () => {
    expect((await createWebCall({})).status).toBe(400);
    expect((await createWebCall({ agent_id: agentId, to_number: '+15550100001' })).status).toBe(400);
    expect((await createWebCall({ agent_id: 'agt_missing' })).status).toBe(404);
    const unauthenticated = await request(`${service.url}/v1/web-calls`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ agent_id: agentId }),
    });
    expect(unauthenticated.status).toBe(401);
  });
});
