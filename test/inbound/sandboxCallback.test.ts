import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { callingWindowOf } from '../../src/domain/callingWindow.js';
import type { CallRecord } from '../../src/domain/records.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { jsonApi, postCall } from '../helpers/http.js';
import { eventually } from '../webhooks/harness.js';

/**
 * The sandbox caller persona (issue 40), everything offline: a sandbox callee who missed a call
 * (the no-answer persona) rings the number back; the agent that called answers and greets them
 * with the earlier call's variables, and the inbound call is linked to the missed one.
 */

const ourNumber = '+15550009999';
const missedCallee = '+15550100003';

let service: Awaited<ReturnType<typeof startFullService>>;
let key: string;
let accountId: string;
let agentId: string;

beforeAll(async () => {
  service = await startFullService({}, { campaignScheduler: { tickMs: 100, claimGraceMs: 1_000 } });
  const account = await service.store.accounts.create({ name: 'callbacks', maxLiveCalls: 5 });
  accountId = account.id;
  key = (await createApiKey(service.store, account.id, 'callbacks')).key;
  const agent = await createAgent(service.store, account.id, {
    name: 'Renewals',
    prompt: 'You call customers about their renewal.',
    firstMessage: 'Hi {{customer_name}}, thanks for calling us back about your renewal.',
    variables: [parseVariableDeclaration('customer_name=')],
    maxDurationS: 20,
  });
  agentId = agent.id;
  // The number has no inbound agent: only a callback is answered, by the agent that called.
  await addPhoneNumber(service.store, account.id, ourNumber);
}, 60_000);

afterAll(async () => {
  await service?.dispose();
});

describe('a sandbox callee rings back', () => {
  it('is answered by the agent that called, greeted with the earlier call context, linked to it', async () => {
    const placed = await postCall(service.url, key, {
      agent_id: agentId,
      from_number: ourNumber,
      to_number: missedCallee,
      variables: { customer_name: 'Ann' },
    });
    expect(placed.status).toBe(200);
    const missedId = (placed.body as { call_id: string }).call_id;
    const missed = await waitForTerminal(service, missedId, 30_000);
    expect(missed.status).toBe('no_answer');

    const worker = service.calls;
    if (!worker) throw new Error('no call worker');
    const result = await worker.sandbox.callService({
      from: missedCallee,
      to: ourNumber,
      target: { host: '127.0.0.1', port: worker.ua.boundPort },
      talkMs: 4_000,
    });
    expect(result).toMatchObject({ answered: true, endedBy: 'caller' });
    expect(result.audibleFrames).toBeGreaterThan(10);

    let inbound: CallRecord | undefined;
    const deadline = Date.now() + 20_000;
    while (inbound?.status !== 'completed') {
      if (Date.now() > deadline) throw new Error(`inbound call still ${inbound?.status}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      [inbound] = await service.store.inboundCalls.list(accountId, { direction: 'inbound', limit: 1 });
    }
    expect(inbound).toMatchObject({
      direction: 'inbound',
      callbackOf: missedId,
      agentId,
      fromNumber: missedCallee,
      toNumber: ourNumber,
      variables: { customer_name: 'Ann' },
    });
    expect(inbound?.context).toContain('calling back');
    const greeting = inbound?.transcript.find((line) => line.role === 'agent');
    expect(greeting?.text).toContain('Hi Ann');
  }, 90_000);

  it('marks the campaign contact who rings back answered, and never retries it', async () => {
    const api = jsonApi(
      () => service.url,
      () => key,
    );
    // The no-answer persona under an extension of its own (personas.ts).
    const contactNumber = `${missedCallee}7`;
    const created = await api('/campaigns', {
      method: 'POST',
      body: {
        agent_id: agentId,
        from_number: ourNumber,
        calling_window: callingWindowOf({ start: '00:00', end: '23:59' }),
        time_zone: 'UTC',
        retry: { no_answer: { after_minutes: 60, max_attempts: 3 } },
        contacts: [{ to_number: contactNumber, variables: { customer_name: 'Bea' } }],
      },
    });
    expect(created.status).toBe(201);
    const campaignId = (created.body as { campaign_id: string }).campaign_id;
    const contact = async () =>
      (
        (await api(`/campaigns/${campaignId}/contacts`)).body as {
          data: { state: string; attempts: number }[];
        }
      ).data[0];
    await eventually(
      async () => ((await contact())?.state === 'retry_wait' ? true : undefined),
      30_000,
      'a retry wait',
    );
    const worker = service.calls;
    if (!worker) throw new Error('no call worker');
    const result = await worker.sandbox.callService({
      from: contactNumber,
      to: ourNumber,
      target: { host: '127.0.0.1', port: worker.ua.boundPort },
      talkMs: 2_000,
    });
    expect(result.answered).toBe(true);
    expect(await contact()).toMatchObject({ state: 'done', attempts: 1 });
  }, 90_000);

  it('refuses a call to a number without an inbound agent from someone never called (480)', async () => {
    const worker = service.calls;
    if (!worker) throw new Error('no call worker');
    const result = await worker.sandbox.callService({
      from: '+15550100099',
      to: ourNumber,
      target: { host: '127.0.0.1', port: worker.ua.boundPort },
      talkMs: 1_000,
    });
    expect(result).toMatchObject({ answered: false, status: 480 });
  }, 30_000);
});
