import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';

/**
 * Debian's chromium, headless; never a downloaded browser. Playwright gives every launch a fresh
 * temporary --user-data-dir of its own (it refuses one in `args`), removed when the browser closes.
 */
export async function launchChromium(): Promise<Browser> {
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
