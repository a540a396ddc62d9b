import { afterEach, describe, expect, it } from 'vitest';
import { CampaignScheduler } from '../../src/campaigns/campaignScheduler.js';
import { createCampaign } from '../../src/campaigns/createCampaign.js';
import { createLogger } from '../../src/logger.js';
import { createCallOwner, openTestStore, type StoreKind, type TestStoreHandle } from '../helpers/stores.js';

/**
 * Head-of-line delay (issue 37, defect 5): a campaign whose list starts with thousands of contacts
 * outside their window must still call the few inside it at once. Contacts are stored due at
 * their next opening, so the scheduler's first turns find the callable ones whatever lies before
 * them. Counted in scheduler turns, not seconds (no timing assertion).
 */

const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);

describe.each(['sqlite', 'postgres'] as StoreKind[])('due contacts on %s', (kind) => {
  let handle: TestStoreHandle | undefined;

  afterEach(async () => {
    await handle?.dispose();
    handle = undefined;
  });

  it('claims the callable contacts behind 2,000 closed ones in the first turns', async () => {
    handle = await openTestStore(kind);
    const { store } = handle;
    const owner = await createCallOwner(store, { account: { name: 'hol', maxLiveCalls: 50 } });
    await store.numbers.add({ accountId: owner.account.id, number: '+15550009999', route: 'sandbox' });
    let nowMs = Date.now();
    // A window three hours ahead of UTC: shut for UTC contacts, open in UTC+3 (Etc/GMT-3).
    const window = { start: hhmm(nowMs + 3 * 3_600_000), end: hhmm(nowMs + 4 * 3_600_000) };
    const closed = Array.from({ length: 2_000 }, (_, index) => ({
      to_number: `+1555020${String(index).padStart(5, '0')}`,
      time_zone: 'UTC',
    }));
    const open = Array.from({ length: 10 }, (_, index) => ({
      to_number: `+1555030${String(index).padStart(5, '0')}`,
      time_zone: 'Etc/GMT-3',
    }));
    const campaign = await createCampaign(
      store,
      { account: owner.account, apiKeyId: owner.key.id },
      {
        agent_id: owner.agent.id,
        from_number: '+15550009999',
        calling_window: window,
        time_zone: 'UTC',
        max_concurrency: 20,
        calls_per_minute: 6_000,
      },
      { kind: 'json', contacts: [...closed, ...open] },
      () => new Date(nowMs),
    );
    const scheduler = new CampaignScheduler({
      store,
      logger: createLogger('silent'),
      wakeDispatcher: () => {},
      nowMs: () => nowMs,
    });
    for (let turn = 0; turn < 12; turn += 1) {
      const current = await store.campaigns.get(owner.account.id, campaign.id);
      await scheduler.runCampaign(current!);
      nowMs += 1_000;
    }
    const calling = await store.campaigns.listContacts(campaign.id, { limit: 100, state: 'calling' });
    expect(calling.map((contact) => contact.toNumber).sort()).toEqual(
      open.map((contact) => contact.to_number),
    );
    // The closed ones wait for their opening, each with the reason.
    const [first] = await store.campaigns.listContacts(campaign.id, { limit: 1 });
    expect(first).toMatchObject({ state: 'pending', waitingReason: 'window' });
    expect(Date.parse(first?.dueAt ?? '')).toBeGreaterThan(Date.now() + 2 * 3_600_000);
  }, 60_000);
});
