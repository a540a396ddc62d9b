import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { setWebhookEndpoint } from '../../src/admin/webhooks.js';
import { verifyWebhook } from '../../src/webhooks/verify.js';
import { launchChromium } from '../dashboard/browser.js';
import { fakeMicrophoneWav } from '../helpers/fakeMicrophone.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { request } from '../helpers/http.js';
import { agentChannel, calleeChannel, loudFrames } from '../helpers/recordings.js';

/**
 * The example site (examples/web-call): its server keeps the API key and asks for a token, its
 * page loads `callwright/web` from the service and talks to the example appointment agent in
 * Debian's Chromium with a fake microphone. Also what the page must not be able to do: connect
 * from an origin the account has not allowed, with a token for another agent, too often.
 */

const script = JSON.parse(
  readFileSync(resolve(import.meta.dirname, '../../examples/agents/appointment-confirmation.json'), 'utf8'),
);
const variables = { customer_name: 'Ann', appointment_day: 'Tuesday' };
const declared = ['customer_name', 'appointment_day'].map(parseVariableDeclaration);

let service: Awaited<ReturnType<typeof startFullService>>;
let browser: Browser;
let site: ChildProcess;
let siteUrl: string;
let hooks: Server;
let key: string;
let agentId: string;
let otherAgentId: string;
let webhookSecret: string;
let workDir: string;
const webhooks: { headers: Record<string, string>; body: string }[] = [];

/** Starts `node examples/web-call/server.mjs` as a user would, on a free port. */
async function startExampleSite(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [resolve(import.meta.dirname, '../../examples/web-call/server.mjs')],
    {
      env: { ...process.env, ...env, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const url = await new Promise<string>((resolveUrl, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /example site on (http:\/\/localhost:\d+)/.exec(out);
      if (match) resolveUrl(match[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`the example site exited (${code}): ${out}`)));
  });
  return { child, url };
}

interface ExampleState {
  status: string;
  error: { code: string; message: string } | null;
  callId: string | null;
  ended: string | null;
}

async function clickTalk(): Promise<{ page: Page; state: () => Promise<ExampleState> }> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(siteUrl);
  await page.click('#talk');
  const state = () =>
    page.evaluate(() => (globalThis as unknown as { exampleCall: ExampleState }).exampleCall);
  return { page, state };
}

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'callwright-example-site-'));
  service = await startFullService({ CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true' });
  const account = await service.store.accounts.create({ name: 'site', maxLiveCalls: 2 });
  key = (await createApiKey(service.store, account.id, 'site')).key;
  agentId = (
    await createAgent(service.store, account.id, {
      name: 'Dental',
      prompt: 'p',
      script,
      maxDurationS: 60,
      variables: declared,
    })
  ).id;
  otherAgentId = (
    await createAgent(service.store, account.id, {
      name: 'Other',
      prompt: 'p',
      script,
      maxDurationS: 60,
      variables: declared,
    })
  ).id;
  hooks = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      webhooks.push({ headers: req.headers as Record<string, string>, body });
      res.end('ok');
    });
  });
  await new Promise<void>((done) => hooks.listen(0, '127.0.0.1', done));
  webhookSecret = (
    await setWebhookEndpoint(
      service.store,
      service.secretBox,
      account.id,
      `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hooks`,
      { allowPrivate: true },
    )
  ).secret;
  ({ child: site, url: siteUrl } = await startExampleSite({
    CALLWRIGHT_URL: service.url,
    CALLWRIGHT_API_KEY: key,
    AGENT_ID: agentId,
    VARIABLES: JSON.stringify(variables),
  }));
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
  site?.kill();
  hooks?.close();
  await service?.dispose();
  rmSync(workDir, { recursive: true, force: true });
});

const setOrigins = (origins: unknown) =>
  request(`${service.url}/v1/web-calls/origins`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
    body: JSON.stringify({ origins }),
  });

