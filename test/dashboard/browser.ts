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

export const screenshotDir = new URL('../../docs/screenshots/', import.meta.url).pathname;
