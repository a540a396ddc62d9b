import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { webCallChromiumArgs, webCallsFromOnePage } from '../../bench/webCallPage.mjs';
import { launchChromium } from '../dashboard/browser.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import {
  appointmentAgentAccount,
  appointmentWebCallToken,
  fliteAnswerWav,
} from '../helpers/webCallFixture.js';

/**
 * A web visitor whose speakers feed the microphone (no echo cancellation: the page's microphone is
 * WebAudio, the agent's audio mixed back 150 ms late and 10 dB down): the agent does not hear
 * itself — its greeting is not cut, and the visitor's "yes that works" after it still confirms.
 */

function normalized(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z ]/g, '')
    .trim();
}

let service: Awaited<ReturnType<typeof startFullService>>;
let browser: Browser;
let key: string;
let agentId: string;
let answerWav: Uint8Array;

beforeAll(async () => {
  service = await startFullService({});
  ({ key, agentId } = await appointmentAgentAccount(service, { name: 'visitors', maxLiveCalls: 2 }));
  answerWav = await fliteAnswerWav();
  browser = await launchChromium({ args: webCallChromiumArgs });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await service?.dispose();
});

it('a visitor without echo cancellation: the greeting is not cut, the answer is heard', async () => {
  const token = await appointmentWebCallToken(service.url, key, agentId);
  const { results } = await webCallsFromOnePage(browser, {
    serviceUrl: service.url,
    tokens: [token],
    agentId,
    answerWav,
    callLimitMs: 60_000,
    echo: { delayMs: 150, lossDb: 10 },
  });
  expect(results.filter((result) => result.error)).toEqual([]);
  const call = await waitForTerminal(service, results[0]?.callId as string, 60_000);
  const heard = JSON.stringify(call.transcript);
  const metrics = call.metrics as { barge_ins: number; echo: { frames_suppressed: number } };
  expect(metrics.barge_ins, heard).toBe(0);
  expect(metrics.echo.frames_suppressed, heard).toBeGreaterThan(50);
  expect(call, heard).toMatchObject({
    status: 'completed',
    endReason: 'agent_hangup',
    channel: 'web',
    extractedData: { confirmed: true },
  });
  // No callee line is the agent's own words come back (without the guard: "i am sorry i will call
  // you back later goodbye" as the callee's).
  const agentWords = call.transcript
    .filter((line) => line.role === 'agent')
    .map((line) => normalized(line.text));
  for (const line of call.transcript.filter((entry) => entry.role === 'callee'))
    expect(agentWords, heard).not.toContain(normalized(line.text));
  // The greeting was spoken whole: the first agent line ends its sentence.
  expect(call.transcript[0]?.text, heard).toMatch(/\?$/);
}, 120_000);
