import { afterEach, describe, expect, it } from 'vitest';
import { describeContact, describeContacts } from '../../src/campaigns/campaignControl.js';
import { CampaignScheduler } from '../../src/campaigns/campaignScheduler.js';
import { createCampaign } from '../../src/campaigns/createCampaign.js';
import { editCampaign } from '../../src/campaigns/editCampaign.js';
import { parseCampaignCsv } from '../../src/domain/campaignCsv.js';
import type { CampaignRecord } from '../../src/domain/campaigns.js';
import { newId } from '../../src/domain/ids.js';
import { createLogger } from '../../src/logger.js';
import { createCallOwner, openTestStore, type StoreKind, type TestStoreHandle } from '../helpers/stores.js';

/**
 * Issue 37's campaign rules on both stores, through the real scheduler and store: caps per hour
 * and per day (counted in the claim itself, so concurrent claims cannot overshoot), holiday
 * calendars in the callee's zone, and contact priority. The scheduler's clock is moved by hand;
 * counted in turns, no timing assertion.
 */

const hourMs = 3_600_000;
const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
const callerId = '+15550009999';

describe.each(['sqlite', 'postgres'] as StoreKind[])('campaign rules on %s', (kind) => {
  let handle: TestStoreHandle | undefined;

  afterEach(async () => {
    await handle?.dispose();
    handle = undefined;
  });

  async function setUp(settings: Record<string, unknown>, contacts: unknown, startMs: number) {
    handle = await openTestStore(kind);
    const { store } = handle;
    const owner = await createCallOwner(store, { account: { name: 'rules', maxLiveCalls: 50 } });
    await store.numbers.add({ accountId: owner.account.id, number: callerId, route: 'sandbox' });
    const caller = { account: owner.account, apiKeyId: owner.key.id };
    const campaign = await createCampaign(
      store,
      caller,
      {
        agent_id: owner.agent.id,
        from_number: callerId,
        time_zone: 'UTC',
        max_concurrency: 50,
        calls_per_minute: 6_000,
        max_daily_attempts: 20,
        ...settings,
      },
      { kind: 'json', contacts },
      () => new Date(startMs),
    );
    return { store, owner, campaign };
  }

  function schedulerAt(clock: { nowMs: number }) {
    return new CampaignScheduler({
      store: handle!.store,
      logger: createLogger('silent'),
      wakeDispatcher: () => {},
      nowMs: () => clock.nowMs,
    });
  }

  async function turns(
    scheduler: CampaignScheduler,
    campaign: CampaignRecord,
    count: number,
    clock: { nowMs: number },
  ) {
    for (let turn = 0; turn < count; turn += 1) {
      const current = await handle!.store.campaigns.get(campaign.accountId, campaign.id);
      await scheduler.runCampaign(current!);
      clock.nowMs += 1_000;
    }
  }

  const numbers = (count: number, prefix = '+1555040') =>
    Array.from({ length: count }, (_, index) => ({
      to_number: `${prefix}${String(index).padStart(4, '0')}`,
      time_zone: 'UTC',
    }));

  it('keeps max_calls_per_hour and max_calls_per_day, and says which cap a due contact waits for', async () => {
    const clock = { nowMs: Date.now() };
    // Open from an hour ago for eight hours (UTC): the clock moves about 1 h 20 min.
    const window = { start: hhmm(clock.nowMs - hourMs), end: hhmm(clock.nowMs + 7 * hourMs) };
    const { store, campaign } = await setUp(
      { calling_window: window, max_calls_per_hour: 3, max_calls_per_day: 4 },
      numbers(8),
      clock.nowMs,
    );
    expect(campaign.rules).toMatchObject({ maxCallsPerHour: 3, maxCallsPerDay: 4 });
    const scheduler = schedulerAt(clock);
    await turns(scheduler, campaign, 10, clock);
    const calling = () => store.campaigns.listContacts(campaign.id, { limit: 100, state: 'calling' });
    expect(await calling()).toHaveLength(3);
    const waiting = async () => {
      const current = (await store.campaigns.get(campaign.accountId, campaign.id))!;
      const pending = await store.campaigns.listContacts(campaign.id, { limit: 100, state: 'pending' });
      // The API reads the caps against the real clock; the claims were made on the test's.
      return (await describeContacts(store, current, pending)).map((contact) => contact.waiting_reason);
    };
    expect(new Set(await waiting())).toEqual(new Set(['hourly_cap']));
    // An hour later the hourly cap has room again, but the day allows one more call only.
    clock.nowMs += hourMs + 5_000;
    await turns(scheduler, campaign, 10, clock);
    expect(await calling()).toHaveLength(4);
    const day = await store.campaignRules.claimsSince(
      campaign.id,
      new Date(clock.nowMs - 86_400_000).toISOString(),
    );
    expect(day.count).toBe(4);
    // Raised by a live edit: effective at the next claim.
    await editCampaign(store, campaign.accountId, campaign.id, { max_calls_per_day: null }, 'cli');
    await turns(scheduler, campaign, 10, clock);
    // The hourly cap still holds: one claim in the last hour, two more.
    expect(await calling()).toHaveLength(6);
  }, 60_000);

  it('counts the caps in the claim: ten concurrent claims under an hourly cap of 3 start 3', async () => {
    const nowMs = Date.now();
    const window = { start: hhmm(nowMs - hourMs), end: hhmm(nowMs + 7 * hourMs) };
    const { store, campaign } = await setUp(
      { calling_window: window, max_calls_per_hour: 3 },
      numbers(10, '+1555050'),
      nowMs,
    );
    const contacts = await store.campaigns.listContacts(campaign.id, { limit: 100 });
    const nowIso = new Date(nowMs).toISOString();
    const results = await Promise.all(
      contacts.map((contact) =>
        store.campaigns.claimContact(campaign, contact, {
          callId: newId('call'),
          nowIso,
          claimedAtIso: nowIso,
          // No pace between these claims: only the cap can refuse them.
          spacingSinceIso: new Date(nowMs + hourMs).toISOString(),
          dayAgoIso: new Date(nowMs - 86_400_000).toISOString(),
          hourAgoIso: new Date(nowMs - hourMs).toISOString(),
        }),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(3);
    expect(await store.campaigns.countCalling(campaign.id)).toBe(3);
    // A released claim (its call could not be written) gives its place back.
    const [claimed] = await store.campaigns.listContacts(campaign.id, { limit: 1, state: 'calling' });
    await store.campaigns.releaseClaim(
      { ...claimed!, state: 'pending', attempts: 0, callId: null },
      claimed!.callId!,
      nowIso,
    );
    expect(
      (await store.campaignRules.claimsSince(campaign.id, new Date(nowMs - hourMs).toISOString())).count,
    ).toBe(2);
  }, 60_000);

  it('skips holidays in the callee zone: custom dates for all, built-in ones by the number country', async () => {
    // 4 July 2026, 15:00 UTC: 11:00 in New York, 17:00 in Paris.
    const clock = { nowMs: Date.parse('2026-07-04T15:00:00Z') };
    const { store, campaign } = await setUp(
      {
        calling_window: { start: '09:00', end: '20:00' },
        holidays: { countries: ['US', 'FR'], dates: ['2026-07-05'] },
      },
      [
        { to_number: '+12125550100', time_zone: 'America/New_York' },
        { to_number: '+33612345678', time_zone: 'Europe/Paris' },
      ],
      clock.nowMs,
    );
    const [us, fr] = await store.campaigns.listContacts(campaign.id, { limit: 10 });
    // Independence Day for the US number; the custom 5 July (a Sunday) for both: Monday 6 July 09:00.
    expect(us).toMatchObject({ waitingReason: 'holiday', dueAt: '2026-07-06T13:00:00.000Z' });
    expect(fr).toMatchObject({ state: 'pending', waitingReason: null });
    const scheduler = schedulerAt(clock);
    await turns(scheduler, campaign, 3, clock);
    expect(
      (await store.campaigns.listContacts(campaign.id, { limit: 10, state: 'calling' })).map(
        (c) => c.toNumber,
      ),
    ).toEqual(['+33612345678']);
    const current = (await store.campaigns.get(campaign.accountId, campaign.id))!;
    // Read on the test's clock (the real one is past these dates).
    const described = describeContact(us!, [], { campaign: current, nowMs: clock.nowMs, callingCount: 1 });
    expect(described).toMatchObject({
      waiting_reason: 'holiday',
      next_attempt_at: '2026-07-06T13:00:00.000Z',
    });
    // Removing the holidays releases the contact held for one.
    await editCampaign(store, campaign.accountId, campaign.id, { holidays: null }, 'cli');
    const [released] = await store.campaigns.listContacts(campaign.id, { limit: 1 });
    expect(released).toMatchObject({ waitingReason: null });
    expect(Date.parse(released!.dueAt!)).toBeLessThanOrEqual(Date.now());
  }, 60_000);

  it('moves a due contact past a holiday found at claim time (a live edit adds the day)', async () => {
    const clock = { nowMs: Date.parse('2026-12-24T10:00:00Z') };
    const { store, campaign } = await setUp(
      { calling_window: { start: '09:00', end: '17:00' } },
      [{ to_number: '+1555060000', time_zone: 'UTC' }],
      clock.nowMs,
    );
    await editCampaign(
      store,
      campaign.accountId,
      campaign.id,
      { holidays: { dates: ['12-24', '12-25'] } },
      'cli',
    );
    await turns(schedulerAt(clock), campaign, 2, clock);
    const [contact] = await store.campaigns.listContacts(campaign.id, { limit: 1 });
    expect(contact).toMatchObject({
      state: 'pending',
      waitingReason: 'holiday',
      dueAt: '2026-12-26T09:00:00.000Z',
    });
  }, 60_000);

  it('calls higher priorities first among due contacts, from JSON and from a CSV column', async () => {
    const clock = { nowMs: Date.now() };
    const window = { start: hhmm(clock.nowMs - hourMs), end: hhmm(clock.nowMs + 7 * hourMs) };
    const priorities = [0, 5, -1, 5, 10];
    const { store, campaign } = await setUp(
      { calling_window: window },
      priorities.map((priority, index) => ({
        to_number: `+155507000${index}`,
        time_zone: 'UTC',
        ...(priority !== 0 ? { priority } : {}),
      })),
      clock.nowMs,
    );
    const scheduler = schedulerAt(clock);
    const order: number[] = [];
    for (let turn = 0; turn < 5; turn += 1) {
      await turns(scheduler, campaign, 1, clock);
      const calling = await store.campaigns.listContacts(campaign.id, { limit: 10, state: 'calling' });
      const started = calling.find((contact) => !order.includes(contact.position));
      order.push(started!.position);
    }
    expect(order.map((position) => priorities[position])).toEqual([10, 5, 5, 0, -1]);
    expect(order).toEqual([4, 1, 3, 0, 2]);

    const csv = await parseCampaignCsv(
      Buffer.from(
        'to_number,time_zone,priority\n+15550800001,UTC,3\n+15550800002,UTC,\n+15550800003,UTC,high\n',
      ),
    );
    const owner = { account: (await store.accounts.get(campaign.accountId))!, apiKeyId: campaign.apiKeyId };
    const settings = {
      agent_id: campaign.agentId,
      from_number: callerId,
      calling_window: window,
      time_zone: 'UTC',
    };
    await expect(createCampaign(store, owner, settings, { kind: 'csv', file: csv })).rejects.toMatchObject({
      code: 'validation_error',
      rows: [{ line: 4, message: expect.stringContaining('priority must be a whole number') }],
    });
    const good = await parseCampaignCsv(Buffer.from('to_number,priority\n+15550800001,3\n+15550800002,\n'));
    const fromCsv = await createCampaign(store, owner, settings, { kind: 'csv', file: good });
    const stored = await store.campaigns.listContacts(fromCsv.id, { limit: 10 });
    expect(stored.map((contact) => contact.priority)).toEqual([3, 0]);
  }, 60_000);

  it('refuses bad rules with a 400 naming the field', async () => {
    const nowMs = Date.now();
    const window = { start: '09:00', end: '17:00' };
    const { store, campaign } = await setUp({ calling_window: window }, numbers(1, '+1555090'), nowMs);
    const edit = (body: unknown) => editCampaign(store, campaign.accountId, campaign.id, body, 'cli');
    for (const [body, field] of [
      [{ max_calls_per_hour: 0 }, 'max_calls_per_hour'],
      [{ max_calls_per_day: 'many' }, 'max_calls_per_day'],
      [{ holidays: { countries: ['XX'] } }, 'holidays.countries'],
      [{ holidays: { dates: ['2026-02-30'] } }, 'holidays.dates'],
      [{ holidays: { when: [] } }, 'holidays has an unknown field'],
    ] as const) {
      await expect(edit(body)).rejects.toMatchObject({
        code: 'validation_error',
        message: expect.stringContaining(field),
      });
    }
    await expect(
      createCampaign(
        store,
        { account: (await store.accounts.get(campaign.accountId))!, apiKeyId: campaign.apiKeyId },
        { agent_id: campaign.agentId, from_number: callerId, calling_window: window, time_zone: 'UTC' },
        { kind: 'json', contacts: [{ to_number: '+15550900001', priority: 1.5 }] },
      ),
    ).rejects.toMatchObject({ rows: [{ index: 0, message: expect.stringContaining('priority') }] });
  }, 60_000);
});
