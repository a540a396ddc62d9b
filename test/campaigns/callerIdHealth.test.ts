import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { completedEventBuilder } from '../../src/calls/completedEvents.js';
import { callerIdRotation, type NumberRested } from '../../src/campaigns/callerIdRotation.js';
import { campaignResource, campaignResources } from '../../src/campaigns/campaignControl.js';
import { CampaignScheduler } from '../../src/campaigns/campaignScheduler.js';
import { createCampaign } from '../../src/campaigns/createCampaign.js';
import { editCampaign } from '../../src/campaigns/editCampaign.js';
import type { CampaignRecord } from '../../src/domain/campaigns.js';
import { AppError } from '../../src/domain/errors.js';
import { newId } from '../../src/domain/ids.js';
import type { AccountRecord, CallFinish } from '../../src/domain/records.js';
import { createLogger } from '../../src/logger.js';
import { type AnyStore, openTestStore, sqlOn, storeKinds, type TestStoreHandle } from '../helpers/stores.js';

/**
 * Issue 37, caller-ID health: each number's window of recent outcomes is kept by a trigger in the
 * transaction that finishes a call (cut to the campaign's `window_attempts`); a number answered
 * far less than the pool is rested and left out of the rotation; the last active number is never
 * rested; rests made at once by several processes neither double-rest nor rest the last number.
 */

const logger = createLogger('silent');
const pool = ['+15550007771', '+15550007772', '+15550007773'];
const health = { window_attempts: 10, min_attempts: 5, min_share_of_pool: 0.5, rest_minutes: 60 };

