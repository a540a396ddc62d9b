import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { startFullService } from '../helpers/fullService.js';
import { testCertificates } from '../helpers/testCertificates.js';
import { launchChromium, screenshotDir } from './browser.js';

/**
 * The account dashboard in a real browser (Debian's chromium through playwright-core), against
 * the whole service as `serve` runs it: sign-up, keys, a sandbox call placed with a key over HTTP,
 * revocation, wrong passwords, CSRF and one account never seeing another's things.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
let browser: Browser;
let owner: BrowserContext;
let ownerPage: Page;
const ownerEmail = 'owner@example.com';
const ownerPassword = 'correct horse battery';
const appointmentScriptPath = new URL('../../examples/agents/appointment-confirmation.json', import.meta.url)
  .pathname;
const shared: { key?: string; keyName?: string; callId?: string; agentId?: string } = {};

async function shot(page: Page, name: string): Promise<void> {
  // A key value, even a throwaway one, is masked: secret scanners should not find one in docs/.
  await page.screenshot({
    path: `${screenshotDir}${name}.png`,
    fullPage: true,
    mask: [page.locator('#new-key')],
  });
}

function runCli(args: string[], stdin: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['dist/main.js', ...args], {
      env: { ...process.env, CALLWRIGHT_DATA_DIR: service.dataDir, LOG_LEVEL: 'silent' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

async function signIn(context: BrowserContext, email: string, password: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${service.url}/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  return page;
}

beforeAll(async () => {
  [service, browser] = await Promise.all([
    startFullService({ CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true' }),
    launchChromium(),
  ]);
  owner = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  ownerPage = await owner.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await service?.dispose();
});

describe('dashboard in chromium', () => {
  it('first run: the dashboard asks for the first user, then signs them in', async () => {
    const page = ownerPage;
    await page.goto(`${service.url}/`);
    await expect.poll(() => new URL(page.url()).pathname).toBe('/sign-up');
    await shot(page, 'sign-up');
    // The one-time setup token the service logged at start, as an operator would read it.
    const announced = service.logs.lines
      .map((line) => JSON.parse(line) as { event?: string; setupToken?: string })
      .filter((entry) => entry.event === 'dashboard_setup_token');
    expect(announced).toHaveLength(1);
    await page.getByLabel('Setup token').fill(announced[0]?.setupToken ?? '');
    await page.getByLabel('Email').fill(ownerEmail);
    await page.getByLabel('Password', { exact: false }).first().fill(ownerPassword);
    await page.getByLabel('Repeat the password').fill(ownerPassword);
    await page.getByRole('button', { name: 'Create user and sign in' }).click();
    await page.waitForURL(`${service.url}/`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview');
    const cookie = (await owner.cookies()).find((entry) => entry.name === 'cw_session');
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe('Lax');
    // Sign-up is closed once a user exists.
    await page.goto(`${service.url}/sign-up`);
    expect(new URL(page.url()).pathname).not.toBe('/sign-up');
  });

  it('key flow: create, read once, place a sandbox call over HTTP, watch it end, revoke, 401', async () => {
    const page = ownerPage;
    // A caller ID on the sandbox route and an agent, through the dashboard's forms.
    await page.goto(`${service.url}/numbers`);
    await page.getByLabel('Number (E.164)').fill('+15550009999');
    await page.getByRole('button', { name: 'Add number' }).click();
    await expect.poll(() => page.getByRole('cell', { name: '+15550009999', exact: true }).count()).toBe(1);
    await page.goto(`${service.url}/agents/new`);
    await page.getByLabel('Name', { exact: true }).fill('Reminder agent');
    await page.getByLabel('Prompt', { exact: false }).first().fill('You remind {{name}} of an appointment.');
    await page.getByLabel('Variables').fill('name=there');
    await page.getByLabel('Extraction fields').fill('confirmed:boolean:did they confirm');
    await page.getByLabel('Max duration (s)').fill('4');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.waitForURL(/\/agents\/agt_[0-9A-Z]{26}\?notice=created$/);
    shared.agentId = /agt_[0-9A-Z]{26}/.exec(page.url())?.[0];
    await shot(page, 'agent');

    await page.goto(`${service.url}/keys`);
    shared.keyName = 'integration test';
    await page.getByLabel('Name', { exact: false }).first().fill(shared.keyName);
    await page.getByRole('button', { name: 'Create key' }).click();
    await expect(page.getByText('you will not see this again')).toBeDefined();
    expect(await page.locator('.secret').textContent()).toContain('you will not see this again');
    const key = (await page.locator('#new-key').textContent())?.trim() ?? '';
    expect(key).toMatch(/^cw_live_/);
    shared.key = key;
    await shot(page, 'api-key-created');
    // Shown once: the list never carries the secret again.
    await page.goto(`${service.url}/keys`);
    expect(await page.content()).not.toContain(key);
    expect(await page.locator('tr', { hasText: shared.keyName }).textContent()).toContain(key.slice(-4));

    const placed = await fetch(`${service.url}/v1/calls/outbound`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        agent_id: shared.agentId,
        from_number: '+15550009999',
        to_number: '+15550100006',
      }),
    });
    expect(placed.status).toBe(200);
    const callId = ((await placed.json()) as { call_id: string }).call_id;
    shared.callId = callId;

    // The call page updates itself while the call is live, until it is completed.
    await page.goto(`${service.url}/calls/${callId}`);
    await page.getByTestId('call-status').getByText('completed').waitFor({ timeout: 20_000 });
    const text = await page.locator('main').textContent();
    expect(text).toContain('callee_hangup');
    expect(text).toContain('Transcript');
    for (const status of ['queued', 'dialing', 'in progress']) expect(text).toContain(status);
    await shot(page, 'call');
    await page.goto(`${service.url}/calls`);
    expect(await page.getByRole('link', { name: callId }).count()).toBe(1);
    await shot(page, 'calls');
    await page.goto(`${service.url}/`);
    await shot(page, 'overview');
    await page.goto(`${service.url}/numbers`);
    await shot(page, 'numbers');

    // A TLS trunk with its own CA, and one whose settings could not be honoured (refused, not saved).
    await page.getByLabel('Name', { exact: true }).fill('pbx-tls');
    await page.getByLabel(/^URI/).fill('sips:pbx.example.com');
    await page.getByLabel(/^TLS CA/).fill(testCertificates().caPem);
    await page.getByRole('button', { name: 'Add trunk' }).click();
    await page.waitForURL(/notice=trunk-added/);
    expect(await page.locator('tr', { hasText: 'pbx-tls' }).textContent()).toContain('TLS (own CA)');
    await page.getByLabel('Name', { exact: true }).fill('downgraded');
    await page.getByLabel(/^URI/).fill('sips:pbx.example.com;transport=udp');
    await page.getByRole('button', { name: 'Add trunk' }).click();
    await expect
      .poll(() => page.getByRole('alert').first().textContent())
      .toContain('transport=udp cannot be honoured');
    await page.goto(`${service.url}/numbers`);
    expect(await page.locator('tr', { hasText: 'downgraded' }).count()).toBe(0);

    // The webhook: set the URL, reveal and rotate the secret; the call's event is in the log.
    // Loopback only: nothing listens on port 9, so attempts fail and are logged.
    const receiver = 'http://127.0.0.1:9/callwright';
    await page.goto(`${service.url}/webhook`);
    await page.getByLabel('URL', { exact: false }).fill(receiver);
    await page.getByRole('button', { name: 'Set endpoint' }).click();
    await page.waitForURL(/notice=saved/);
    await page.getByRole('link', { name: 'Reveal' }).click();
    const secret = (await page.locator('#webhook-secret').textContent()) ?? '';
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.waitForURL(/notice=rotated/);
    expect((await page.locator('#webhook-secret').textContent()) ?? '').not.toBe(secret);
    expect(await page.locator('main').textContent()).toContain(callId);
    // The events sent besides call.completed: ticked boxes are saved, and shown ticked.
    await page.getByRole('checkbox', { name: /call\.answered/ }).check();
    await page.getByRole('checkbox', { name: /campaign\.completed/ }).check();
    await page.getByRole('button', { name: 'Save events' }).click();
    await page.waitForURL(/notice=events/);
    const endpoint = await fetch(`${service.url}/v1/webhook`, { headers: { 'X-API-Key': key } });
    expect(((await endpoint.json()) as { events: string[] }).events).toEqual([
      'call.completed',
      'call.answered',
      'campaign.completed',
    ]);
    expect(await page.getByRole('checkbox', { name: /call\.answered/ }).isChecked()).toBe(true);
    expect(await page.getByRole('checkbox', { name: /call\.ringing/ }).isChecked()).toBe(false);
    await page.goto(`${service.url}/webhook`);
    await shot(page, 'webhook');

    // Revoke with a confirmation, then the key gets 401 on the very next request.
    await page.goto(`${service.url}/keys`);
    await page.getByRole('link', { name: `Revoke ${shared.keyName}` }).click();
    expect(await page.locator('main').textContent()).toContain('cannot be undone');
    await page.getByRole('button', { name: `Revoke ${shared.keyName}` }).click();
    await page.waitForURL(/notice=revoked/);
    const refused = await fetch(`${service.url}/v1/calls/${callId}`, { headers: { 'X-API-Key': key } });
    expect(refused.status).toBe(401);
    await shot(page, 'api-keys');
  }, 60_000);

  it('a live call: its transcript grows on the page while it runs, and the hang-up button ends it', async () => {
    const page = ownerPage;
    const account = await service.store.accounts.getOrCreateDefault();
    const { key } = await createApiKey(service.store, account.id, 'live view');
    const appointment = await createAgent(service.store, account.id, {
      name: 'Appointment confirmation',
      prompt: 'Confirm the appointment.',
      variables: ['customer_name', 'appointment_day=Tuesday', 'reschedule_to='].map(parseVariableDeclaration),
      script: JSON.parse(readFileSync(appointmentScriptPath, 'utf8')),
      maxDurationS: 60,
    });
    const place = async (agentId: string, variables: Record<string, string>) => {
      const placed = await fetch(`${service.url}/v1/calls/outbound`, {
        method: 'POST',
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          agent_id: agentId,
          from_number: '+15550009999',
          to_number: '+15550100001',
          variables,
        }),
      });
      expect(placed.status).toBe(200);
      return ((await placed.json()) as { call_id: string }).call_id;
    };

    // A whole conversation: the ended call's page reads in words and milliseconds, not JSON.
    const talked = await place(appointment.id, { customer_name: 'Ann' });
    await page.goto(`${service.url}/calls/${talked}`);
    await page.getByTestId('call-status').getByText('completed').waitFor({ timeout: 40_000 });
    const ended = (await page.locator('main').textContent()) ?? '';
    expect(ended).toContain('The agent ended the call');
    // The script's analysis: completed (the callee spoke), shown beside the extracted data.
    expect(await page.getByTestId('analysis-status').textContent()).toBe('completed');
    const figures = page.getByTestId('call-figures');
    expect(await figures.locator('tr', { hasText: 'Voice-to-voice, median' }).textContent()).toMatch(
      /\d+ ms/,
    );
    expect(await figures.textContent()).not.toContain('{');
    // Each turn's waterfall: a bar per stage up to the first sound the callee heard, and its figures.
    const waterfall = page.getByTestId('turn-waterfall');
    expect(await waterfall.locator('svg rect').count()).toBeGreaterThanOrEqual(3);
    const turnFigures = page.getByTestId('turn-figures');
    const firstTurn = (await turnFigures.locator('tbody tr').first().textContent()) ?? '';
    expect(firstTurn).toMatch(/^1/);
    const stored = await service.store.calls.getById(talked);
    const storedTurns = (stored?.metrics as { turns?: { voice_to_voice_ms: number }[] } | null)?.turns ?? [];
    expect(firstTurn).toContain(`${storedTurns[0]?.voice_to_voice_ms} ms`);
    // What it used and cost: the offline engines and the sandbox, priced at nothing.
    const cost = page.getByTestId('call-cost');
    expect(await cost.locator('tr', { hasText: 'pocketsphinx' }).textContent()).toMatch(
      /s of audio\s*\$0\.0000/,
    );
    expect(await cost.locator('tr', { hasText: 'flite' }).textContent()).toMatch(/\d+ characters/);
    expect(await cost.locator('tr', { hasText: 'Total' }).textContent()).toContain('$0.0000');
    await shot(page, 'call-ended');
    // The overview adds the calls' costs up per day and per agent.
    await page.goto(`${service.url}/`);
    expect(
      await page
        .getByTestId('cost-per-agent')
        .locator('tr', { hasText: 'Appointment confirmation' })
        .textContent(),
    ).toMatch(/\$0\.0000/);
    expect(await page.getByTestId('cost-per-day').textContent()).toContain(
      new Date().toISOString().slice(0, 10),
    );

    // A call that stays on the line: the greeting shows up while it is in progress; then hang up.
    const listening = await createAgent(service.store, account.id, {
      name: 'Greets and listens',
      prompt: 'p',
      script: {
        start: 'greet',
        nodes: {
          greet: { say: 'Hello, this is Bright Smile Dental. Take your time.', next: 'listening' },
          listening: { listen: [{ phrases: [], next: 'listening' }] },
        },
      },
      maxDurationS: 60,
      silenceTimeoutS: 60,
    });
    const live = await place(listening.id, {});
    await page.goto(`${service.url}/calls/${live}`);
    const transcript = page.locator('ol.transcript');
    await transcript
      .getByText('Hello, this is Bright Smile Dental. Take your time.')
      .waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('call-status').textContent()).toContain('in progress');
    expect((await service.store.calls.getById(live))?.status).toBe('in_progress');
    await shot(page, 'call-live');
    await page.getByRole('button', { name: 'Hang up' }).click();
    await page.getByTestId('call-status').getByText('canceled').waitFor({ timeout: 15_000 });
    expect(await page.locator('main').textContent()).toContain('Hung up from the dashboard or the API');
    expect((await service.store.calls.getById(live))?.status).toBe('canceled');

    // The list: agent names, durations and how each call ended, in words.
    await page.goto(`${service.url}/calls`);
    const talkedRow = page.getByTestId('calls-table').locator('tr', { hasText: talked });
    expect(await talkedRow.textContent()).toMatch(/Appointment confirmation.*\d+ s/s);
    expect(await talkedRow.textContent()).toContain('The agent ended the call');
    await shot(page, 'calls');
    await page.goto(`${service.url}/`);
    expect(await page.locator('svg.chart text.axis-title').allTextContents()).toContain('voice-to-voice, ms');
    await shot(page, 'overview');
  }, 120_000);

  it('a wrong password is refused and opens no session', async () => {
    const context = await browser.newContext();
    const page = await signIn(context, ownerEmail, 'not the password');
    expect(await page.getByRole('alert').textContent()).toContain('Wrong email or password');
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    expect((await context.cookies()).some((cookie) => cookie.name === 'cw_session')).toBe(false);
    await page.goto(`${service.url}/keys`);
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    await shot(page, 'sign-in');
    await context.close();
  });

  it('a form posted without its CSRF token is refused with 403; with it, it works', async () => {
    const before = (await service.store.apiKeys.list((await service.store.accounts.getOrCreateDefault()).id))
      .length;
    const without = await owner.request.post(`${service.url}/keys`, {
      form: { name: 'forged' },
      maxRedirects: 0,
    });
    expect(without.status()).toBe(403);
    const wrong = await owner.request.post(`${service.url}/keys`, {
      form: { name: 'forged', csrf_token: 'x'.repeat(43) },
      maxRedirects: 0,
    });
    expect(wrong.status()).toBe(403);
    const signOutForged = await owner.request.post(`${service.url}/sign-out`, { form: {}, maxRedirects: 0 });
    expect(signOutForged.status()).toBe(403);
    const after = (await service.store.apiKeys.list((await service.store.accounts.getOrCreateDefault()).id))
      .length;
    expect(after).toBe(before);
    await ownerPage.goto(`${service.url}/keys`);
    const token = await ownerPage.locator('input[name=csrf_token]').first().inputValue();
    const withToken = await owner.request.post(`${service.url}/keys`, {
      form: { name: 'with token', csrf_token: token },
    });
    expect(withToken.status()).toBe(200);
  });

  it('a session never authenticates /v1, and an API key never opens the dashboard', async () => {
    const api = await owner.request.get(`${service.url}/v1/calls`);
    expect(api.status()).toBe(401);
    const account = await service.store.accounts.getOrCreateDefault();
    const { createApiKey } = await import('../../src/admin/apiKeys.js');
    const { key } = await createApiKey(service.store, account.id, 'not for the dashboard');
    const page = await fetch(`${service.url}/keys`, { headers: { 'X-API-Key': key }, redirect: 'manual' });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/sign-in');
  });

  it("one account's user sees none of another account's keys, agents or calls, by URL neither", async () => {
    const other = await service.store.accounts.create({ name: 'Other account' });
    const created = await runCli(
      ['users', 'create', '--email', 'other@example.com', '--account', other.id, '--json'],
      'another long password\n',
    );
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ email: 'other@example.com', account_id: other.id });

    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await signIn(context, 'other@example.com', 'another long password');
    await page.waitForURL(`${service.url}/`);
    await page.goto(`${service.url}/keys`);
    expect(await page.locator('main').textContent()).not.toContain(shared.keyName ?? '?');
    await page.goto(`${service.url}/agents`);
    expect(await page.locator('main').textContent()).not.toContain('Reminder agent');
    await page.goto(`${service.url}/calls`);
    expect(await page.locator('main').textContent()).not.toContain(shared.callId ?? '?');
    await shot(page, 'calls-phone');
    for (const path of [`/calls/${shared.callId}`, `/agents/${shared.agentId}`]) {
      const response = await page.goto(`${service.url}${path}`);
      expect(response?.status()).toBe(404);
    }
    // Revoking the first account's key by id from the second account finds nothing.
    const ownerAccount = await service.store.accounts.getOrCreateDefault();
    const ownerKey = (await service.store.apiKeys.list(ownerAccount.id)).find(
      (entry) => entry.name === 'with token',
    );
    await page.goto(`${service.url}/keys`);
    const token = await page.locator('input[name=csrf_token]').first().inputValue();
    const revoke = await context.request.post(`${service.url}/keys/${ownerKey?.id}/revoke`, {
      form: { csrf_token: token },
      maxRedirects: 0,
    });
    expect(revoke.status()).toBe(404);
    const stillLive = (await service.store.apiKeys.list(ownerAccount.id)).find(
      (entry) => entry.id === ownerKey?.id,
    );
    expect(stillLive?.revokedAt).toBeNull();
    await context.close();
  });

  it('sign-in attempts are limited per email, and sign-out ends the session', async () => {
    const context = await browser.newContext();
    const statuses: number[] = [];
    const page = await context.newPage();
    await page.goto(`${service.url}/sign-in`);
    const token = await page.locator('input[name=csrf_token]').inputValue();
    for (let attempt = 0; attempt < 6; attempt++) {
      const response = await context.request.post(`${service.url}/sign-in`, {
        form: { csrf_token: token, email: 'other@example.com', password: `wrong ${attempt}` },
        maxRedirects: 0,
      });
      statuses.push(response.status());
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    await context.close();

    await ownerPage.goto(`${service.url}/`);
    await ownerPage.getByRole('button', { name: 'Sign out' }).click();
    await ownerPage.waitForURL(`${service.url}/sign-in`);
    await ownerPage.goto(`${service.url}/keys`);
    expect(new URL(ownerPage.url()).pathname).toBe('/sign-in');
  });
});
