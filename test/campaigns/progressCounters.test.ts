import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { buildApp } from '../../src/api/app.js';
import { parseRatePolicy, type RatePolicy } from '../../src/domain/rateLimit.js';
import { PostgresRateLimiter } from '../../src/limits/postgresRateLimiter.js';
import { MemoryRateLimiter } from '../../src/limits/rateLimiter.js';
import { createLogger } from '../../src/logger.js';
import { PostgresStore } from '../../src/store/postgres/postgresStore.js';
import { type AnyStore, openTestStore, sqlOn, storeKinds, type TestStoreHandle } from '../helpers/stores.js';

/**
 * Issue 34, finding 3: `GET /v1/campaigns` recounted every contact of every campaign it showed
 * (4 campaigns of 100k contacts: one account's allowed GETs held the SQLite service 26 s). A
 * campaign's progress is now counters that triggers keep in the transaction that changes a contact;
 * a listing reads one row per campaign. On each store: the listing answers from the counters, the
 * counters agree with a recount after concurrent writers and after an erasure, and a listing is
 * rate-limited like any read.
 */

const contactsPerCampaign = 3_000;

function policy(text: string): RatePolicy {
  return parseRatePolicy(text) as RatePolicy;
}

describe.each(storeKinds)('campaign progress counters on the %s store', (kind) => {
  let handle: TestStoreHandle;
  let app: FastifyInstance;
  let url = '';
  let key = '';
  let accountId = '';
  let agentId = '';

  beforeAll(async () => {
    handle = await openTestStore(kind);
    const store = handle.store;
    app = await buildApp({
      store,
      config: {
        ratePolicy: policy('100000/10s'),
        authFailurePolicy: policy('100000/60s'),
        publicUrl: 'http://localhost',
        trustProxy: false,
      },
      logger: createLogger('silent'),
      limiter: store instanceof PostgresStore ? new PostgresRateLimiter(store.pool) : new MemoryRateLimiter(),
      version: 'test',
    });
    url = await app.listen({ port: 0, host: '127.0.0.1' });
    const account = await store.accounts.create({ name: 'counted' });
    accountId = account.id;
    ({ key } = await createApiKey(store, accountId, 'k'));
    agentId = (await createAgent(store, accountId, { name: 'A', prompt: 'p', firstMessage: 'Hello.' })).id;
    await addPhoneNumber(store, accountId, '+15550009999');
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await handle?.dispose();
  });

  const api = async (method: string, path: string, body?: unknown, apiKey = key) => {
    const response = await fetch(`${url}/v1${path}`, {
      method,
      headers: { 'X-API-Key': apiKey, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as unknown };
  };

  async function createCampaignOf(prefix: string): Promise<string> {
    const contacts = Array.from({ length: contactsPerCampaign }, (_, index) => ({
      to_number: `+1555${prefix}${String(index).padStart(6, '0')}`,
    }));
    const created = await api('POST', '/campaigns', {
      name: `c${prefix}`,
      agent_id: agentId,
      from_number: '+15550009999',
      calling_window: { start: '00:00', end: '23:59' },
      time_zone: 'UTC',
      // Far ahead: the test moves contacts itself; nothing here dials.
      starts_at: '2099-01-01T00:00:00.000Z',
      contacts,
    });
    expect(created.status).toBe(201);
    return (created.body as { campaign_id: string }).campaign_id;
  }

  async function recount(store: AnyStore, campaignId: string) {
    const rows = (await sqlOn(
      store,
      'SELECT state, last_outcome, COUNT(*) AS n FROM campaign_contacts WHERE campaign_id = ? GROUP BY state, last_outcome',
      [campaignId],
    )) as { state: string; last_outcome: string | null; n: number | string }[];
    const states: Record<string, number> = {};
    const outcomes: Record<string, number> = {};
    for (const row of rows) {
      states[row.state] = (states[row.state] ?? 0) + Number(row.n);
      if (row.last_outcome) outcomes[row.last_outcome] = (outcomes[row.last_outcome] ?? 0) + Number(row.n);
    }
    return { states, outcomes };
  }

  it('counters agree with a recount after concurrent writers, and after an erasure', async () => {
    const campaignId = await createCampaignOf('01');
    expect(await handle.store.campaigns.progress(campaignId)).toEqual({
      states: { pending: contactsPerCampaign },
      outcomes: {},
    });
    // Four processes' stores move disjoint contacts back and forth at once, one change per
    // statement (as the scheduler and the call workers do), some through several states.
    const writers = await Promise.all([1, 2, 3, 4].map(() => handle.openAnother()));
    const moves: [string, string | null][] = [
      ['calling', null],
      ['retry_wait', 'busy'],
      ['calling', 'busy'],
      ['done', 'answered'],
    ];
    await Promise.all(
      writers.map(async (writer, index) => {
        for (let step = 0; step < 40; step += 1) {
          const position = index * 40 + step;
          const route = moves.slice(0, 1 + (position % moves.length));
          for (const [state, outcome] of route) {
            await sqlOn(
              writer,
              'UPDATE campaign_contacts SET state = ?, last_outcome = ? WHERE campaign_id = ? AND position = ?',
              [state, outcome, campaignId, position],
            );
          }
        }
      }),
    );
    const counted = await handle.store.campaigns.progress(campaignId);
    expect(counted).toEqual(await recount(handle.store, campaignId));
    expect(counted.states.done).toBe(40);
    expect(counted.outcomes).toEqual({ busy: 80, answered: 40 });

    // An erasure deletes the number's contacts: the counters follow, in the same transaction.
    const erased = await api('POST', '/erasures', { number: '+155501002999' });
    expect(erased.status).toBe(200);
    expect((erased.body as { campaign_contacts_erased: number }).campaign_contacts_erased).toBe(1);
    const afterErasure = await handle.store.campaigns.progress(campaignId);
    expect(afterErasure).toEqual(await recount(handle.store, campaignId));
    expect(Object.values(afterErasure.states).reduce((sum, count) => sum + (count ?? 0), 0)).toBe(
      contactsPerCampaign - 1,
    );
    // Issue 37, defect 4: the campaign's contact_count follows (it said 2 while progress added up to 1).
    const shown = (await api('GET', `/campaigns/${campaignId}`)).body as {
      contact_count: number;
      progress: Record<string, unknown>;
    };
    const shownTotal = Object.values(shown.progress)
      .filter((count): count is number => typeof count === 'number')
      .reduce((sum, count) => sum + count, 0);
    expect(shown.contact_count).toBe(contactsPerCampaign - 1);
    expect(shownTotal).toBe(shown.contact_count);
  }, 120_000);

  it('a listing is rate-limited like any read', async () => {
    const limited = await handle.store.accounts.create({ name: 'limited', ratePolicy: policy('5/60s') });
    const { key: limitedKey } = await createApiKey(handle.store, limited.id, 'k');
    const statuses: number[] = [];
    for (let index = 0; index < 7; index += 1)
      statuses.push((await api('GET', '/campaigns', undefined, limitedKey)).status);
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses.slice(5)).toEqual([429, 429]);
  });

  it('the listing answers from the counters, not by counting contacts', async () => {
    const campaignId = await createCampaignOf('02');
    const listed = await api('GET', '/campaigns?limit=100');
    const shown = (listed.body as { data: { campaign_id: string; progress: unknown }[] }).data.find(
      (campaign) => campaign.campaign_id === campaignId,
    );
    expect(JSON.stringify(shown?.progress)).toContain(`"pending":${contactsPerCampaign}`);
    // Behind the counters' back (their triggers dropped in this throwaway database), the contact
    // rows go: a listing that counted rows would now show none.
    for (const trigger of ['campaign_contacts_count_delete', 'campaign_contacts_count_update'])
      await sqlOn(
        handle.store,
        `DROP TRIGGER IF EXISTS ${trigger}${kind === 'postgres' ? ' ON campaign_contacts' : ''}`,
      );
    await sqlOn(handle.store, 'DELETE FROM campaign_contacts WHERE campaign_id = ?', [campaignId]);
    const again = await api('GET', '/campaigns?limit=100');
    const shownAgain = (again.body as { data: { campaign_id: string; progress: unknown }[] }).data.find(
      (campaign) => campaign.campaign_id === campaignId,
    );
    expect(JSON.stringify(shownAgain?.progress)).toContain(`"pending":${contactsPerCampaign}`);
  }, 120_000);
});
