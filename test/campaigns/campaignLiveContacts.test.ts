import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { campaigns as campaignVerbs } from '../../src/cli/campaignCommands.js';
import { callingWindowOf } from '../../src/domain/callingWindow.js';
import { callFixture, startFullService } from '../helpers/fullService.js';
import { jsonApi, request } from '../helpers/http.js';
import { dropTestSchema, newTestSchema, storeEnv } from '../helpers/postgres.js';
import { eventually } from '../webhooks/harness.js';

/**
 * Issue 37 on both stores, end to end on the sandbox carrier over real SIP: contacts added to a
 * campaign that has not started yet (JSON and CSV, checked as at creation), the campaign run, its
 * results exported (CSV and JSON Lines, streamed) and its figures read; an erasure that leaves the
 * counts adding up (defect 4); and contacts removed from a running campaign — the one on a call is
 * not interrupted, the waiting one is never dialled.
 */

const alwaysOpen = callingWindowOf({ start: '00:00', end: '23:59' });

interface ContactView {
  contact_id: string;
  to_number: string;
  state: string;
  attempts: number;
  calls: { call_id: string; status: string | null }[];
}
interface CampaignView {
  campaign_id: string;
  status: string;
  contact_count: number;
  progress: Record<string, number | Record<string, number>>;
}

function progressTotal(campaign: CampaignView): number {
  return Object.values(campaign.progress)
    .filter((value): value is number => typeof value === 'number')
    .reduce((sum, count) => sum + count, 0);
}

