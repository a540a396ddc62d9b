import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { listenOnlyScript } from '../helpers/agentScripts.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';
import { launchChromium, signedInPage } from './browser.js';

/**
 * Data rules in a real browser: retention and quiet hours saved, a bad value refused by the
 * server with a message, a number erased (its call gone) and the audit log showing it masked.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
let browser: Browser;
let page: Page;
let accountId: string;
let callId: string;

beforeAll(async () => {
  [service, browser] = await Promise.all([startFullService(), launchChromium()]);
  const account = await service.store.accounts.create({ name: 'Careful Co' });
  accountId = account.id;
  const agent = await createAgent(service.store, accountId, {
    name: 'a',
    prompt: 'p',
    script: listenOnlyScript,
    maxDurationS: 2,
  });
  await addPhoneNumber(service.store, accountId, '+15550009999');
  const { key } = await createApiKey(service.store, accountId, 'k');
  const placed = await postCall(service.url, key, {
    agent_id: agent.id,
    from_number: '+15550009999',
    to_number: '+155501000050031',
  });
  callId = (placed.body as { call_id: string }).call_id;
  await waitForTerminal(service, callId);
  page = await signedInPage(browser, service, accountId, 'rules@example.com');
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await service?.dispose();
});

describe('Data rules', () => {
  it('saves retention and quiet hours, erases a number and shows it in the audit log, masked', async () => {
    await page.getByRole('link', { name: 'Data rules' }).click();
    // The server refuses what the form's own checks (min 1) would stop in the browser.
    await page.getByLabel(/^Days to keep/).evaluate((input) => input.removeAttribute('min'));
    await page.getByLabel(/^Days to keep/).fill('0');
    await page.getByRole('button', { name: 'Save retention' }).click();
    await expect
      .poll(() => page.getByRole('alert').first().textContent())
      .toContain('Days must be 1 to 3650');
    await page.getByLabel(/^Days to keep/).fill('30');
    await page.getByRole('button', { name: 'Save retention' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('Retention saved');
    expect(await service.store.privacy.retentionDays(accountId)).toBe(30);

    await page.getByLabel('Quiet from').fill('21:00');
    await page.getByLabel('Quiet until').fill('08:00');
    await page.getByLabel(/^Time zone of numbers/).fill('Europe/Berlin');
    await page.getByRole('button', { name: 'Save quiet hours' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('Quiet hours saved');
    expect(await service.store.dialRates.quietHours(accountId)).toEqual({
      start: '21:00',
      end: '08:00',
      timeZone: 'Europe/Berlin',
    });

    await page.getByLabel(/^Number/).fill('+155501000050031');
    await page.getByRole('button', { name: 'Erase everything about this number' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('Erased: 1 calls');
    expect(await service.store.calls.getById(callId)).toBeNull();
    const audit = await page.getByTestId('audit-table').textContent();
    expect(audit).toContain('+1555*********31');
    expect(audit).not.toContain('+155501000050031');
    expect(audit).toMatch(/user:usr_/);
  }, 60_000);

  it('caps calls per second of a caller ID; a number the account lacks is refused with its message', async () => {
    await page.goto(`${service.url}/data-rules`);
    await page.getByLabel(/^Caller ID \(E\.164\) or trunk name/).fill('+15550001111');
    await page.getByLabel(/^Calls per second/).fill('3');
    await page.getByRole('button', { name: 'Save dial rate' }).click();
    await expect
      .poll(() => page.getByRole('alert').first().textContent())
      .toContain('no such number in this account');
    expect(await service.store.dialRates.list(accountId)).toEqual([]);

    await page.getByLabel(/^Caller ID \(E\.164\) or trunk name/).fill('+15550009999');
    await page.getByLabel(/^Calls per second/).fill('3');
    await page.getByRole('button', { name: 'Save dial rate' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('Dial rate saved');
    expect(await service.store.dialRates.list(accountId)).toEqual([
      { scope: 'caller_id', subject: '+15550009999', callsPerSecond: 3 },
    ]);
    expect(await page.getByTestId('dial-rates').textContent()).toContain('+15550009999');

    // Empty: the cap is removed.
    await page.getByLabel(/^Caller ID \(E\.164\) or trunk name/).fill('+15550009999');
    await page.getByRole('button', { name: 'Save dial rate' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('Dial rate saved');
    expect(await service.store.dialRates.list(accountId)).toEqual([]);
  }, 60_000);
});
