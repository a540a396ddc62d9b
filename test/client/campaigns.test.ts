import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallwrightClient, ConflictError, ValidationError } from '../../src/client/index.js';
import { callFixture, startFullService } from '../helpers/fullService.js';

/** The typed client's campaigns resource against the whole service on loopback. */

let service: Awaited<ReturnType<typeof startFullService>>;
let fixture: Awaited<ReturnType<typeof callFixture>>;
let client: CallwrightClient;

beforeAll(async () => {
  service = await startFullService({}, { campaignScheduler: { tickMs: 100 } });
  fixture = await callFixture(service, { maxDurationS: 3 });
  client = new CallwrightClient({ apiKey: fixture.key, baseUrl: service.url });
});

afterAll(async () => {
  await service?.dispose();
});

describe('client.campaigns', () => {
  it('creates from a CSV (bad rows by line), edits live and says why contacts wait', async () => {
    const settings = {
      agent_id: fixture.agentId,
      from_number: fixture.from,
      calling_window: { start: '09:00', end: '17:00' },
      time_zone: 'UTC',
      starts_at: new Date(Date.now() + 86_400_000).toISOString(),
    };
    const refused = await client.campaigns
      .createFromCsv(settings, 'to_number\n555-0100\n')
      .catch((error) => error);
    expect(refused).toBeInstanceOf(ValidationError);
    expect(JSON.stringify(refused)).toContain('"line":2');
    const campaign = await client.campaigns.createFromCsv(settings, 'to_number\n+12125550177\n');
    expect(campaign).toMatchObject({ contact_count: 1, status_reason: null });
    const edited = await client.campaigns.update(campaign.campaign_id, { calls_per_minute: 20, name: 'csv' });
    expect(edited).toMatchObject({ calls_per_minute: 20, name: 'csv' });
    const [contact] = (await client.campaigns.contacts(campaign.campaign_id)).data;
    expect(contact?.waiting_reason).toBe('starts_at');
    await client.campaigns.cancel(campaign.campaign_id);
    await expect(
      client.campaigns.update(campaign.campaign_id, { calls_per_minute: 5 }),
    ).rejects.toBeInstanceOf(ConflictError);
  });

  it('adds and removes contacts live, streams the results and reads the figures (issue 37)', async () => {
    const campaign = await client.campaigns.create({
      agent_id: fixture.agentId,
      from_number: fixture.from,
      calling_window: { start: '09:00', end: '17:00' },
      time_zone: 'UTC',
      starts_at: new Date(Date.now() + 86_400_000).toISOString(),
      contacts: [{ to_number: '+12125550180' }],
    });
    const id = campaign.campaign_id;
    expect(await client.campaigns.addContacts(id, [{ to_number: '+12125550181' }])).toMatchObject({
      added: 1,
      first_position: 1,
    });
    const refused = await client.campaigns
      .addContactsFromCsv(id, 'to_number\n+12125550181\n')
      .catch((error) => error);
    expect(refused).toBeInstanceOf(ValidationError);
    expect(JSON.stringify(refused)).toContain('already in the campaign');
    expect(await client.campaigns.addContactsFromCsv(id, 'to_number\n+12125550182\n')).toMatchObject({
      added: 1,
      campaign: { contact_count: 3 },
    });
    expect(await client.campaigns.removeContacts(id, { to_numbers: ['+12125550181'] })).toMatchObject({
      removed: 1,
      on_call: 0,
      unmatched: 0,
    });
    const stream = await client.campaigns.results(id, { format: 'jsonl' });
    const text = await new Response(stream).text();
    expect(
      text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).status),
    ).toEqual(['pending', 'removed', 'pending']);
    expect(await client.campaigns.figures(id)).toMatchObject({
      campaign_id: id,
      overall: { attempts: 0, answer_rate: null },
      by_caller_id: [],
    });
    await client.campaigns.cancel(id);
  });

  it('creates a campaign, follows it to completion and lists its contacts with their calls', async () => {
    const campaign = await client.campaigns.create({
      name: 'client',
      agent_id: fixture.agentId,
      from_number: fixture.from,
      calling_window: { start: '00:00', end: '23:59' },
      time_zone: 'UTC',
      contacts: [
        { to_number: '+15550100002', time_zone: 'UTC' },
        { to_number: '+15550100005', time_zone: 'UTC' },
      ],
    });
    expect(campaign).toMatchObject({ status: 'running', contact_count: 2, calls_per_minute: 10 });
    let now = campaign;
    const deadline = Date.now() + 30_000;
    while (now.status !== 'completed' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      now = await client.campaigns.get(campaign.campaign_id);
    }
    expect(now.progress).toMatchObject({ done: 2, outcomes: { busy: 1, failed: 1 } });
    const listed = await client.campaigns.list({ limit: 1 });
    expect(listed.data[0]?.campaign_id).toBe(campaign.campaign_id);
    const contacts = await client.campaigns.contacts(campaign.campaign_id, { limit: 1 });
    expect(contacts.data).toHaveLength(1);
    expect(contacts.data[0]).toMatchObject({
      to_number: '+15550100002',
      calls: [{ attempt: 1, status: 'busy' }],
    });
    const rest = await client.campaigns.contacts(campaign.campaign_id, { after: contacts.next_after ?? 0 });
    expect(rest).toMatchObject({ data: [{ to_number: '+15550100005' }], next_after: null });
    await expect(client.campaigns.pause(campaign.campaign_id)).rejects.toBeInstanceOf(ConflictError);
  }, 40_000);

  it('sets retention, erases a number and reads the audit log (client.privacy)', async () => {
    expect(await client.privacy.retention()).toEqual({ retention_days: null });
    expect(await client.privacy.setRetention(7)).toEqual({ retention_days: 7 });
    expect(await client.privacy.retention()).toEqual({ retention_days: 7 });
    const erased = await client.privacy.eraseNumber('+15550100002');
    expect(erased).toMatchObject({ calls_erased: 1, campaign_contacts_erased: 1 });
    const audit = await client.privacy.auditLog({ limit: 5 });
    expect(audit.data[0]).toMatchObject({ audit_id: erased.audit_id, subject: '+1555*****02' });
    expect(await client.privacy.setRetention(null)).toEqual({ retention_days: null });
  });

  it('sets dial rates and quiet hours (client.callingRules)', async () => {
    const rate = { scope: 'caller_id' as const, subject: fixture.from, calls_per_second: 5 };
    expect(await client.callingRules.setDialRate(rate)).toEqual(rate);
    expect(await client.callingRules.dialRates()).toEqual({ data: [rate] });
    await client.callingRules.setDialRate({ ...rate, calls_per_second: null });
    const hours = { start: '21:00', end: '08:00', time_zone: 'Europe/Berlin' };
    expect(await client.callingRules.setQuietHours(hours)).toEqual({ quiet_hours: hours });
    expect(await client.callingRules.quietHours()).toEqual({ quiet_hours: hours });
    expect(await client.callingRules.setQuietHours(null)).toEqual({ quiet_hours: null });
  });

  it('surfaces the bad rows of a refused campaign', async () => {
    const refused = await client.campaigns
      .create({
        agent_id: fixture.agentId,
        from_number: fixture.from,
        calling_window: { start: '09:00', end: '17:00' },
        time_zone: 'UTC',
        contacts: [{ to_number: '+15550100002' }, { to_number: 'nope' }],
      })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).rows).toEqual([
      { index: 1, message: 'to_number must be an E.164 phone number such as +14155550123' },
    ]);
  });
});
