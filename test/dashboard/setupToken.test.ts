import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CommandContext } from '../../src/cli/context.js';
import { users } from '../../src/cli/userCommands.js';
import { announceSetupToken, consumeSetupToken, createSetupToken } from '../../src/dashboard/setupToken.js';
import { createLogger } from '../../src/logger.js';
import { openSqliteStore } from '../../src/openStore.js';
import { mainScript } from '../helpers/cli.js';
import { createAccountFixture, LogCapture } from '../helpers/service.js';
import { storeKinds } from '../helpers/stores.js';
import { type ApiFronts, postForm, startApiFronts } from './fronts.js';

/**
 * Issue 12, defect 3: a fresh install cannot be claimed by whoever reaches /sign-up first. The
 * first owner needs a one-time setup token, printed by `serve` at start while no user exists (or
 * made by `callwright users setup-token`); `callwright users create` needs none.
 */

const password = 'a long enough password';

function signUpFields(email: string, setupToken?: string): Record<string, string> {
  return {
    email,
    password,
    confirm: password,
    ...(setupToken === undefined ? {} : { setup_token: setupToken }),
  };
}

function cliContext(fronts: ApiFronts): { context: CommandContext; stdout: string[] } {
  const stdout: string[] = [];
  const context: CommandContext = {
    store: fronts.store,
    secretBox: () => {
      throw new Error('not needed');
    },
    json: true,
    accountId: undefined,
    out: { stdout: (text) => stdout.push(text), stderr: () => undefined },
  };
  return { context, stdout };
}

describe.each(storeKinds)('first-run setup token on the %s store', (kind) => {
  let fronts: ApiFronts | undefined;

  afterEach(async () => {
    await fronts?.dispose();
    fronts = undefined;
  });

  it('an install that already has keys and agents but no user cannot be claimed without the token', async () => {
    fronts = await startApiFronts(kind);
    await createAccountFixture(fronts.store);
    const url = fronts.urls[0] as string;
    const page = await fetch(`${url}/sign-up`);
    expect(await page.text()).toContain('name="setup_token"');

    const without = await postForm(`${url}/sign-up`, signUpFields('stranger@example.com'));
    expect(without.status).toBe(403);
    expect(without.text).toContain('setup token');
    const guessed = await postForm(
      `${url}/sign-up`,
      signUpFields('stranger@example.com', randomBytes(32).toString('base64url')),
    );
    expect(guessed.status).toBe(403);
    expect(await fronts.store.users.count()).toBe(0);
  });

  it('an expired token is refused; a live one creates the owner once, and is then spent', async () => {
    fronts = await startApiFronts(kind);
    const url = fronts.urls[0] as string;
    const expired = await createSetupToken(fronts.store, new Date(Date.now() - 25 * 3600 * 1000));
    const refused = await postForm(`${url}/sign-up`, signUpFields('owner@example.com', expired.token));
    expect(refused.status).toBe(403);
    expect(await fronts.store.users.count()).toBe(0);

    const live = await createSetupToken(fronts.store);
    expect(Date.parse(live.expiresAt) - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    // A form mistake does not spend the token.
    const mismatch = await postForm(`${url}/sign-up`, {
      ...signUpFields('owner@example.com', live.token),
      confirm: 'another password',
    });
    expect(mismatch.status).toBe(400);
    const created = await postForm(`${url}/sign-up`, signUpFields('owner@example.com', live.token));
    expect(created.status).toBe(303);
    expect(created.location).toBe('/');
    expect(await fronts.store.users.count()).toBe(1);
    expect(await fronts.store.setupTokens.listLive(new Date().toISOString())).toEqual([]);

    const again = await postForm(`${url}/sign-up`, signUpFields('second@example.com', live.token));
    expect(again.status).toBe(303);
    expect(again.location).toBe('/sign-in');
    expect(await fronts.store.users.count()).toBe(1);
  });

  it('a token is single use even when two API processes receive it at once', async () => {
    fronts = await startApiFronts(kind);
    const raced = await createSetupToken(fronts.store);
    const spent = await Promise.all(
      Array.from({ length: 10 }, () => consumeSetupToken((fronts as ApiFronts).store, raced.token)),
    );
    expect(spent.filter(Boolean)).toHaveLength(1);

    const { token } = await createSetupToken(fronts.store);
    const results = await Promise.all(
      (fronts.urls as string[]).flatMap((url, front) =>
        [0, 1, 2].map((attempt) =>
          postForm(`${url}/sign-up`, signUpFields(`owner${front}${attempt}@example.com`, token)),
        ),
      ),
    );
    expect(results.filter((result) => result.location === '/')).toHaveLength(1);
    expect(await fronts.store.users.count()).toBe(1);
  });

  it('on start with no user, a new token is printed on the terminal and logged once; with a user, nothing', async () => {
    fronts = await startApiFronts(kind);
    const logs = new LogCapture();
    const terminal: string[] = [];
    const options = {
      store: fronts.store,
      logger: createLogger('info', logs),
      signUpUrl: 'http://localhost:3000/sign-up',
      terminal: (text: string) => terminal.push(text),
    };
    const token = await announceSetupToken(options);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(terminal.join('')).toContain(token);
    expect(terminal.join('')).toContain('http://localhost:3000/sign-up');
    expect(logs.lines.filter((line) => line.includes(token as string))).toHaveLength(1);

    const created = await postForm(
      `${fronts.urls[1]}/sign-up`,
      signUpFields('owner@example.com', token as string),
    );
    expect(created.location).toBe('/');

    terminal.length = 0;
    const before = logs.lines.length;
    expect(await announceSetupToken(options)).toBeNull();
    expect(terminal).toEqual([]);
    expect(logs.lines.slice(before).join('\n')).not.toMatch(/[A-Za-z0-9_-]{43}/);
  });

  it('`callwright users setup-token` makes a token that works, and none once a user exists', async () => {
    fronts = await startApiFronts(kind);
    const { context, stdout } = cliContext(fronts);
    await users['setup-token']?.(context, []);
    const printed = JSON.parse(stdout.join('')) as { setup_token: string; expires_at: string };
    expect(printed.setup_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const created = await postForm(
      `${fronts.urls[0]}/sign-up`,
      signUpFields('owner@example.com', printed.setup_token),
    );
    expect(created.location).toBe('/');
    // Once a user exists, no token is made: sign-up is closed.
    await expect(users['setup-token']?.(context, [])).rejects.toThrow(/sign-up is closed/);
  });
});

it('`callwright users create` (the built CLI) still makes the first user with no token; then no token is announced', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'callwright-setup-'));
  try {
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [mainScript, 'users', 'create', '--email', 'first@example.com', '--json'],
        { env: { PATH: process.env.PATH, CALLWRIGHT_DATA_DIR: dataDir, LOG_LEVEL: 'silent' } },
      );
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.on('close', (code) => resolve({ code, stderr }));
      child.stdin.end(`${password}\n`);
    });
    expect(result).toEqual({ code: 0, stderr: '' });
    const store = openSqliteStore(join(dataDir, 'callwright.db'));
    try {
      expect(await store.users.count()).toBe(1);
      const terminal: string[] = [];
      const announced = await announceSetupToken({
        store,
        logger: createLogger('silent'),
        signUpUrl: 'http://localhost:3000/sign-up',
        terminal: (text) => terminal.push(text),
      });
      expect(announced).toBeNull();
      expect(terminal).toEqual([]);
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
