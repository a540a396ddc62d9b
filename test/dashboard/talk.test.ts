import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { launchChromium, signedInPage } from '../dashboard/browser.js';
import { fakeMicrophoneWav } from '../helpers/fakeMicrophone.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';

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
      listen: [{ phrases: ['yes that works', 'yes', 'no'], capture: 'answer', next: 'bye' }],
      otherwise: 'greet',
    },
    bye: { say: 'Thank you. Goodbye.', end: true },
  },
};

let service: Awaited<ReturnType<typeof startFullService>>;
let browser: Browser;
let workDir: string;

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'callwright-talk-'));
  service = await startFullService({});
  browser = await launchChromium({
    args: [
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
      `--use-file-for-fake-audio-capture=${fakeMicrophoneWav(workDir, 'yes that works', { answerAtS: 8, totalS: 22 })}`,
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await service?.dispose();
  rmSync(workDir, { recursive: true, force: true });
});

describe('the dashboard Talk button', () => {
  it('talks to the agent from the agent page: channel web, transcript on the page', async () => {
    const account = await service.store.accounts.create({ name: 'talk', maxLiveCalls: 1 });
    const agentId = (
      await createAgent(service.store, account.id, { name: 'Dental', prompt: 'p', script, maxDurationS: 60 })
    ).id;
    const tab = await signedInPage(browser, service, account.id, 'talk@example.com');
    await tab.goto(`${service.url}/agents/${agentId}`);
    await tab.getByRole('button', { name: 'Talk', exact: true }).click();
    await expect
      .poll(() => tab.locator('#talk-status').textContent(), { timeout: 20_000 })
      .toContain('Call in_progress');
    const callId = (await service.store.calls.list(account.id, { limit: 1 }))[0]?.id as string;
    const call = await waitForTerminal(service, callId, 60_000);
    const heard = JSON.stringify(call.transcript);
    expect(call, heard).toMatchObject({ status: 'completed', channel: 'web' });
    expect(
      call.transcript.some((line) => line.role === 'callee' && /that works/.test(line.text)),
      heard,
    ).toBe(true);
    await expect
      .poll(() => tab.locator('#talk-transcript').textContent(), { timeout: 5_000 })
      .toContain('that works');
    await expect
      .poll(() => tab.locator('#talk-transcript').textContent(), { timeout: 5_000 })
      .toContain(greeting);
    // The agent's answer to the callee shows its latency (the agent's start after the callee's end).
    await expect
      .poll(() => tab.locator('#talk-transcript').textContent(), { timeout: 5_000 })
      .toMatch(/that works.*agent: .+ \(\d+ ms\)/s);
    await tab.context().close();
  }, 120_000);
});
