import { readFileSync } from 'node:fs';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { startFullService } from '../helpers/fullService.js';
import { launchChromium, screenshotDir, signedInPage } from './browser.js';

/**
 * An agent's Test tab in a real browser, against the whole service: scenarios pasted as JSON run
 * as sandbox calls and the run page follows them live to PASS and FAIL (with the reason and the
 * transcript); a bad scenario starts nothing; a completed call's Replay form replays its callee
 * with another end-of-turn wait and shows the turn-by-turn diff. Everything shown is escaped.
 */

const examples = new URL('../../examples/', import.meta.url).pathname;
const confirms = JSON.parse(readFileSync(`${examples}scenarios/appointment/confirms.json`, 'utf8')) as {
  name: string;
  expect: { data: Record<string, unknown> };
};
const script = JSON.parse(readFileSync(`${examples}agents/appointment-confirmation.json`, 'utf8'));
const hostileName = 'expects a no <script>window.pwned = 1</script>';
const expectsNo = {
  ...confirms,
  name: hostileName,
  expect: { ...confirms.expect, data: { confirmed: false } },
};

let service: Awaited<ReturnType<typeof startFullService>>;
let browser: Browser;
let page: Page;
let accountId: string;
let agentId: string;

beforeAll(async () => {
  [service, browser] = await Promise.all([startFullService(), launchChromium()]);
  const account = await service.store.accounts.create({ name: 'Bright Smile Dental', maxLiveCalls: 10 });
  accountId = account.id;
  agentId = (
    await createAgent(service.store, accountId, {
      name: 'Appointment confirmation',
      prompt: 'Confirm the appointment.',
      variables: ['customer_name', 'appointment_day=Tuesday'].map(parseVariableDeclaration),
      script,
      maxDurationS: 45,
    })
  ).id;
  await addPhoneNumber(service.store, accountId, '+15550009999');
  page = await signedInPage(browser, service, accountId, 'tester@example.com');
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await service?.dispose();
});

function rowOf(name: string): Locator {
  return page.getByTestId('result-row').filter({ hasText: name });
}

/** Waits on the run page, which refreshes itself, until every call of the run has been judged. */
async function waitForCompletion(): Promise<void> {
  await expect
    .poll(() => page.getByTestId('run-status').textContent(), { timeout: 40_000, interval: 500 })
    .toBe('completed');
}

describe('the Test tab of an agent', () => {
  it('refuses a bad scenario with its reason and starts nothing', async () => {
    await page.goto(`${service.url}/agents/${agentId}`);
    await page.getByRole('link', { name: 'Test', exact: true }).click();
    await page.waitForURL((url) => url.pathname === `/agents/${agentId}/tests`);
    expect(await page.getByTestId('runs-table').count()).toBe(0);

    await page.getByLabel(/^Scenarios \(JSON\)/).fill('[{"name": "half written",');
    await page.getByRole('button', { name: 'Run the tests' }).click();
    await expect.poll(() => page.getByTestId('run-error').textContent()).toContain('not valid JSON');

    const bad = { name: '<b>no callee</b>', callee: { answers: 'a robot' } };
    await page.getByLabel(/^Scenarios \(JSON\)/).fill(JSON.stringify(bad));
    await page.getByRole('button', { name: 'Run the tests' }).click();
    await expect.poll(() => page.getByTestId('run-error').textContent()).toContain('scenarios[0]');
    // What was typed comes back as typed, as text.
    expect(await page.getByLabel(/^Scenarios \(JSON\)/).inputValue()).toBe(JSON.stringify(bad));
    expect(await page.locator('main b').count()).toBe(0);
    expect(await service.store.agentTests.listRuns(accountId, agentId, 5)).toEqual([]);
  }, 20_000);

  it('runs a passing and a failing scenario and shows each result live', async () => {
    await page.getByLabel(/^Scenarios \(JSON\)/).fill(JSON.stringify([confirms, expectsNo], null, 2));
    await page.getByLabel(/^Repeat/).fill('1');
    await page.getByRole('button', { name: 'Run the tests' }).click();
    await page.waitForURL((url) => url.pathname.startsWith(`/agents/${agentId}/tests/trn_`));
    await waitForCompletion();

    expect(await rowOf('confirms').getByText('PASS', { exact: true }).count()).toBe(1);
    const failed = rowOf('expects a no');
    expect(await failed.getByText('FAIL', { exact: true }).count()).toBe(1);
    expect(await failed.textContent()).toContain('data.confirmed: expected false, got true');
    expect(await page.getByTestId('run-summary').textContent()).toMatch(/Pass rate\s*50 %/);
    // The hostile scenario name is text in the table and over its transcript, never a script.
    expect(await failed.locator('td').first().textContent()).toBe(hostileName);
    expect(await page.getByRole('heading', { name: hostileName }).count()).toBe(1);
    expect(await page.evaluate(() => (globalThis as { pwned?: number }).pwned)).toBeUndefined();
    expect(await page.locator('.transcript').first().textContent()).toContain('confirmed for Tuesday');

    await page.getByRole('link', { name: 'All test runs of this agent' }).click();
    expect(await page.getByTestId('runs-table').textContent()).toContain('scenarios');
  }, 60_000);

  it('replays a completed call with a longer end-of-turn wait and shows the diff, turn by turn', async () => {
    const [run] = await service.store.agentTests.listRuns(accountId, agentId, 1);
    const tests = await service.store.agentTests.run(accountId, run?.runId ?? '');
    const callId = tests.find((test) => (test.scenario as { name: string }).name === 'confirms')?.callId;
    await page.goto(`${service.url}/calls/${callId}`);
    await page.getByLabel(/^Agent overrides/).fill('{"settings": ');
    await page.getByRole('button', { name: 'Replay this call' }).click();
    await expect.poll(() => page.getByTestId('replay-error').textContent()).toContain('not valid JSON');
    expect(await service.store.agentTests.listRuns(accountId, agentId, 5)).toHaveLength(1);

    await page.getByLabel(/^Agent overrides/).fill('');
    await page.getByLabel(/^End-of-turn wait in ms/).fill('1500');
    await page.getByRole('button', { name: 'Replay this call' }).click();
    await page.waitForURL((url) => url.pathname.startsWith(`/agents/${agentId}/tests/trn_`));
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Replay of');
    await waitForCompletion();

    const diff = page.getByTestId('diff-table');
    expect(await diff.locator('tbody tr').count()).toBeGreaterThanOrEqual(1);
    expect(await diff.textContent()).toContain('that works');
    expect(await diff.textContent()).toContain('→');
    // Every turn now waits 1.5 s (the original answered in about 0.3 s): the diff says so.
    expect(await page.getByTestId('diff-summary').textContent()).toMatch(/1 of 1 turns changed/);
    expect(await diff.textContent()).toMatch(/waits \d+ ms longer/);
    await page.screenshot({ path: `${screenshotDir}agent-tests.png`, fullPage: true });
    const replayed = await service.store.agentTests.listRuns(accountId, agentId, 1);
    expect(replayed[0]?.replayOf).toBe(callId);
    const settings = (await service.store.agentTests.run(accountId, replayed[0]?.runId ?? ''))[0]
      ?.agentOverrides?.settings;
    expect(settings).toEqual({
      turn_taking: { end_of_turn: { min_wait_ms: 1500, wait_ms: 1500, max_wait_ms: 1500 } },
    });
  }, 50_000);
});