describe.each(['sqlite', 'postgres'] as const)('live contacts, results and figures on %s', (storeKind) => {
  let service: Awaited<ReturnType<typeof startFullService>>;
  const schema = newTestSchema();
  const tail = storeKind === 'sqlite' ? '1' : '2';

  beforeAll(async () => {
    service = await startFullService(storeEnv(storeKind, schema), {
      campaignScheduler: { tickMs: 100, claimGraceMs: 1_000 },
    });
  });

  afterAll(async () => {
    await service?.dispose();
    if (storeKind === 'postgres') await dropTestSchema(schema);
  });

  it('adds contacts (JSON and CSV), runs them, exports the results and the figures; erasure keeps counts adding up', async () => {
    const fixture = await callFixture(service, { maxDurationS: 2 });
    const api = jsonApi(
      () => service.url,
      () => fixture.key,
    );
    const person = `+15550100001010${tail}`;
    const tokyoPerson = `+15550100001020${tail}`;
    const busy = `+15550100002010${tail}`;
    const created = await api('/campaigns', {
      method: 'POST',
      body: {
        agent_id: fixture.agentId,
        from_number: fixture.from,
        calling_window: alwaysOpen,
        time_zone: 'UTC',
        max_concurrency: 3,
        calls_per_minute: 600,
        // A few seconds ahead: the contacts are added before the first claim.
        starts_at: new Date(Date.now() + 4_000).toISOString(),
        contacts: [{ to_number: person }],
      },
    });
    expect(created.status).toBe(201);
    const campaignId = (created.body as CampaignView).campaign_id;

    // A CSV with one bad row and one number the campaign has: nothing is added, each row named.
    const csvAdd = (text: string) =>
      request(`${service.url}/v1/campaigns/${campaignId}/contacts`, {
        method: 'POST',
        headers: { 'X-API-Key': fixture.key, 'Content-Type': 'text/csv' },
        body: text,
      });
    const refused = await csvAdd(
      `to_number,time_zone\n${tokyoPerson},Asia/Tokyo\n12345,UTC\n${person},UTC\n`,
    );
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      error: {
        code: 'validation_error',
        rows: [
          { line: 3, message: expect.stringMatching(/to_number/) },
          { line: 4, message: 'to_number is already in the campaign' },
        ],
      },
    });
    const added = await csvAdd(`to_number,time_zone\n${tokyoPerson},Asia/Tokyo\n`);
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({ added: 1, first_position: 1, campaign: { contact_count: 2 } });
    const jsonAdded = await api(`/campaigns/${campaignId}/contacts`, {
      method: 'POST',
      body: { contacts: [{ to_number: busy }] },
    });
    expect(jsonAdded.body).toMatchObject({ added: 1, first_position: 2, campaign: { contact_count: 3 } });
    const badJson = await api(`/campaigns/${campaignId}/contacts`, {
      method: 'POST',
      body: { contacts: [] },
    });
    expect(badJson.status).toBe(400);
    expect((badJson.body as { error: { message: string } }).error.message).toMatch(/contacts/);

    const done = await eventually(
      async () => {
        const campaign = (await api(`/campaigns/${campaignId}`)).body as CampaignView;
        return campaign.status === 'completed' ? campaign : undefined;
      },
      40_000,
      'the campaign completed',
    );
    expect(done).toMatchObject({ contact_count: 3, progress: { done: 3 } });
    // Added after completion: refused.
    const late = await api(`/campaigns/${campaignId}/contacts`, {
      method: 'POST',
      body: { contacts: [{ to_number: `+15550100001030${tail}` }] },
    });
    expect(late.status).toBe(409);

    const contacts = ((await api(`/campaigns/${campaignId}/contacts`)).body as { data: ContactView[] }).data;
    const csv = await request(`${service.url}/v1/campaigns/${campaignId}/results?format=csv`, {
      headers: { 'X-API-Key': fixture.key },
    });
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    // Streamed: no length known ahead.
    expect(csv.headers['transfer-encoding']).toBe('chunked');
    const rows = parse(csv.text, { columns: true }) as Record<string, string>[];
    expect(Object.keys(rows[0] ?? {})).toEqual([
      'contact_id',
      'to_number',
      'status',
      'last_outcome',
      'attempts',
      'last_call_id',
      'last_call_duration_seconds',
      'extracted_data',
      'summary',
      'success',
      'cost_usd',
    ]);
    expect(rows.map((row) => [row.to_number, row.status, row.last_outcome, row.attempts])).toEqual([
      // A number begins with "+": neutralised against formula injection.
      [`'${person}`, 'done', 'answered', '1'],
      [`'${tokyoPerson}`, 'done', 'answered', '1'],
      [`'${busy}`, 'done', 'busy', '1'],
    ]);
    for (const row of rows) {
      const contact = contacts.find((each) => each.contact_id === row.contact_id);
      expect(row.last_call_id).toBe(contact?.calls.at(-1)?.call_id);
    }
    expect(Number(rows[0]?.last_call_duration_seconds)).toBeGreaterThan(0);
    expect(rows[2]?.last_call_duration_seconds).toBe('');

    const jsonl = await request(`${service.url}/v1/campaigns/${campaignId}/results`, {
      headers: { 'X-API-Key': fixture.key, Accept: 'application/jsonl' },
    });
    expect(jsonl.headers['content-type']).toMatch(/^application\/jsonl/);
    const lines = jsonl.text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => line.to_number)).toEqual([person, tokyoPerson, busy]);
    expect(lines[0]).toMatchObject({ status: 'done', attempts: 1, success: null, summary: null });
    const badFormat = await api(`/campaigns/${campaignId}/results?format=xml`);
    expect(badFormat.status).toBe(400);
    expect(badFormat.body).toMatchObject({ error: { code: 'validation_error' } });

    const figures = (await api(`/campaigns/${campaignId}/figures`)).body as {
      overall: Record<string, number | null>;
      by_caller_id: { caller_id: string; attempts: number }[];
      by_local_hour: { local_hour: number; attempts: number }[];
    };
    expect(figures.overall).toMatchObject({ attempts: 3, answered: 2, voicemail: 0, answer_rate: 0.6667 });
    expect(figures.overall.connected_minutes).toBeGreaterThan(0);
    expect(figures.by_caller_id).toEqual([expect.objectContaining({ caller_id: fixture.from, attempts: 3 })]);
    // The Tokyo callee's attempt counts in Tokyo's hour (UTC + 9), the others in UTC's.
    const utcHour = new Date().getUTCHours();
    const hours = figures.by_local_hour.map((row) => row.local_hour);
    expect(hours).toContain((utcHour + 9) % 24);
    expect(figures.by_local_hour.reduce((sum, row) => sum + row.attempts, 0)).toBe(3);

    // The command line writes the same export and figures (`campaigns results ID --format jsonl > file`).
    const cli = async (verb: string, args: string[]) => {
      const out: string[] = [];
      await campaignVerbs[verb]?.(
        {
          store: service.store,
          json: true,
          accountId: fixture.accountId,
          out: { stdout: (text) => out.push(text), stderr: () => undefined },
          secretBox: () => Promise.reject(new Error('not needed')),
        },
        args,
      );
      return out.join('');
    };
    expect(await cli('results', [campaignId, '--format', 'jsonl'])).toBe(jsonl.text);
    expect(await cli('results', [campaignId])).toBe(csv.text);
    expect(JSON.parse(await cli('figures', [campaignId]))).toEqual(figures);

    // Another account sees none of it.
    const stranger = await callFixture(service);
    for (const path of ['results', 'figures']) {
      const other = await request(`${service.url}/v1/campaigns/${campaignId}/${path}`, {
        headers: { 'X-API-Key': stranger.key },
      });
      expect(other.status).toBe(404);
    }

    // Defect 4: erasing a contact's number leaves the count and the progress adding up.
    const erased = await api('/erasures', { method: 'POST', body: { number: busy } });
    expect(erased.body).toMatchObject({ campaign_contacts_erased: 1 });
    const after = (await api(`/campaigns/${campaignId}`)).body as CampaignView;
    expect(after.contact_count).toBe(2);
    expect(progressTotal(after)).toBe(after.contact_count);
    const afterCsv = await request(`${service.url}/v1/campaigns/${campaignId}/results`, {
      headers: { 'X-API-Key': fixture.key },
    });
    expect(afterCsv.text).not.toContain(busy.slice(1));
    expect((parse(afterCsv.text, { columns: true }) as unknown[]).length).toBe(2);

    const audit = (await api('/audit-log')).body as { data: { action: string; detail: unknown }[] };
    const additions = audit.data.filter((entry) => entry.action === 'campaign_contacts_added');
    expect(additions.map((entry) => entry.detail)).toEqual(
      expect.arrayContaining([
        { added: 1, first_position: 1 },
        { added: 1, first_position: 2 },
      ]),
    );
  }, 90_000);

  it('removes contacts: the one on a call is not interrupted, the waiting one is never dialled', async () => {
    const fixture = await callFixture(service, { maxDurationS: 3 });
    const api = jsonApi(
      () => service.url,
      () => fixture.key,
    );
    const onCall = `+15550100001040${tail}`;
    const removedWaiting = `+15550100001050${tail}`;
    const kept = `+15550100001060${tail}`;
    const created = await api('/campaigns', {
      method: 'POST',
      body: {
        agent_id: fixture.agentId,
        from_number: fixture.from,
        calling_window: alwaysOpen,
        time_zone: 'UTC',
        // One at a time: the others wait while the first is on its call.
        max_concurrency: 1,
        calls_per_minute: 600,
        contacts: [onCall, removedWaiting, kept].map((to_number) => ({ to_number })),
      },
    });
    const campaignId = (created.body as CampaignView).campaign_id;
    const first = await eventually(
      async () => {
        const contacts = ((await api(`/campaigns/${campaignId}/contacts`)).body as { data: ContactView[] })
          .data;
        const calling = contacts.find((contact) => contact.to_number === onCall);
        return calling?.calls[0]?.status === 'in_progress' ? calling : undefined;
      },
      20_000,
      'the first contact on its call',
    );

    const bad = await api(`/campaigns/${campaignId}/contacts/remove`, {
      method: 'POST',
      body: { contact_ids: ['nope'] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({
      error: { code: 'validation_error', message: expect.stringMatching(/contact_ids\[0\]/) },
    });
    const removed = await api(`/campaigns/${campaignId}/contacts/remove`, {
      method: 'POST',
      body: { contact_ids: [first.contact_id], to_numbers: [removedWaiting, '+15550100009999'] },
    });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({
      removed: 2,
      on_call: 1,
      unmatched: 1,
      on_call_contact_ids: [first.contact_id],
    });

    const settled = await eventually(
      async () => {
        const campaign = (await api(`/campaigns/${campaignId}`)).body as CampaignView;
        return campaign.status === 'completed' ? campaign : undefined;
      },
      30_000,
      'the campaign completed',
    );
    expect(settled).toMatchObject({ contact_count: 3, progress: { done: 2, canceled: 1 } });
    const firstCall = await service.store.calls.getById(first.calls[0]?.call_id as string);
    expect(firstCall).toMatchObject({ status: 'completed' });
    expect(firstCall?.endReason).not.toBe('canceled');
    const invited = (await service.store.sandboxInvites.list()).map((invite) => invite.toNumber);
    expect(invited).toContain(kept);
    expect(invited).not.toContain(removedWaiting);
    const rows = parse(
      (
        await request(`${service.url}/v1/campaigns/${campaignId}/results`, {
          headers: { 'X-API-Key': fixture.key },
        })
      ).text,
      { columns: true },
    ) as Record<string, string>[];
    expect(rows.map((row) => [row.status, row.attempts])).toEqual([
      ['removed', '1'],
      ['removed', '0'],
      ['done', '1'],
    ]);
    const audit = (await api('/audit-log')).body as {
      data: { action: string; detail: unknown; actor: string }[];
    };
    expect(audit.data.find((entry) => entry.action === 'campaign_contacts_removed')).toMatchObject({
      detail: { removed: 2, on_call: 1, unmatched: 1 },
      actor: expect.stringMatching(/^api_key:/),
    });
    // Audit entries name no number.
    expect(JSON.stringify(audit.data)).not.toContain(removedWaiting);

    await api(`/campaigns/${campaignId}/cancel`, { method: 'POST' });
    const afterEnd = await api(`/campaigns/${campaignId}/contacts/remove`, {
      method: 'POST',
      body: { to_numbers: [kept] },
    });
    expect(afterEnd.status).toBe(409);
  }, 90_000);
});
