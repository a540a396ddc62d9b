import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { keyForCallsPlacedBy } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { createCampaign } from '../../src/campaigns/createCampaign.js';
import { editCampaign } from '../../src/campaigns/editCampaign.js';
import { listenOnlyScript } from '../helpers/agentScripts.js';
import { startFullService } from '../helpers/fullService.js';
import { launchChromium, signedInPage } from './browser.js';
import { layoutReport } from './layoutChecks.js';

/**
 * Issue 37 in the dashboard: the campaign page's "Edit settings" form changes a running campaign
 * through the API's own code (only the changed fields, audited as the user, effective at the next
 * claim), a bad value shows the API's error and changes nothing, and the create form's "More
 * rules" sets caps and holidays. Both forms pass the layout checks at 1280 and 390 px.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
let browser: Browser;
let page: Page;
let accountId: string;
let userId: string;

const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
const utcDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

async function newCampaign(name: string, numbers: string[]) {
  const account = (await service.store.accounts.get(accountId))!;
  const [agent] = await service.store.agents.list(accountId);
  const key = await keyForCallsPlacedBy(service.store, accountId, 'edit test');
  // A window hours away: nothing is dialled until the form opens it.
  return createCampaign(
    service.store,
    { account, apiKeyId: key.id },
    {
      name,
      agent_id: agent!.id,
      from_number: '+15550009999',
      calling_window: { start: hhmm(Date.now() + 3 * 3_600_000), end: hhmm(Date.now() + 4 * 3_600_000) },
      time_zone: 'UTC',
      max_concurrency: 2,
      calls_per_minute: 10,
      retry: { busy: { after_minutes: 5, max_attempts: 2 } },
    },
    { kind: 'json', contacts: numbers.map((to_number) => ({ to_number })) },
  );
}

async function waitingReasons(): Promise<(string | null)[]> {
  await page.reload();
  return page
    .getByTestId('contacts-table')
    .locator('td[data-label="Why it waits"]')
    .evaluateAll((cells) => cells.map((cell) => cell.getAttribute('data-waiting-reason')));
}

beforeAll(async () => {
  [service, browser] = await Promise.all([
    startFullService({}, { campaignScheduler: { tickMs: 100 } }),
    launchChromium(),
  ]);
  const account = await service.store.accounts.create({ name: 'Edit Co' });
  accountId = account.id;
  await createAgent(service.store, accountId, {
    name: 'Reminder',
    prompt: 'p',
    script: listenOnlyScript,
    maxDurationS: 3,
  });
  await addPhoneNumber(service.store, accountId, '+15550009999');
  await addPhoneNumber(service.store, accountId, '+15550009998');
  page = await signedInPage(browser, service, accountId, 'edit@example.com');
  const user = await service.store.users.findByEmail('edit@example.com');
  userId = user!.id;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await service?.dispose();
});

describe('Editing a campaign in the dashboard', () => {
  it('changes the window, pace, a cap and a holiday; the next claim keeps to them; audited as the user', async () => {
    const campaign = await newCampaign('Live', ['+15550100011', '+15550100012']);
    await page.goto(`${service.url}/campaigns/${campaign.id}`);
    const form = page.locator('section[aria-labelledby="edit-title"]');
    // Prefilled with the campaign's values.
    expect(await form.getByLabel('From', { exact: true }).inputValue()).toBe(campaign.callingWindow.start);
    expect(await form.getByLabel('Calls per minute').inputValue()).toBe('10');
    expect(await form.getByLabel('busy retry after minutes').inputValue()).toBe('5');
    expect(await form.getByLabel('+15550009999').isChecked()).toBe(true);
    expect(await form.getByLabel('+15550009998').isChecked()).toBe(false);
    expect(await waitingReasons()).toEqual(['window', 'window']);

    // Open all day, every day; a cap of one call an hour; today and tomorrow holidays (midnight-proof).
    await form.getByLabel('From', { exact: true }).fill('00:00');
    await form.getByLabel('Until', { exact: true }).fill('23:59');
    for (const day of ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'])
      await form.getByLabel(day, { exact: true }).check();
    await form.getByLabel('Calls per minute').fill('20');
    await form.getByLabel(/^Calls per hour/).fill('1');
    const dates = `${utcDate(Date.now())}, ${utcDate(Date.now() + 86_400_000)}`;
    await form.getByLabel(/^Other days/).fill(dates);
    // Meanwhile someone else raises the concurrency: the form, which did not touch it, keeps theirs.
    await editCampaign(service.store, accountId, campaign.id, { max_concurrency: 5 }, 'cli');
    await form.getByRole('button', { name: 'Save the settings' }).click();
    await page.waitForURL((url) => url.searchParams.get('notice') === 'settings-changed');

    const stored = (await service.store.campaigns.get(accountId, campaign.id))!;
    expect(stored.callingWindow).toEqual({ start: '00:00', end: '23:59', weekdays: [1, 2, 3, 4, 5, 6, 7] });
    expect(stored.callsPerMinute).toBe(20);
    expect(stored.maxConcurrency).toBe(5);
    expect(stored.retry).toEqual({ busy: { after_minutes: 5, max_attempts: 2 } });
    expect(stored.rules.maxCallsPerHour).toBe(1);
    expect(stored.rules.holidays.dates).toEqual(dates.split(', '));
    expect(await page.getByTestId('campaign-caps').textContent()).toBe('1 per hour / no cap per day');
    expect(await page.getByTestId('campaign-holidays').textContent()).toBe(dates);
    // Only the changed fields were sent, and the user is the actor.
    const audit = (await service.store.privacy.listAudit(accountId, { limit: 20 })).filter(
      (entry) => entry.subject === campaign.id && entry.action === 'campaign_edit' && entry.actor !== 'cli',
    );
    expect(audit).toHaveLength(1);
    expect(audit[0]!.actor).toBe(`user:${userId}`);
    expect(Object.keys(audit[0]!.detail as object).sort()).toEqual([
      'calling_window',
      'calls_per_minute',
      'holidays',
      'max_calls_per_hour',
    ]);
    // The window is open, but today is a holiday: no one is dialled.
    await expect.poll(waitingReasons, { timeout: 15_000 }).toEqual(['holiday', 'holiday']);
    expect(
      (await service.store.campaigns.listContacts(campaign.id, { limit: 5 })).map((c) => c.attempts),
    ).toEqual([0, 0]);

    // No holidays any more: one call is placed, the other waits for the hourly cap.
    await form.getByLabel(/^Other days/).fill('');
    await form.getByRole('button', { name: 'Save the settings' }).click();
    await page.waitForURL((url) => url.searchParams.get('notice') === 'settings-changed');
    await expect
      .poll(async () => (await waitingReasons()).includes('hourly_cap'), { timeout: 20_000 })
      .toBe(true);
    const attempts = (await service.store.campaigns.listContacts(campaign.id, { limit: 5 })).map(
      (contact) => contact.attempts,
    );
    expect(attempts.sort()).toEqual([0, 1]);
  }, 90_000);

  it("shows the API's error for a bad value and changes nothing", async () => {
    const campaign = await newCampaign('Careful', ['+15550100013']);
    await page.goto(`${service.url}/campaigns/${campaign.id}`);
    const form = page.locator('section[aria-labelledby="edit-title"]');
    await form.getByLabel('Calls per minute').fill('30');
    await form.getByLabel(/^Other days/).fill('13-45');
    await form.getByRole('button', { name: 'Save the settings' }).click();
    const report = page.getByTestId('edit-report');
    await expect
      .poll(() => report.textContent())
      .toContain('holidays.dates must list at most 366 dates YYYY-MM-DD (one day) or MM-DD (every year)');
    expect(await page.getByTestId('edit-field').textContent()).toBe('Other days');
    // What was typed is still there to correct.
    expect(await form.getByLabel(/^Other days/).inputValue()).toBe('13-45');
    expect(await form.getByLabel('Calls per minute').inputValue()).toBe('30');
    const stored = (await service.store.campaigns.get(accountId, campaign.id))!;
    expect(stored.callsPerMinute).toBe(10);
    expect(stored.rules.holidays).toEqual({ countries: [], dates: [] });
    const audit = (await service.store.privacy.listAudit(accountId, { limit: 50 })).filter(
      (entry) => entry.subject === campaign.id,
    );
    expect(audit).toEqual([]);
    // A pool emptied is refused too, in the API's words.
    await page.goto(`${service.url}/campaigns/${campaign.id}`);
    await form.getByLabel('+15550009999').uncheck();
    await form.getByRole('button', { name: 'Save the settings' }).click();
    await expect.poll(() => report.textContent()).toContain('caller_ids as a list of 1 to');
    expect(await page.getByTestId('edit-field').textContent()).toBe('Caller IDs');
    expect((await service.store.campaigns.get(accountId, campaign.id))!.callerIds).toEqual(['+15550009999']);
  }, 60_000);

  it('creates a campaign with caps and holidays from "More rules"', async () => {
    await page.goto(`${service.url}/campaigns`);
    await page.getByLabel('Name', { exact: true }).fill('Capped');
    await page.getByLabel(/^Time zone/).fill('UTC');
    await page.getByText('More rules').click();
    await page.getByLabel(/^Calls per day/).fill('50');
    await page.getByLabel('GB', { exact: true }).check();
    await page.getByLabel(/^Other days/).fill('12-24, 2026-12-31');
    await page.getByLabel(/^Rested below/).fill('0');
    await page.getByLabel(/^Contacts \(CSV\)/).fill('to_number\n+15550100014\n');
    await page.getByRole('button', { name: 'Start the campaign' }).click();
    await page.waitForURL((url) => url.pathname.startsWith('/campaigns/cmp_'));
    const id = new URL(page.url()).pathname.split('/')[2]!;
    const stored = (await service.store.campaigns.get(accountId, id))!;
    expect(stored.rules.maxCallsPerDay).toBe(50);
    expect(stored.rules.maxCallsPerHour).toBeNull();
    expect(stored.rules.holidays).toEqual({ countries: ['GB'], dates: ['12-24', '2026-12-31'] });
    expect(stored.rules.callerIdHealth.minShareOfPool).toBe(0);
    expect(stored.rules.callerIdHealth.windowAttempts).toBe(20);
    expect(await page.getByTestId('campaign-health').textContent()).toBe('off');
    // A canceled campaign has no edit form.
    await page.getByRole('button', { name: 'Cancel the campaign' }).click();
    await page.waitForURL((url) => url.searchParams.get('notice') === 'cancel');
    expect(await page.locator('#edit-title').count()).toBe(0);
  }, 60_000);

  for (const size of [
    { width: 1280, height: 900 },
    { width: 390, height: 844 },
  ]) {
    it(`lays both forms out at ${size.width} px: one h1, nothing overflowing, labels apart`, async () => {
      const campaign = await newCampaign(`Fit ${size.width}`, ['+15550100015']);
      await page.setViewportSize(size);
      await page.goto(`${service.url}/campaigns/${campaign.id}`);
      const faults: Record<string, unknown> = {};
      const check = async (name: string) => {
        const { h1Count, ...rest } = await layoutReport(page);
        const found = Object.fromEntries(
          Object.entries(rest).filter(([, value]) => (Array.isArray(value) ? value.length > 0 : value !== 0)),
        );
        if (h1Count !== 1) found.h1Count = h1Count;
        if (Object.keys(found).length > 0) faults[name] = found;
      };
      expect(await page.locator('#edit-title').count()).toBe(1);
      await check('campaign');
      await page.goto(`${service.url}/campaigns`);
      await page.getByText('More rules').click();
      await check('campaigns, more rules open');
      expect(faults).toEqual({});
    }, 60_000);
  }
});
