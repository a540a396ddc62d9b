import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import type { AgentRecord } from '../../src/domain/records.js';
import { startFullService } from '../helpers/fullService.js';
import { launchChromium, signedInPage } from './browser.js';

/**
 * Issue 38, defect 1: saving an agent in the dashboard without changing anything leaves it as it
 * was — every example agent, and one with every kind of variable rule, saved through the form in
 * chromium and compared with the stored record field by field. Before, the form wrote variables as
 * `NAME[=DEFAULT]` only: `customer_name!` became optional and `party_size:number` became `any`.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
let browser: Browser;
let accountId: string;

const example = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../examples/agents/${name}`, import.meta.url), 'utf8'));

beforeAll(async () => {
  [service, browser] = await Promise.all([
    startFullService({ CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true' }),
    launchChromium(),
  ]);
  accountId = (await service.store.accounts.create({ name: 'round trip' })).id;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await service?.dispose();
});

/** The README's and docs/agents.md's example agents, as their commands create them. */
async function exampleAgents(): Promise<AgentRecord[]> {
  const appointment = await createAgent(service.store, accountId, {
    name: 'Appointment confirmation',
    prompt: 'Confirm the appointment.',
    script: example('appointment-confirmation.json'),
    variables: ['customer_name!', 'appointment_day=Tuesday', 'reschedule_to='].map(parseVariableDeclaration),
  });
  const orderDesk = await createAgent(service.store, accountId, {
    name: 'Order desk',
    brain: 'llm',
    prompt:
      "You answer questions about the caller's orders. Look an order up before you say anything about it.",
    firstMessage: "Hi, this is the order desk. What's your order number?",
    settings: example('order-desk.settings.json'),
  });
  const everyRule = await createAgent(service.store, accountId, {
    name: 'Every variable rule',
    brain: 'llm',
    prompt: 'Book {{party_size}} seats for {{customer_name}}.',
    variables: [
      ...['customer_name!', 'party_size:number', 'vip:boolean=false', 'note:string!=none', 'plain'].map(
        parseVariableDeclaration,
      ),
      {
        name: 'described',
        default: 'x=y',
        description: 'kept though the form has no place for it',
        required: false,
        type: 'any',
      },
    ],
    extraction: [
      { name: 'booked', type: 'boolean', description: 'did they book: yes or no' },
      { name: 'when', type: 'date', description: '' },
    ],
    maxDurationS: 321,
    silenceTimeoutS: 12,
  });
  return [appointment, orderDesk, everyRule];
}

describe('the dashboard agent form', () => {
  it('saves every example agent unchanged when nothing was edited', async () => {
    const agents = await exampleAgents();
    const page = await signedInPage(browser, service, accountId, 'roundtrip@example.com');
    for (const before of agents) {
      await page.goto(`${service.url}/agents/${before.id}`);
      await page.getByRole('button', { name: 'Save agent' }).click();
      await page.waitForURL(
        (url) => url.pathname === `/agents/${before.id}` && url.search.includes('notice'),
      );
      const after = (await service.store.agents.get(accountId, before.id)) as AgentRecord;
      for (const field of Object.keys(before) as (keyof AgentRecord)[]) {
        if (field === 'updatedAt') continue;
        expect({ agent: before.name, field, value: after[field] }).toEqual({
          agent: before.name,
          field,
          value: before[field],
        });
      }
    }
  }, 60_000);

  it('still changes what was edited: a variable made required and typed in the form', async () => {
    const agent = await createAgent(service.store, accountId, {
      name: 'Edited',
      prompt: 'p',
      firstMessage: 'Hello.',
      variables: ['party_size'].map(parseVariableDeclaration),
    });
    const page = await signedInPage(browser, service, accountId, 'edit@example.com');
    await page.goto(`${service.url}/agents/${agent.id}`);
    await page.getByLabel('Variables').fill('party_size:number!');
    await page.getByRole('button', { name: 'Save agent' }).click();
    await page.waitForURL((url) => url.search.includes('notice'));
    const after = await service.store.agents.get(accountId, agent.id);
    expect(after?.variables).toEqual([
      { name: 'party_size', default: null, description: '', required: true, type: 'number' },
    ]);
  }, 60_000);
});
