import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CampaignScheduler } from '../../src/campaigns/campaignScheduler.js';
import { createCampaign } from '../../src/campaigns/createCampaign.js';
import { createLogger } from '../../src/logger.js';
import {
  type AnyStore,
  type CallOwner,
  createCallOwner,
  openTestStore,
  storeKinds,
  type TestStoreHandle,
} from '../helpers/stores.js';
import { eventually } from '../webhooks/harness.js';

/**
 * A campaign marked completed by a process that died before it wrote `campaign.completed`: the
 * next scheduler to look (any process, or this one restarted) writes the event, once.
 */

describe.each(storeKinds)('a lost campaign.completed on %s', (kind) => {
  let handle: TestStoreHandle;
  let store: AnyStore;
  let owner: CallOwner;

  beforeEach(async () => {
    handle = await openTestStore(kind);
    store = handle.store;
    owner = await createCallOwner(store);
    await store.numbers.add({ accountId: owner.account.id, number: '+15550009999', route: 'sandbox' });
  });

  afterEach(async () => {
    await handle.dispose();
  });

  async function campaignCompletedBehindTheSchedulersBack(): Promise<string> {
    const campaign = await createCampaign(
      store,
      { account: owner.account, apiKeyId: owner.key.id },
      {
        agent_id: owner.agent.id,
        from_number: '+15550009999',
        calling_window: { start: '00:00', end: '23:59' },
        time_zone: 'UTC',
      },
      { kind: 'json', contacts: [{ to_number: '+15550100001' }] },
    );
    // What the dying process did: its contacts ended, the campaign completed, no event written.
    const atIso = new Date().toISOString();
    await store.campaigns.endWaiting(campaign.id, 'expired', atIso);
    expect(await store.campaigns.complete(campaign.id, atIso)).toBe(true);
    return campaign.id;
  }

  const completionEvents = async () =>
    (await store.events.list(owner.account.id, { limit: 20 })).filter(
      (event) => event.type === 'campaign.completed',
    );

  it('is written by the next scheduler, once, for an endpoint that asked for it', async () => {
    await store.webhookEndpoints.set(
      owner.account.id,
      'https://example.com/hook',
      'sealed',
      new Date().toISOString(),
    );
    await store.webhookEndpoints.setEventTypes(
      owner.account.id,
      ['call.completed', 'campaign.completed'],
      new Date().toISOString(),
    );
    const campaignId = await campaignCompletedBehindTheSchedulersBack();
    // Not before the completing process had its chance (30 s).
    const early = new CampaignScheduler({
      store,
      logger: createLogger('silent'),
      wakeDispatcher: () => {},
      tickMs: 20,
    });
    early.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await early.stop();
    expect(await completionEvents()).toEqual([]);

    const schedulers = [0, 1].map(
      () =>
        new CampaignScheduler({
          store,
          logger: createLogger('silent'),
          wakeDispatcher: () => {},
          tickMs: 20,
          nowMs: () => Date.now() + 40_000,
        }),
    );
    for (const scheduler of schedulers) scheduler.start();
    const [event] = await eventually(async () => {
      const events = await completionEvents();
      return events.length > 0 ? events : undefined;
    }, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await Promise.all(schedulers.map((scheduler) => scheduler.stop()));
    expect(await completionEvents()).toHaveLength(1);
    expect(event).toMatchObject({ campaignId, callId: null });
    expect(JSON.parse(event?.body ?? '{}')).toMatchObject({
      type: 'campaign.completed',
      data: { campaign_id: campaignId, status: 'completed', progress: { expired: 1 } },
    });
  });

  it('is not written for an endpoint that did not ask for it', async () => {
    await store.webhookEndpoints.set(
      owner.account.id,
      'https://example.com/hook',
      'sealed',
      new Date().toISOString(),
    );
    await campaignCompletedBehindTheSchedulersBack();
    const scheduler = new CampaignScheduler({
      store,
      logger: createLogger('silent'),
      wakeDispatcher: () => {},
      tickMs: 20,
      nowMs: () => Date.now() + 40_000,
    });
    scheduler.start();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await scheduler.stop();
    expect(await store.events.list(owner.account.id, { limit: 20 })).toEqual([]);
  });
});
