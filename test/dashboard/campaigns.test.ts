import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { keyForCallsPlacedBy } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { createCampaign } from '../../src/campaigns/createCampaign.js';
import { listenOnlyScript } from '../helpers/agentScripts.js';
import { startFullService } from '../helpers/fullService.js';
import { launchChromium, signedInPage } from './browser.js';

/**
 * Campaigns in a real browser: a CSV chosen as a file fills the form, bad rows are reported line
 * by line with nothing started, the fixed list starts a campaign whose page follows it live to
 * completion on the sandbox carrier.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
let browser: Browser;
let page: Page;
let accountId: string;

beforeAll(async () => {
  [service, browser] = await Promise.all([
    startFullService({}, { campaignScheduler: { tickMs: 100 } }),
    launchChromium(),
  ]);
  const account = await service.store.accounts.create({ name: 'Batch Co' });
  accountId = account.id;
  await createAgent(service.store, accountId, {
    name: 'Reminder',
    prompt: 'p',
    script: listenOnlyScript,
    variables: [parseVariableDeclaration('customer_name!')],
    maxDurationS: 3,
  });
  await addPhoneNumber(service.store, accountId, '+15550009999');
  page = await signedInPage(browser, service, accountId, 'batch@example.com');
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await service?.dispose();
});

describe('Campaigns', () => {
  it('reports bad rows and starts nothing, then runs the fixed list to completion, live', async () => {
    await page.getByRole('link', { name: 'Campaigns' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Tomorrow');
    await page.getByLabel('From', { exact: true }).fill('00:00');
    await page.getByLabel('Until', { exact: true }).fill('23:59');
    for (const day of ['Sat', 'Sun']) await page.getByLabel(day, { exact: true }).check();
    await page.getByLabel(/^Time zone/).fill('UTC');
    await page.getByLabel('busy retry after minutes').fill('1');
    await page.getByLabel('busy attempts in all').fill('1');
    await page.getByLabel('Read the contacts from a CSV file').setInputFiles({
      name: 'contacts.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('to_number,customer_name\n+15550100002,Ann\n555-0100,Bo\n+15550100005,\n'),
    });
    await expect.poll(() => page.getByLabel(/^Contacts \(CSV\)/).inputValue()).toContain('555-0100');
    await page.getByRole('button', { name: 'Start the campaign' }).click();
    const report = page.getByTestId('campaign-report');
    await expect
      .poll(() => report.textContent())
      .toContain('Line 3: to_number must be an E.164 phone number');
    expect(await report.textContent()).toContain('Line 4: variables.customer_name is required by the agent');
    expect(await service.store.campaigns.list(accountId, { limit: 5 })).toEqual([]);

    await page
      .getByLabel(/^Contacts \(CSV\)/)
      .fill('to_number,customer_name\n+15550100002,Ann\n+15550100005,Cy\n');
    await page.getByRole('button', { name: 'Start the campaign' }).click();
    await page.waitForURL((url) => url.pathname.startsWith('/campaigns/cmp_'));
    // The page refreshes itself while the campaign runs.
    await expect
      .poll(() => page.getByTestId('campaign-status').textContent(), { timeout: 30_000 })
      .toContain('completed');
    const progress = await page.getByTestId('campaign-progress').textContent();
    expect(progress).toMatch(/Done\s*2/);
    expect(progress).toContain('busy 1');
    expect(progress).toContain('failed 1');
    expect(await page.getByTestId('contacts-table').textContent()).toContain('+15550100005');
    // Issue 37: the figures panel and the results download.
    const figures = page.getByTestId('campaign-figures');
    expect(await figures.locator('td[data-label="Attempts"]').textContent()).toBe('2');
    expect(await figures.locator('td[data-label="Answered"]').textContent()).toBe('0.0%');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download CSV' }).click(),
    ]);
    const text = await new Response((await download.createReadStream()) as unknown as ReadableStream).text();
    expect(text.split('\r\n')[0]).toMatch(/^contact_id,to_number,status/);
    expect(text).toContain("'+15550100002");
    expect(text.trim().split('\r\n')).toHaveLength(3);
    await page.getByRole('link', { name: 'Campaigns' }).click();
    expect(await page.getByTestId('campaigns-table').textContent()).toContain('Tomorrow');
  }, 60_000);

  it('says why each contact waits, and that a paused campaign is paused', async () => {
    const account = (await service.store.accounts.get(accountId))!;
    const [agent] = await service.store.agents.list(accountId);
    const key = await keyForCallsPlacedBy(service.store, accountId, 'dashboard test');
    const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
    // A window three hours away in UTC: the contact waits for it.
    const campaign = await createCampaign(
      service.store,
      { account, apiKeyId: key.id },
      {
        name: 'Later',
        agent_id: agent!.id,
        from_number: '+15550009999',
        calling_window: { start: hhmm(Date.now() + 3 * 3_600_000), end: hhmm(Date.now() + 4 * 3_600_000) },
        time_zone: 'UTC',
        max_calls_per_hour: 40,
        holidays: { countries: ['US'], dates: ['12-24'] },
      },
      { kind: 'json', contacts: [{ to_number: '+15550100006', variables: { customer_name: 'Ann' } }] },
    );
    await page.goto(`${service.url}/campaigns/${campaign.id}`);
    expect(await page.getByTestId('campaign-caps').textContent()).toBe('40 per hour / no cap per day');
    expect(await page.getByTestId('campaign-holidays').textContent()).toBe('US, 12-24');
    // Caller-ID health: the one number, active, no finished attempt yet.
    expect(await page.getByTestId('campaign-caller-ids').textContent()).toBe(
      '+15550009999 active, answered — of last 0',
    );
    const why = page.getByTestId('contacts-table').locator('td[data-label="Why it waits"]');
    await expect.poll(() => why.getAttribute('data-waiting-reason')).toBe('window');
    expect(await why.textContent()).toContain('outside its calling window');
    await page.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => why.getAttribute('data-waiting-reason')).toBe('paused');
    expect(await why.textContent()).toContain('the campaign is paused');
  }, 60_000);

  it('adds contacts (a number list, a pasted CSV, a file) and removes one, at desktop and phone widths', async () => {
    const account = (await service.store.accounts.get(accountId))!;
    const [agent] = await service.store.agents.list(accountId);
    const key = await keyForCallsPlacedBy(service.store, accountId, 'dashboard test');
    const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
    // A window hours away: nothing is dialled, every contact waits for it.
    const campaign = await createCampaign(
      service.store,
      { account, apiKeyId: key.id },
      {
        name: 'Growing',
        agent_id: agent!.id,
        from_number: '+15550009999',
        calling_window: { start: hhmm(Date.now() + 3 * 3_600_000), end: hhmm(Date.now() + 4 * 3_600_000) },
        time_zone: 'UTC',
      },
      { kind: 'json', contacts: [{ to_number: '+15550100006', variables: { customer_name: 'Ann' } }] },
    );
    const numbers = async () =>
      (await service.store.campaigns.listContacts(campaign.id, { limit: 20 })).map((contact) => ({
        number: contact.toNumber,
        state: contact.state,
      }));
    // The contact sections fit the viewport: nothing in them reaches past its right edge (the page's
    // other panels are not this test's business).
    const noOverflow = () =>
      page.evaluate(() => {
        type Box = { getBoundingClientRect(): { right: number } };
        const window = globalThis as unknown as {
          innerWidth: number;
          document: { querySelectorAll(selector: string): Iterable<Box> };
        };
        const inside = [
          ...window.document.querySelectorAll(
            'section[aria-labelledby="contacts-title"], section[aria-labelledby="contacts-title"] *, section[aria-labelledby="add-contacts-title"], section[aria-labelledby="add-contacts-title"] *',
          ),
        ];
        return (
          inside.length > 0 &&
          inside.every((element) => element.getBoundingClientRect().right <= window.innerWidth)
        );
      });
    await page.goto(`${service.url}/campaigns/${campaign.id}`);
    const box = page.getByLabel(/^Contacts to add/);

    // One number per line: this agent needs customer_name, so each line is refused, numbered as typed.
    await box.fill('+15550100007\n+15550100008\n');
    await page.getByRole('button', { name: 'Add the contacts' }).click();
    const report = page.getByTestId('contacts-report');
    await expect.poll(() => report.textContent()).toContain('Line 1: variables.customer_name is required');
    expect(await report.textContent()).toContain('Line 2: variables.customer_name is required');
    expect(await box.inputValue()).toBe('+15550100007\n+15550100008\n');
    expect(await numbers()).toHaveLength(1);

    // A pasted CSV with the variable, one row a duplicate: nothing added, its line named.
    await box.fill('to_number,customer_name\n+15550100007,Bo\n+15550100006,Ann\n');
    await page.getByRole('button', { name: 'Add the contacts' }).click();
    await expect.poll(() => report.textContent()).toContain('Line 3: to_number is already in the campaign');
    await box.fill('to_number,customer_name\n+15550100007,Bo\n');
    await page.getByRole('button', { name: 'Add the contacts' }).click();
    await page.waitForURL((url) => url.searchParams.get('notice') === 'contacts-added');
    // A CSV file read into the form.
    await page.getByLabel('Read the contacts to add from a CSV file').setInputFiles({
      name: 'more.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('to_number,customer_name\n+15550100008,Cy\n+15550100009,Di\n'),
    });
    await expect.poll(() => box.inputValue()).toContain('+15550100009,Di');
    await page.getByRole('button', { name: 'Add the contacts' }).click();
    await page.waitForURL((url) => url.searchParams.get('notice') === 'contacts-added');
    const table = page.getByTestId('contacts-table');
    await expect.poll(() => table.locator('tbody tr').count()).toBe(4);
    // Each new contact says why it waits.
    const reasons = await table
      .locator('td[data-label="Why it waits"]')
      .evaluateAll((cells) => cells.map((cell) => cell.getAttribute('data-waiting-reason')));
    expect(reasons).toEqual(['window', 'window', 'window', 'window']);
    expect(await noOverflow()).toBe(true);

    // Removing one at phone width: it ends canceled and loses its button; the others stay.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    expect(await noOverflow()).toBe(true);
    await page.getByRole('button', { name: 'Remove +15550100008' }).click();
    await page.waitForURL((url) => url.searchParams.get('notice') === 'contact-removed');
    expect(await numbers()).toEqual([
      { number: '+15550100006', state: 'pending' },
      { number: '+15550100007', state: 'pending' },
      { number: '+15550100008', state: 'canceled' },
      { number: '+15550100009', state: 'pending' },
    ]);
    expect(await page.getByRole('button', { name: 'Remove +15550100008' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Remove / }).count()).toBe(3);
    expect(await noOverflow()).toBe(true);
    const entries = await service.store.privacy.listAudit(accountId, { limit: 10 });
    expect(entries.filter((entry) => entry.subject === campaign.id).map((entry) => entry.action)).toEqual(
      expect.arrayContaining(['campaign_contacts_added', 'campaign_contacts_removed']),
    );
    await page.setViewportSize({ width: 1200, height: 900 });
  }, 60_000);
});
