import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { hashPassword } from '../../src/dashboard/passwords.js';
import type { Store } from '../../src/store/types.js';

/**
 * Debian's chromium, headless; never a downloaded browser. Playwright gives every launch a fresh
 * temporary --user-data-dir of its own (it refuses one in `args`), removed when the browser closes.
 */
export async function launchChromium(options: { args?: readonly string[] } = {}): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
      ...(options.args ?? []),
    ],
    timeout: 20_000,
  });
}

/**
 * Where the tests save their screenshots: `docs/screenshots/` when CALLWRIGHT_UPDATE_SCREENSHOTS=1
 * (to refresh the README's pictures), otherwise a temporary folder, so a test run leaves the
 * working tree as it found it.
 */
export const screenshotDir =
  process.env.CALLWRIGHT_UPDATE_SCREENSHOTS === '1'
    ? new URL('../../docs/screenshots/', import.meta.url).pathname
    : `${mkdtempSync(join(tmpdir(), 'callwright-screenshots-'))}/`;

/**
 * A page signed in as a new user of `accountId` (made in the store with a known password), on the
 * overview, 1200 × 900.
 */
export async function signedInPage(
  browser: Browser,
  service: { url: string; store: Store },
  accountId: string,
  email: string,
): Promise<Page> {
  const password = 'a long enough password';
  await service.store.users.create({ accountId, email, passwordHash: await hashPassword(password) });
  const page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
  await page.goto(`${service.url}/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname === '/');
  return page;
}
