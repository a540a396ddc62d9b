import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey, keyForCallsPlacedBy } from '../../src/admin/apiKeys.js';
import { setQuietHours } from '../../src/admin/callingRules.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { setWebhookEventTypes } from '../../src/admin/webhooks.js';
import { createCampaign } from '../../src/campaigns/createCampaign.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';
import { eventually, pointAccountAt, type Receiver, startReceiver } from '../webhooks/harness.js';
import { launchChromium, screenshotDir, signedInPage } from './browser.js';
import { backgroundColorOf, gapBetweenPx, layoutReport } from './layoutChecks.js';

/**
 * Issue 38 item 7: the dashboard pages a user reads most, with real data (calls placed on the
 * sandbox carrier, one decided a machine by answering-machine detection; a running campaign with
 * retry rules; quiet hours; the webhook events those calls wrote, delivered to a real receiver; an
 * agent test run that passes and one that fails), measured in chromium at a desktop and a phone
 * width: one h1 and no heading twice, no text wider than its box and no sideways scroll, labels
 * apart from their inputs, ids on one line, Cancel red and apart from Pause, the webhook log a
 * table of bounded height, test runs that say PASS or FAIL. The other pages are held to the same
 * layout measures.
 */

const examples = new URL('../../examples/', import.meta.url).pathname;
const confirms = JSON.parse(readFileSync(`${examples}scenarios/appointment/confirms.json`, 'utf8')) as {
  expect: { data: Record<string, unknown> };
};
const appointmentScript = JSON.parse(readFileSync(`${examples}agents/appointment-confirmation.json`, 'utf8'));
const widths = [
  { name: 'desktop', width: 1280, height: 900 },
  { name: 'phone', width: 390, height: 844 },
] as const;

/** The pictures this test refreshes in docs/screenshots (the calls pages' come from dashboard.test.ts). */
const screenshots: Record<(typeof widths)[number]['name'], Record<string, string>> = {
  desktop: {
    campaigns: 'campaigns',
    campaign: 'campaign',
    'data-rules': 'data-rules',
    webhook: 'webhook-log',
    'agent-test-runs': 'agent-test-runs',
  },
  phone: { campaign: 'campaign-phone', webhook: 'webhook-log-phone', 'call-machine': 'call-phone' },
};

let service: Awaited<ReturnType<typeof startFullService>>;
let browser: Browser;
let page: Page;
let receiver: Receiver;
const made = { machineCallId: '', campaignId: '', testAgentId: '', failingRunId: '', clinicId: '' };

async function placeAndWait(key: string, agentId: string, to: string): Promise<string> {
  const placed = await postCall(service.url, key, {
    agent_id: agentId,
    from_number: '+15550009999',
    to_number: to,
    variables: { customer_name: 'Ann' },
  });
  expect(placed.status).toBe(200);
  const callId = (placed.body as { call_id: string }).call_id;
  await waitForTerminal(service, callId, 60_000);
  return callId;
}