describe.each(storeKinds)('caller-ID health on the %s store', (kind) => {
  let handle: TestStoreHandle;
  let store: AnyStore;
  let account: AccountRecord;
  let apiKeyId = '';
  let agentId = '';

  beforeAll(async () => {
    handle = await openTestStore(kind);
    store = handle.store;
    account = await store.accounts.create({ name: 'caller ids' });
    apiKeyId = (await createApiKey(store, account.id, 'k')).record.id;
    agentId = (await createAgent(store, account.id, { name: 'A', prompt: 'p', firstMessage: 'Hello.' })).id;
    for (const number of pool) await addPhoneNumber(store, account.id, number);
  }, 60_000);

  afterAll(async () => {
    await handle?.dispose();
  });

  function newCampaign(extra: Record<string, unknown> = { caller_id_health: health }) {
    return createCampaign(
      store,
      { account, apiKeyId },
      {
        agent_id: agentId,
        caller_ids: pool,
        calling_window: { start: '00:00', end: '23:59' },
        time_zone: 'UTC',
        // Far ahead: nothing here dials; the test writes the attempts and finishes the calls itself.
        starts_at: '2099-01-01T00:00:00.000Z',
        ...extra,
      },
      { kind: 'json', contacts: [{ to_number: '+15550100001' }] },
    );
  }

  /** One attempt of `campaign` from `fromNumber`, finished answered (by a person) or unanswered. */
  async function finishedAttempt(
    writer: AnyStore,
    campaign: CampaignRecord,
    fromNumber: string,
    answered: boolean,
  ): Promise<void> {
    const callId = newId('call');
    const createdAt = new Date().toISOString();
    await writer.campaigns.recordAttempt({
      callId,
      campaignId: campaign.id,
      contactId: newId('campaignContact'),
      attempt: 1,
      createdAt,
      localHour: 10,
    });
    await writer.calls.createQueued({
      id: callId,
      accountId: account.id,
      agentId,
      apiKeyId,
      fromNumber,
      toNumber: '+15550100001',
      firstMessage: null,
      context: null,
      variables: null,
      createdAt,
    });
    const finish = answered
      ? { status: 'completed', endReason: 'callee_hangup', answeredBy: 'human' }
      : { status: 'no_answer', endReason: 'no_answer', answeredBy: null };
    const finished = await writer.calls.finish(
      callId,
      { ...finish, atIso: new Date().toISOString() } as CallFinish,
      completedEventBuilder(() => null),
    );
    expect(finished).not.toBeNull();
  }

  it('checks caller_id_health at create and PATCH: a 400 naming the field', async () => {
    const rejected = async (value: unknown) => {
      const error = await newCampaign({ caller_id_health: value }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe('validation_error');
      return (error as AppError).message;
    };
    expect(await rejected({ window_attempts: 0 })).toContain('caller_id_health.window_attempts');
    expect(await rejected({ window_attempts: 10, min_attempts: 11 })).toContain(
      'caller_id_health.min_attempts',
    );
    expect(await rejected({ min_share_of_pool: 1.5 })).toContain('caller_id_health.min_share_of_pool');
    expect(await rejected({ rest_minutes: 'soon' })).toContain('caller_id_health.rest_minutes');
    expect(await rejected({ window: 5 })).toContain('unknown field window');
    const defaults = await newCampaign({});
    expect(defaults.rules.callerIdHealth).toEqual({
      windowAttempts: 20,
      minAttempts: 10,
      minShareOfPool: 0.5,
      restMinutes: 240,
    });
    const edited = await editCampaign(store, account.id, defaults.id, { caller_id_health: health }, 'test');
    expect(edited.changes).toHaveProperty('caller_id_health');
    await expect(
      editCampaign(store, account.id, defaults.id, { caller_id_health: { rest_minutes: 0 } }, 'test'),
    ).rejects.toThrow(/caller_id_health.rest_minutes/);
    const stored = await store.campaigns.get(account.id, defaults.id);
    expect(stored?.rules.callerIdHealth).toEqual({
      windowAttempts: 10,
      minAttempts: 5,
      minShareOfPool: 0.5,
      restMinutes: 60,
    });
  });

  it('keeps each number’s last window_attempts outcomes, written as calls finish', async () => {
    const campaign = await newCampaign();
    for (let index = 0; index < 14; index += 1)
      await finishedAttempt(store, campaign, pool[0] as string, index >= 4 && index % 2 === 0);
    await finishedAttempt(store, campaign, pool[1] as string, true);
    const windows = await store.callerIdHealth.windows(campaign.id);
    const first = windows.find((row) => row.callerId === pool[0]);
    // The 14 outcomes 0000 1010101010 cut to the last 10.
    expect(first?.recent).toBe('1010101010');
    expect(windows.find((row) => row.callerId === pool[1])?.recent).toBe('1');
  }, 120_000);

  it('rests the number answered far less than the pool, and leaves it out of the rotation', async () => {
    const campaign = await newCampaign();
    for (let index = 0; index < 6; index += 1) {
      await finishedAttempt(store, campaign, pool[0] as string, false);
      await finishedAttempt(store, campaign, pool[1] as string, true);
      await finishedAttempt(store, campaign, pool[2] as string, index % 2 === 0);
    }
    const rests: NumberRested[] = [];
    const nowMs = Date.now();
    const rotation = await callerIdRotation(store, logger, campaign, nowMs, async (rested) => {
      rests.push(rested);
    });
    expect(rotation).toEqual([pool[1], pool[2]]);
    expect(rests).toHaveLength(1);
    expect(rests[0]?.number).toMatchObject({ number: pool[0], answerRate: 0, attempts: 6 });
    expect(rests[0]?.poolRate).toBeCloseTo(9 / 18);
    expect(Date.parse(rests[0]?.restedUntil as string)).toBe(nowMs + 60 * 60_000);
    // Looked at again: nothing more to rest (the rested number's window starts afresh).
    const again: NumberRested[] = [];
    expect(
      await callerIdRotation(store, logger, campaign, nowMs + 1_000, async (rested) => {
        again.push(rested);
      }),
    ).toEqual([pool[1], pool[2]]);
    expect(again).toEqual([]);
    // As the API, CLI `campaigns show` and the dashboard show the campaign.
    const shown = await campaignResource(store, campaign);
    expect(shown.caller_id_status).toEqual([
      {
        number: pool[0],
        status: 'rested',
        answer_rate: null,
        attempts: 0,
        rested_until: rests[0]?.restedUntil,
      },
      { number: pool[1], status: 'active', answer_rate: 1, attempts: 6, rested_until: null },
      { number: pool[2], status: 'active', answer_rate: 0.5, attempts: 6, rested_until: null },
    ]);
    // After the rest, it is back in the rotation.
    expect(await callerIdRotation(store, logger, campaign, nowMs + 61 * 60_000, async () => {})).toEqual(
      pool,
    );
  }, 120_000);

  it('rests made at once by several processes: one rest per number, never the last active number', async () => {
    const campaign = await newCampaign();
    // Windows for every number (a rest applies to a number that has finished calls).
    for (const number of pool) await finishedAttempt(store, campaign, number, false);
    const writers = await Promise.all(Array.from({ length: 4 }, () => handle.openAnother()));
    const nowIso = new Date().toISOString();
    const restedUntilIso = new Date(Date.now() + 3_600_000).toISOString();
    // Four processes each try to rest every number, in different orders.
    const results = await Promise.all(
      writers.flatMap((writer, process) =>
        pool.map((_, offset) => {
          const callerId = pool[(offset + process) % pool.length] as string;
          return writer.callerIdHealth
            .rest({ campaignId: campaign.id, callerId, pool, restedUntilIso, nowIso })
            .then((rested) => ({ callerId, rested }));
        }),
      ),
    );
    const rested = results.filter((result) => result.rested).map((result) => result.callerId);
    // Exactly two of the three numbers, each once; one stays active.
    expect(rested).toHaveLength(2);
    expect(new Set(rested).size).toBe(2);
    const windows = await store.callerIdHealth.windows(campaign.id);
    expect(windows.filter((row) => row.restedUntil !== null)).toHaveLength(2);
  }, 120_000);
  it('a page of campaigns reads every caller-ID window in one query, with the same output as one by one', async () => {
    const campaigns = [await newCampaign(), await newCampaign(), await newCampaign({})];
    const [first, second] = campaigns as [CampaignRecord, CampaignRecord, CampaignRecord];
    for (let index = 0; index < 6; index += 1) {
      await finishedAttempt(store, first, pool[0] as string, false);
      await finishedAttempt(store, first, pool[1] as string, true);
      await finishedAttempt(store, second, pool[2] as string, index % 3 === 0);
    }
    // One rested number, so the rows differ in more than their windows.
    await callerIdRotation(store, logger, first, Date.now(), async () => {});
    const oneByOne = await Promise.all(campaigns.map((campaign) => campaignResource(store, campaign)));
    const perCampaign = store.callerIdHealth.windows;
    let perCampaignReads = 0;
    store.callerIdHealth.windows = (campaignId: string) => {
      perCampaignReads += 1;
      return perCampaign.call(store.callerIdHealth, campaignId);
    };
    try {
      expect(await campaignResources(store, campaigns)).toEqual(oneByOne);
    } finally {
      store.callerIdHealth.windows = perCampaign;
    }
    expect(perCampaignReads).toBe(0);
    expect(oneByOne[0]?.caller_id_status?.[0]?.status).toBe('rested');
    expect(oneByOne[1]?.caller_id_status?.[2]).toMatchObject({ attempts: 6, answer_rate: 0.3333 });
    expect(oneByOne[2]?.caller_id_status?.every((row) => row.attempts === 0)).toBe(true);
    expect(await campaignResources(store, [])).toEqual([]);
  }, 120_000);

  it('the scheduler places no call from a rested number', async () => {
    const contacts = Array.from({ length: 6 }, (_, index) => ({ to_number: `+1555020000${index}` }));
    const campaign = await createCampaign(
      store,
      { account, apiKeyId },
      {
        agent_id: agentId,
        caller_ids: pool,
        calling_window: { start: '00:00', end: '23:59' },
        time_zone: 'UTC',
        max_concurrency: 20,
        calls_per_minute: 6_000,
        caller_id_health: health,
      },
      { kind: 'json', contacts },
    );
    // pool[0] never answered, the others always: it is rested at the scheduler's first attempt.
    for (let index = 0; index < 5; index += 1)
      for (const number of pool) await finishedAttempt(store, campaign, number, number !== pool[0]);
    const scheduler = new CampaignScheduler({ store, logger, wakeDispatcher: () => {} });
    // Turns until every contact is on a call (the pace, 100 a second, may hold a turn back; a
    // bounded wait, not a timing assertion).
    const deadlineMs = Date.now() + 20_000;
    while (Date.now() < deadlineMs) {
      const current = await store.campaigns.get(account.id, campaign.id);
      await scheduler.runCampaign(current as CampaignRecord);
      const calling = await store.campaigns.listContacts(campaign.id, { limit: 100, state: 'calling' });
      if (calling.length === contacts.length) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const rows = (await sqlOn(
      store,
      "SELECT from_number FROM calls WHERE to_number LIKE '+1555020000%'",
    )) as {
      from_number: string;
    }[];
    expect(rows).toHaveLength(contacts.length);
    expect(new Set(rows.map((row) => row.from_number))).toEqual(new Set([pool[1], pool[2]]));
    const rested = (await store.callerIdHealth.windows(campaign.id)).find((row) => row.callerId === pool[0]);
    expect(rested?.restedUntil).not.toBeNull();
  }, 120_000);
});
