import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { webCallChromiumArgs, webCallsFromOnePage } from '../../bench/webCallPage.mjs';
import { launchChromium } from '../dashboard/browser.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { agentChannel, calleeChannel, loudFrames } from '../helpers/recordings.js';
import {
  appointmentAgentAccount,
  appointmentWebCallToken,
  fliteAnswerWav,
} from '../helpers/webCallFixture.js';

/**
 * Twenty web calls at once (issue 39: "20 concurrent web calls hold on this machine"): Debian's
 * Chromium, one page, twenty calls through `callwright/web` to the example appointment agent, each
 * visitor answering the greeting with flite's "yes that works". Every call must be a whole
 * conversation: confirmed, the agent hanging up, both voices on its recording. (Voice-to-voice at
 * this level is measured by `npm run bench:web`, not asserted here.)
 */

const CALLS = 20;
let service: Awaited<ReturnType<typeof startFullService>>;
let browser: Browser;
let key: string;
let agentId: string;
let answerWav: Uint8Array;

beforeAll(async () => {
  service = await startFullService({ CALLWRIGHT_WEB_CALL_CONNECT_LIMIT: '1000/60s' });
  ({ key, agentId } = await appointmentAgentAccount(service, { name: 'visitors', maxLiveCalls: CALLS }));
  answerWav = await fliteAnswerWav();
  browser = await launchChromium({ args: webCallChromiumArgs });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await service?.dispose();
});

it('holds twenty web calls at once: each a whole conversation with both voices recorded', async () => {
  const tokens: string[] = [];
  for (let i = 0; i < CALLS; i++) tokens.push(await appointmentWebCallToken(service.url, key, agentId));
  const { results } = await webCallsFromOnePage(browser, {
    serviceUrl: service.url,
    tokens,
    agentId,
    answerWav,
    spreadMs: 2_000,
    callLimitMs: 90_000,
    // A visitor asked again ("Are you still there?") answers again, as a person would.
    maxAnswers: 3,
  });
  expect(results.filter((result) => result.error)).toEqual([]);
  const callIds = results.map((result) => result.callId as string);
  expect(new Set(callIds).size).toBe(CALLS);
  const calls = await Promise.all(callIds.map((callId) => waitForTerminal(service, callId, 60_000)));
  for (const call of calls) {
    const heard = JSON.stringify(call.transcript.map((line) => line.text));
    expect(call, heard).toMatchObject({
      status: 'completed',
      endReason: 'agent_hangup',
      channel: 'web',
      extractedData: { confirmed: true },
    });
    const recording = readFileSync(call.recordingPath as string);
    expect(loudFrames(agentChannel(recording))).toBeGreaterThan(100);
    expect(loudFrames(calleeChannel(recording)), heard).toBeGreaterThan(20);
  }
  const reAsked = calls.filter((call) => call.transcript.filter((line) => line.role === 'agent').length > 2);
  console.log(
    `twenty web calls: ${reAsked.length} of ${CALLS} visitors were asked again before the agent understood`,
  );
  // The page heard each agent's reply and ended with it (not at its own time limit).
  expect(results.map((result) => result.ended)).toEqual(callIds.map(() => 'ended'));
}, 240_000);