describe('the example site with callwright/web', () => {
  it('is refused until the account allows its origin (the page says why)', async () => {
    const { page, state } = await clickTalk();
    await expect
      .poll(async () => (await state()).error, { timeout: 20_000 })
      .toMatchObject({
        code: 'forbidden',
      });
    expect(await page.textContent('#status')).toContain('origin');
    await page.context().close();
  }, 60_000);

  it('talks to the example agent once allowed: the record, recording and signed webhook of a call', async () => {
    expect((await setOrigins([siteUrl, 'https://shop.example.com'])).status).toBe(200);
    const listed = await request(`${service.url}/v1/web-calls/origins`, { headers: { 'X-API-Key': key } });
    expect(listed.body).toEqual({ origins: [siteUrl, 'https://shop.example.com'] });

    const { page, state } = await clickTalk();
    await expect.poll(async () => (await state()).callId, { timeout: 20_000 }).toMatch(/^call_/);
    const callId = (await state()).callId as string;
    const call = await waitForTerminal(service, callId, 60_000);
    const heard = JSON.stringify(call.transcript);
    expect(call, heard).toMatchObject({
      status: 'completed',
      endReason: 'agent_hangup',
      channel: 'web',
      extractedData: { confirmed: true },
    });
    expect(call.transcript[0]).toMatchObject({ role: 'agent', text: expect.stringContaining('Hello Ann') });
    expect(
      call.transcript.some((line) => line.role === 'callee' && /works/.test(line.text)),
      heard,
    ).toBe(true);
    // Both sides are on the recording: the agent's voice and the visitor's microphone.
    const recording = readFileSync(call.recordingPath as string);
    expect(loudFrames(agentChannel(recording))).toBeGreaterThan(100);
    expect(loudFrames(calleeChannel(recording))).toBeGreaterThan(20);
    // The agent hung up: the page learns the call ended.
    await expect.poll(async () => (await state()).ended, { timeout: 15_000 }).toBe('ended');

    const delivery = () => webhooks.find((hook) => hook.body.includes(callId));
    await expect.poll(delivery, { timeout: 20_000 }).toBeDefined();
    const hook = delivery() as { headers: Record<string, string>; body: string };
    expect(verifyWebhook(webhookSecret, hook.headers, hook.body)).toMatchObject({
      type: 'call.completed',
      data: { call_id: callId, channel: 'web', extracted_data: { confirmed: true } },
    });
    await page.context().close();
  }, 120_000);

  it('refuses a token for another agent before using it, and validates origins at the edge', async () => {
    const created = await request(`${service.url}/v1/web-calls`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
      body: JSON.stringify({ agent_id: otherAgentId, variables }),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const { token, call_id: callId } = created.body as { token: string; call_id: string };
    const connect = (agent: string, origin: string) =>
      request(`${service.url}/v1/web-calls/connect`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Origin: origin },
        body: JSON.stringify({ token, sdp: 'v=0\r\n', agent_id: agent }),
      });
    const wrongAgent = await connect(agentId, siteUrl);
    expect(wrongAgent.status).toBe(403);
    expect(wrongAgent.body).toMatchObject({ error: { code: 'forbidden' } });
    const wrongOrigin = await connect(otherAgentId, 'https://evil.example.net');
    expect(wrongOrigin.status).toBe(403);
    expect(wrongOrigin.headers['access-control-allow-origin']).toBe('https://evil.example.net');
    expect(await service.store.calls.getById(callId)).toMatchObject({ status: 'queued' });
    // Still unused: the right agent from an allowed origin gets past the token (its offer is refused).
    expect((await connect(otherAgentId, siteUrl)).status).toBe(400);
    expect((await connect(otherAgentId, siteUrl)).status).toBe(401);

    for (const bad of ['http://shop.example.com', 'https://shop.example.com/path', 'shop.example.com', 7]) {
      const refused = await setOrigins([bad]);
      expect(refused.status, String(bad)).toBe(400);
    }
    expect((await setOrigins(Array.from({ length: 21 }, (_, i) => `https://s${i}.example.com`))).status).toBe(
      400,
    );
    // The SDK is served to any page.
    const sdk = await fetch(`${service.url}/v1/web-calls/sdk.js`);
    expect(sdk.headers.get('content-type')).toContain('javascript');
    expect(await sdk.text()).toContain('export async function startWebCall');
  });

  it('holds off an address that connects too often (429 with Retry-After)', async () => {
    const statuses: number[] = [];
    let retryAfter: string | undefined;
    for (let i = 0; i < 12; i += 1) {
      const response = await request(`${service.url}/v1/web-calls/connect`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ token: `wct_unknown_${i}`, sdp: 'v=0\r\n' }),
      });
      statuses.push(response.status);
      retryAfter ??= response.headers['retry-after'] as string | undefined;
    }
    // The address's ten a minute were spent by this file's earlier connections and these.
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThan(0);
    expect(Number(retryAfter)).toBeGreaterThan(0);
  });
});
