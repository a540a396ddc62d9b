import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { webCallChromiumArgs, webCallsFromOnePage } from '../../bench/webCallPage.mjs';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { createLogger } from '../../src/logger.js';
import { concatSamples } from '../../src/voice/providers/audio/samples.js';
import { encodeWav } from '../../src/voice/providers/audio/wav.js';
import { FliteTextToSpeech } from '../../src/voice/providers/index.js';
import { launchChromium } from '../dashboard/browser.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { request } from '../helpers/http.js';

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
  const account = await service.store.accounts.create({ name: 'visitors', maxLiveCalls: 2 });
  key = (await createApiKey(service.store, account.id, 'site')).key;
  const script = JSON.parse(
    readFileSync(resolve(import.meta.dirname, '../../examples/agents/appointment-confirmation.json'), 'utf8'),
  );
  agentId = (
    await createAgent(service.store, account.id, {
      name: 'Dental',
      prompt: 'p',
      script,
      maxDurationS: 60,
      variables: ['customer_name', 'appointment_day'].map(parseVariableDeclaration),
    })
  ).id;
  const flite = await FliteTextToSpeech.start({ defaultVoice: 'kal', logger: createLogger('silent') });
  const parts: Int16Array[] = [];
  for await (const chunk of flite.synthesize('yes that works')) parts.push(chunk.samples);
  await flite.close();
  answerWav = encodeWav(Int16Array.from(concatSamples(parts)), 8000);
  browser = await launchChromium({ args: webCallChromiumArgs });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await service?.dispose();
});

it('a visitor without echo cancellation: the greeting is not cut, the answer is heard', async () => {
  const made = await request(`${service.url}/v1/web-calls`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
    body: JSON.stringify({
      agent_id: agentId,
      variables: { customer_name: 'Ann', appointment_day: 'Tuesday' },
    }),
  });
  expect(made.status).toBe(200);
  const { results } = await webCallsFromOnePage(browser, {
    serviceUrl: service.url,
    tokens: [(made.body as { token: string }).token],
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