async function runTests(key: string, agentId: string, scenario: unknown): Promise<string> {
  const response = await fetch(`${service.url}/v1/agents/${agentId}/tests`, {
    method: 'POST',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body: JSON.stringify({ scenarios: [scenario] }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: string }).id;
}

async function waitForRun(key: string, agentId: string, runId: string): Promise<void> {
  await eventually(
    async () => {
      const response = await fetch(`${service.url}/v1/agents/${agentId}/tests/${runId}`, {
        headers: { 'X-API-Key': key },
      });
      return ((await response.json()) as { status: string }).status === 'completed' ? true : undefined;
    },
    60_000,
    `test run ${runId} completed`,
  );
}

beforeAll(async () => {
  [service, browser, receiver] = await Promise.all([
    startFullService({ CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true' }),
    launchChromium(),
    // The first delivery fails, so one event shows a retry.
    startReceiver((index) => ({ status: index === 0 ? 500 : 200 })),
  ]);
  const account = await service.store.accounts.create({ name: 'Bright Smile Dental', maxLiveCalls: 10 });
  const { key } = await createApiKey(service.store, account.id, 'k');
  await addPhoneNumber(service.store, account.id, '+15550009999');
  await pointAccountAt(service, account.id, receiver.url);
  await setWebhookEventTypes(service.store, account.id, ['call.ringing', 'call.answered']);
  const clinic = await createAgent(service.store, account.id, {
    name: 'Clinic',
    prompt: 'p',
    variables: ['customer_name'].map(parseVariableDeclaration),
    script: {
      start: 'greet',
      nodes: {
        greet: {
          say: 'Hello {{customer_name}}, this is the clinic.',
          listen: [{ phrases: [], next: 'bye' }],
        },
        bye: { say: 'Thank you, goodbye.', end: true },
      },
    },
    settings: {
      voicemail: {
        action: 'leave_message',
        message: 'Please call the clinic back.',
        wait_for_decision: true,
      },
    },
    maxDurationS: 20,
  });
  const tester = await createAgent(service.store, account.id, {
    name: 'Appointment confirmation',
    prompt: 'Confirm the appointment.',
    variables: ['customer_name', 'appointment_day=Tuesday'].map(parseVariableDeclaration),
    script: appointmentScript,
    maxDurationS: 45,
  });
  made.testAgentId = tester.id;
  // A person, a voicemail decided by answering-machine detection, a busy line, two quick hang-ups.
  const calls = await Promise.all(
    ['+15550100001', '+15550100004', '+15550100002', '+15550100006', '+15550100006'].map((to) =>
      placeAndWait(key, clinic.id, to),
    ),
  );
  made.machineCallId = calls[1] as string;
  const [passing, failing] = await Promise.all([
    runTests(key, tester.id, confirms),
    runTests(key, tester.id, {
      ...confirms,
      name: 'expects a no',
      expect: { ...confirms.expect, data: { confirmed: false } },
    }),
  ]);
  await Promise.all([passing, failing].map((runId) => waitForRun(key, tester.id, runId)));
  made.failingRunId = failing;
  made.clinicId = clinic.id;
  // A campaign whose window opens in three hours: running, its contact waiting, with retry rules.
  const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
  const campaignKey = await keyForCallsPlacedBy(service.store, account.id, 'campaigns');
  const campaign = await createCampaign(
    service.store,
    { account, apiKeyId: campaignKey.id },
    {
      name: 'Tuesday reminders',
      agent_id: clinic.id,
      from_number: '+15550009999',
      calling_window: { start: hhmm(Date.now() + 3 * 3_600_000), end: hhmm(Date.now() + 4 * 3_600_000) },
      time_zone: 'UTC',
      retry: {
        busy: { after_minutes: 30, max_attempts: 3 },
        no_answer: { after_minutes: 120, max_attempts: 2 },
      },
    },
    { kind: 'json', contacts: [{ to_number: '+15550100001', variables: { customer_name: 'Bo' } }] },
  );
  made.campaignId = campaign.id;
  // Quiet hours last: set before, they could hold the calls above.
  await setQuietHours(service.store, account.id, {
    start: '21:00',
    end: '08:00',
    time_zone: 'Europe/Berlin',
  });
  page = await signedInPage(browser, service, account.id, 'owner@example.com');
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await service?.dispose();
});

function pages(): { name: string; path: string }[] {
  return [
    { name: 'calls', path: '/calls' },
    { name: 'call-machine', path: `/calls/${made.machineCallId}` },
    { name: 'campaigns', path: '/campaigns' },
    { name: 'campaign', path: `/campaigns/${made.campaignId}` },
    { name: 'data-rules', path: '/data-rules' },
    { name: 'webhook', path: '/webhook' },
    { name: 'agent-test-runs', path: `/agents/${made.testAgentId}/tests` },
    { name: 'agent-test-run', path: `/agents/${made.testAgentId}/tests/${made.failingRunId}` },
    // The other pages, held to the same measures.
    { name: 'overview', path: '/' },
    { name: 'agents', path: '/agents' },
    { name: 'agent', path: `/agents/${made.clinicId}` },
    { name: 'numbers', path: '/numbers' },
    { name: 'keys', path: '/keys' },
    { name: 'providers', path: '/providers' },
    { name: 'do-not-call', path: '/do-not-call' },
  ];
}

describe('dashboard pages at two widths', () => {
  for (const size of widths) {
    it(`${size.name} (${size.width} px): one h1, nothing wider than its box, labels apart, ids whole`, async () => {
      await page.setViewportSize({ width: size.width, height: size.height });
      const faults: Record<string, unknown> = {};
      for (const entry of pages()) {
        await page.goto(`${service.url}${entry.path}`);
        const report = await layoutReport(page);
        const { h1Count, ...rest } = report;
        const found = Object.fromEntries(
          Object.entries(rest).filter(([, value]) => (Array.isArray(value) ? value.length > 0 : value !== 0)),
        );
        if (h1Count !== 1) found.h1Count = h1Count;
        if (Object.keys(found).length > 0) faults[entry.name] = found;
        const shot = screenshots[size.name][entry.name];
        if (shot) await page.screenshot({ path: `${screenshotDir}${shot}.png`, fullPage: true });
      }
      expect(faults).toEqual({});
    }, 60_000);

    it(`${size.name}: Cancel is red and apart from Pause; the webhook log is a short table; runs say PASS or FAIL`, async () => {
      await page.setViewportSize({ width: size.width, height: size.height });
      await page.goto(`${service.url}/campaigns/${made.campaignId}`);
      const cancel = page.getByRole('button', { name: 'Cancel the campaign' });
      // The class itself, not a quoted "danger" (an escaped string once gave the button class="&quot;…").
      expect(await cancel.evaluate((button) => [...button.classList])).toEqual(['danger']);
      expect(await backgroundColorOf(cancel)).toBe('rgb(207, 34, 46)');
      expect(
        await gapBetweenPx(page, 'button:text-is("Pause")', 'button:text-is("Cancel the campaign")'),
      ).toBeGreaterThanOrEqual(8);

      // Retry rules: short boxes with their units, not eight full-width ones.
      await page.goto(`${service.url}/campaigns`);
      for (const outcome of ['busy', 'no_answer', 'voicemail', 'failed']) {
        for (const [name, unit] of [
          [`${outcome} retry after minutes`, 'min'],
          [`${outcome} attempts in all`, 'attempts in all'],
        ] as const) {
          const input = page.getByLabel(name, { exact: true });
          expect((await input.boundingBox())?.width).toBeLessThan(120);
          expect(await input.evaluate((element) => element.closest('label')?.textContent)).toContain(unit);
        }
      }

      await page.goto(`${service.url}/webhook`);
      const log = page.getByTestId('delivery-log');
      const rows = await log.locator('tbody tr').count();
      expect(rows).toBeGreaterThanOrEqual(14);
      const heightPx = (await log.boundingBox())?.height ?? Number.POSITIVE_INFINITY;
      // One card per event was 3,620 px for 14 events at desktop width (~260 px each); a row is ~62
      // px at 1280 and ~165 px at 390.
      expect(heightPx / rows).toBeLessThan(size.name === 'desktop' ? 80 : 200);

      await page.goto(`${service.url}/agents/${made.testAgentId}/tests`);
      const results = await page.getByTestId('run-result').allTextContents();
      expect(results.map((text) => text.replace(/\s+/g, ' ').trim()).sort()).toEqual([
        'FAIL 1 of 1 failed',
        'PASS 1 of 1 passed',
      ]);
    }, 60_000);
  }

  it('says who answered the machine call and how the early check decided, in words', async () => {
    await page.goto(`${service.url}/calls/${made.machineCallId}`);
    const answered = await page.locator('dt:text-is("Answered by") + dd').textContent();
    expect(answered).toMatch(/^machine \(\d+ % sure, \d+\.\d s after the answer: .+\)$/);
  });
});
