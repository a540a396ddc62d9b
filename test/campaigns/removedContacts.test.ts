import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { createCampaign } from '../../src/campaigns/createCampaign.js';
import type { CampaignRecord } from '../../src/domain/campaigns.js';
import { openTestStore, sqlOn, storeKinds, type TestStoreHandle } from '../helpers/stores.js';

/**
 * Issue 37, removing a contact that is on a call: its call goes on, and when the call is settled
 * the contact is never retried — where its retry rules would have it wait for another attempt it
 * ends as canceled; a contact not removed waits for its retry as before. And a removed contact is
 * never claimed, whatever its state.
 */

describe.each(storeKinds)('removed contacts on the %s store', (kind) => {
  let handle: TestStoreHandle;
  let campaign: CampaignRecord;

  beforeAll(async () => {
    handle = await openTestStore(kind);
    const { store } = handle;
    const account = await store.accounts.create({ name: 'removal' });
    const key = await createApiKey(store, account.id, 'k');
    const agent = await createAgent(store, account.id, { name: 'A', prompt: 'p', firstMessage: 'Hello.' });
    await addPhoneNumber(store, account.id, '+15550009999');
    campaign = await createCampaign(
      store,
      { account, apiKeyId: key.record.id },
      {
        agent_id: agent.id,
        from_number: '+15550009999',
        calling_window: { start: '00:00', end: '23:59' },
        time_zone: 'UTC',
        retry: { busy: { after_minutes: 5, max_attempts: 3 } },
      },
      { kind: 'json', contacts: [{ to_number: '+12125550140' }, { to_number: '+12125550141' }] },
    );
  }, 60_000);

  afterAll(async () => {
    await handle?.dispose();
  });

  it('a contact removed on its call ends canceled instead of retrying; one not removed retries', async () => {
    const { store } = handle;
    const nowIso = new Date().toISOString();
    // Both on a call (as a claim leaves them), each with its own call id.
    await sqlOn(
      store,
      "UPDATE campaign_contacts SET state = 'calling', attempts = 1, due_at = NULL, call_id = 'call_' || position, claimed_at = ? WHERE campaign_id = ?",
      [nowIso, campaign.id],
    );
    const [onCall, kept] = await store.campaigns.listContacts(campaign.id, { limit: 10 });
    const removed = await store.campaignContactEdits.removeContacts(
      campaign.id,
      { contactIds: [onCall?.id as string], numbers: [] },
      nowIso,
    );
    expect(removed).toEqual([{ id: onCall?.id, toNumber: '+12125550140', was: 'calling' }]);
    const retryAt = new Date(Date.now() + 300_000).toISOString();
    for (const contact of [onCall, kept])
      expect(
        await store.campaigns.settle(
          contact!,
          { state: 'retry_wait', dueAtIso: retryAt, outcome: 'busy' },
          nowIso,
        ),
      ).toBe(true);
    const [after, other] = await store.campaigns.listContacts(campaign.id, { limit: 10 });
    expect(after).toMatchObject({ state: 'canceled', dueAt: null, lastOutcome: 'busy' });
    expect(after?.removedAt).not.toBeNull();
    expect(other).toMatchObject({ state: 'retry_wait', dueAt: retryAt, removedAt: null });
  });

  it('never claims a removed contact', async () => {
    const { store } = handle;
    // Made due again behind the removal's back: the claim itself still refuses it.
    await sqlOn(
      store,
      "UPDATE campaign_contacts SET state = 'pending', due_at = ?, claimed_at = NULL WHERE campaign_id = ?",
      ['2000-01-01T00:00:00.000Z', campaign.id],
    );
    const contacts = await store.campaigns.listContacts(campaign.id, { limit: 10 });
    const nowIso = new Date().toISOString();
    const claim = (contact: (typeof contacts)[number], callId: string) =>
      store.campaigns.claimContact(campaign, contact, {
        callId,
        nowIso,
        claimedAtIso: nowIso,
        spacingSinceIso: '2000-01-01T00:00:00.000Z',
        dayAgoIso: new Date(Date.now() - 86_400_000).toISOString(),
      });
    expect(await claim(contacts[0]!, 'call_x0')).toBe(false);
    expect(await claim(contacts[1]!, 'call_x1')).toBe(true);
  });
});
