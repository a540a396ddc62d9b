import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { campaigns as campaignVerbs } from '../../src/cli/campaignCommands.js';
import { CallwrightClient, ValidationError } from '../../src/client/index.js';
import { callFixture, startFullService } from '../helpers/fullService.js';
import { jsonApi } from '../helpers/http.js';
import { dropTestSchema, newTestSchema, storeEnv } from '../helpers/postgres.js';
import { eventually } from '../webhooks/harness.js';

/**
 * Campaign rules end to end on the sandbox, both stores: a campaign created over HTTP with an
 * hourly cap and priorities calls the highest priority first, shows the others waiting for the
 * cap, takes a raised cap from the typed client and holidays from the command line, and refuses
 * bad rules with a 400 naming the field.
 */

interface ContactView {
  to_number: string;
  priority: number;
  state: string;
  waiting_reason: string | null;
  calls: { call_id: string }[];
}

describe.each(['sqlite', 'postgres'] as const)('campaign rules over the API on %s', (storeKind) => {
  let service: Awaited<ReturnType<typeof startFullService>>;
  const schema = newTestSchema();

  beforeAll(async () => {
    service = await startFullService(
      { ...storeEnv(storeKind, schema) },
      { campaignScheduler: { tickMs: 100, claimGraceMs: 1_000 } },
    );
  });

  afterAll(async () => {
    await service?.dispose();
    if (storeKind === 'postgres') await dropTestSchema(schema);
  });

  it('caps, priorities and holidays through the API, the client and the command line', async () => {
    const fixture = await callFixture(service, { maxDurationS: 2 });
    const api = jsonApi(
      () => service.url,
      () => fixture.key,
    );
    const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
    const suffix = storeKind === 'sqlite' ? 1 : 2;
    const [low, high, middle] = [1, 2, 3].map((n) => `+155501000072${n}${suffix}`);
    const created = await api('/campaigns', {
      method: 'POST',
      body: {
        agent_id: fixture.agentId,
        from_number: fixture.from,
        calling_window: { start: hhmm(Date.now() - 3_600_000), end: hhmm(Date.now() + 6 * 3_600_000) },
        time_zone: 'UTC',
        calls_per_minute: 600,
        max_calls_per_hour: 1,
        contacts: [
          { to_number: low, time_zone: 'UTC' },
          { to_number: high, time_zone: 'UTC', priority: 7 },
          { to_number: middle, time_zone: 'UTC', priority: 3 },
        ],
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      max_calls_per_hour: 1,
      max_calls_per_day: null,
      holidays: { countries: [], dates: [] },
    });
    const campaignId = (created.body as { campaign_id: string }).campaign_id;
    const contacts = async () =>
      ((await api(`/campaigns/${campaignId}/contacts`)).body as { data: ContactView[] }).data;
    const byNumber = async (number: string | undefined) =>
      (await contacts()).find((contact) => contact.to_number === number);
    // The highest priority is called first; the others wait for the hourly cap.
    await eventually(
      async () => ((await byNumber(high))?.calls.length === 1 ? true : undefined),
      20_000,
      'the priority-7 contact called',
    );
    const waiting = await contacts();
    expect(waiting.find((contact) => contact.to_number === low)).toMatchObject({
      priority: 0,
      calls: [],
      waiting_reason: 'hourly_cap',
    });
    expect(waiting.find((contact) => contact.to_number === middle)).toMatchObject({
      priority: 3,
      calls: [],
      waiting_reason: 'hourly_cap',
    });

    // Bad rules: 400, the field named, nothing changed.
    const bad = await api(`/campaigns/${campaignId}`, {
      method: 'PATCH',
      body: { holidays: { countries: ['ZZ'] } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({
      error: { code: 'validation_error', message: expect.stringContaining('holidays.countries') },
    });
    const client = new CallwrightClient({ apiKey: fixture.key, baseUrl: service.url });
    await expect(client.campaigns.update(campaignId, { max_calls_per_hour: 0 })).rejects.toBeInstanceOf(
      ValidationError,
    );

    // A raised cap from the typed client: the next in priority order is called, not the first row.
    const raised = await client.campaigns.update(campaignId, { max_calls_per_hour: 2 });
    expect(raised.max_calls_per_hour).toBe(2);
    await eventually(
      async () => ((await byNumber(middle))?.calls.length === 1 ? true : undefined),
      20_000,
      'the priority-3 contact called after the raise',
    );
    expect(await byNumber(low)).toMatchObject({ calls: [], waiting_reason: 'hourly_cap' });

    // Holidays from the command line (every day of the year as custom dates is refused: at most 366,
    // so today alone here), and the cap removed: the last contact waits for the holiday instead.
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const out: string[] = [];
    await campaignVerbs.edit?.(
      {
        store: service.store,
        json: true,
        accountId: fixture.accountId,
        out: { stdout: (text) => out.push(text), stderr: (text) => out.push(text) },
        secretBox: () => Promise.reject(new Error('not needed')),
      },
      [campaignId, '--per-hour', 'none', '--holidays', 'US', '--holiday-dates', `${today},${tomorrow}`],
    );
    expect(JSON.parse(out.join(''))).toMatchObject({
      max_calls_per_hour: null,
      holidays: { countries: ['US'], dates: [today, tomorrow] },
    });
    await eventually(
      async () => ((await byNumber(low))?.waiting_reason === 'holiday' ? true : undefined),
      20_000,
      'the last contact held for the holiday',
    );
    expect(await byNumber(low)).toMatchObject({ calls: [], state: 'pending' });
  }, 90_000);
});
