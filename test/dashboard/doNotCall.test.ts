import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFullService } from '../helpers/fullService.js';
import { launchChromium, signedInPage } from './browser.js';

/**
 * The do-not-call list in a real browser: a person pastes CSV rows, gets a row-by-row report and
 * nothing added while any row is bad, fixes them, sees the numbers listed, and takes one off.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
let browser: Browser;
let page: Page;
let accountId: string;

beforeAll(async () => {
  [service, browser] = await Promise.all([startFullService(), launchChromium()]);
  const account = await service.store.accounts.create({ name: 'Quiet Co' });
  accountId = account.id;
  page = await signedInPage(browser, service, accountId, 'dnc@example.com');
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await service?.dispose();
});

describe('Do not call', () => {
  it('reports bad rows and adds nothing; then adds the fixed list; a number can be taken off', async () => {
    await page.getByRole('link', { name: 'Do not call' }).click();
    await page
      .getByLabel(/^Numbers/)
      .fill('number,reason\n+14155550123,asked by email\n555-0100\n+14155550124');
    await page.getByRole('button', { name: 'Add to the list' }).click();
    await expect
      .poll(() => page.getByTestId('dnc-report').textContent())
      .toContain('Line 3: "555-0100" is not an E.164 number');
    expect(await service.store.doNotCall.list(accountId, { limit: 10 })).toEqual([]);
    // The text is kept in the form to be fixed.
    expect(await page.getByLabel(/^Numbers/).inputValue()).toContain('555-0100');

    await page.getByLabel(/^Numbers/).fill('number,reason\n+14155550123,asked by email\n+14155550124');
    await page.getByLabel(/^Reason for numbers without one/).fill('complaint');
    await page.getByRole('button', { name: 'Add to the list' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('2 new numbers added');
    const table = page.getByTestId('dnc-table');
    expect(await table.locator('tr', { hasText: '+14155550123' }).textContent()).toContain('asked by email');
    expect(await table.locator('tr', { hasText: '+14155550124' }).textContent()).toContain('complaint');
    expect(await service.store.doNotCall.get(accountId, '+14155550124')).toMatchObject({
      source: 'dashboard',
    });

    await page.getByRole('button', { name: 'Take +14155550123 off the list' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('taken off the list');
    expect(await service.store.doNotCall.get(accountId, '+14155550123')).toBeNull();
    expect(await page.getByTestId('dnc-table').textContent()).not.toContain('+14155550123');
  }, 60_000);
});
