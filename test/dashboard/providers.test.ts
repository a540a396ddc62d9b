import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/dashboard/passwords.js';
import { startFakeElevenLabs } from '../fakes/elevenLabsStreamInputServer.js';
import { startFullService } from '../helpers/fullService.js';
import { launchChromium, screenshotDir } from './browser.js';

/**
 * Settings → Providers in a real browser (issue 14, bring your own key): a person adds the
 * account's own vendor key, sees only its last 4 characters, tests it against the vendor (a fake
 * of ElevenLabs' REST read) — a good key and a refused one — and removes it.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
let browser: Browser;
let elevenLabs: Awaited<ReturnType<typeof startFakeElevenLabs>>;
let page: Page;
let accountId: string;
const goodKey = 'xi-dashboard-good-4f2a';

beforeAll(async () => {
  [service, browser, elevenLabs] = await Promise.all([
    startFullService({ CALLWRIGHT_PROVIDER_ALLOW_PRIVATE: 'true' }),
    launchChromium(),
    startFakeElevenLabs({ apiKey: goodKey, voiceIds: ['v1'] }),
  ]);
  const account = await service.store.accounts.create({ name: 'Providers Inc' });
  accountId = account.id;
  await service.store.users.create({
    accountId,
    email: 'voice@example.com',
    passwordHash: await hashPassword('a long enough password'),
  });
  page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
  await page.goto(`${service.url}/sign-in`);
  await page.getByLabel('Email').fill('voice@example.com');
  await page.getByLabel('Password').fill('a long enough password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname === '/');
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await service?.dispose();
  await elevenLabs?.close();
});

async function addKey(name: string, apiKey: string): Promise<void> {
  await page.getByRole('link', { name: 'Providers' }).click();
  await page.getByLabel(/^Name/).fill(name);
  await page.locator('#credential-provider').selectOption('elevenlabs');
  await page.getByLabel(/^API key/).fill(apiKey);
  await page.getByLabel(/^Base URL/).fill(elevenLabs.baseUrl.replace(/^ws:/, 'http:'));
  await page.getByRole('button', { name: 'Add key' }).click();
  await expect.poll(() => page.getByRole('status').first().textContent()).toContain('The key is stored');
}

describe('Settings → Providers', () => {
  it('adds a key that is shown only by its last 4, tests it, and removes it', async () => {
    await addKey('eleven-main', goodKey);
    const row = page.locator('tr', { hasText: 'eleven-main' });
    await expect.poll(() => row.textContent()).toContain('••••4f2a');
    expect(await page.content()).not.toContain(goodKey);
    const [stored] = await service.store.credentials.list(accountId);
    expect(stored?.apiKeyCiphertext).not.toContain(goodKey);

    await row.getByRole('button', { name: 'Test eleven-main' }).click();
    await expect
      .poll(() => page.getByRole('heading', { level: 2 }).first().textContent())
      .toBe('It works: eleven-main');
    expect(await page.getByRole('status').textContent()).toMatch(/elevenlabs accepted the key \(HTTP 200\)/);
    await page.screenshot({ path: `${screenshotDir}providers.png`, fullPage: true });

    await addKey('eleven-wrong', 'xi-wrong-key-0000');
    await page
      .locator('tr', { hasText: 'eleven-wrong' })
      .getByRole('button', { name: 'Test eleven-wrong' })
      .click();
    await expect
      .poll(() => page.getByRole('heading', { level: 2 }).first().textContent())
      .toBe('It does not work: eleven-wrong');
    expect(await page.getByRole('status').textContent()).toMatch(/HTTP 401: Invalid API key/);
    expect(await page.content()).not.toContain('xi-wrong-key-0000');

    await page.getByRole('link', { name: 'Remove eleven-wrong' }).click();
    await page.getByRole('button', { name: 'Remove eleven-wrong' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('The key is deleted');
    expect((await service.store.credentials.list(accountId)).map((credential) => credential.name)).toEqual([
      'eleven-main',
    ]);
  });

  it('sets the account’s own prices over the defaults; a bad table is refused with the entry named', async () => {
    await page.getByRole('link', { name: 'Providers' }).click();
    const own = [
      { stage: 'tts', provider: 'elevenlabs', model: null, unit: 'characters', usd: 0.03, per: 1000 },
    ];
    await page.getByLabel(/^Your prices/).fill(JSON.stringify(own));
    await page.getByRole('button', { name: 'Save prices' }).click();
    await expect
      .poll(() => page.getByRole('status').first().textContent())
      .toContain('Your prices are saved');
    expect(await service.store.prices.get(accountId)).toEqual(own);
    expect(await page.getByTestId('prices').locator('tr', { hasText: 'yours' }).textContent()).toMatch(
      /elevenlabs.*\$0\.03 per 1000 characters/,
    );
    await page
      .getByLabel(/^Your prices/)
      .fill('[{"stage":"tts","provider":"elevenlabs","unit":"words","usd":1}]');
    await page.getByRole('button', { name: 'Save prices' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toMatch(/prices\[0\]\.unit must be one of/);
    expect(await service.store.prices.get(accountId)).toEqual(own);
  });

  it('a bad key or address is refused with the reason, and nothing is stored', async () => {
    await page.getByRole('link', { name: 'Providers' }).click();
    await page.getByLabel(/^Name/).fill('bad-address');
    await page.getByLabel(/^API key/).fill('a-key-of-some-length');
    await page.getByLabel(/^Base URL/).fill('ftp://example.com/');
    await page.getByRole('button', { name: 'Add key' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toMatch(/base_url must use https, wss, http or ws/);
    expect(
      (await service.store.credentials.list(accountId)).map((credential) => credential.name),
    ).not.toContain('bad-address');
  });
});
