import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { campaigns as campaignVerbs } from '../../src/cli/campaignCommands.js';
import { callingWindowOf } from '../../src/domain/callingWindow.js';
import { callFixture, startFullService, waitForTerminal } from '../helpers/fullService.js';
import { jsonApi } from '../helpers/http.js';
import { dropTestSchema, newTestSchema, storeEnv } from '../helpers/postgres.js';
import { eventually, type Receiver, startReceiver } from '../webhooks/harness.js';

/**
 * Regressions of the campaign evaluation (issue 37), each on both stores, on the sandbox carrier
 * over real SIP: a cancel from the command line stops calls already queued; a revoked key pauses
 * its campaign with a reason and an event and leaves no contact "calling" without a call; a
 * do-not-call number is never shown as dialled; removing quiet hours releases a held call; every
 * waiting contact says why it waits. And the live edit that follows from them: a window changed on
 * a running campaign frees the contacts held for the old one, audited.
 */

const alwaysOpen = callingWindowOf({ start: '00:00', end: '23:59' });

interface ContactView {
  to_number: string;
  state: string;
  attempts: number;
  waiting_reason: string | null;
  calls: { call_id: string; status: string | null }[];
}

describe.each(['sqlite', 'postgres'] as const)('campaign defects on %s', (storeKind) => {
  let service: Awaited<ReturnType<typeof startFullService>>;
  let receiver: Receiver;
  const schema = newTestSchema();

  beforeAll(async () => {
    receiver = await startReceiver();
    service = await startFullService(
      { ...storeEnv(storeKind, schema), CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true' },
      { campaignScheduler: { tickMs: 100, claimGraceMs: 1_000 }, callingHoursRecheckMs: 500 },
    );
  });

  afterAll(async () => {
    await service?.dispose();
    await receiver?.close();
    if (storeKind === 'postgres') await dropTestSchema(schema);
  });

  async function contactsOf(api: ReturnType<typeof jsonApi>, campaignId: string) {
    return ((await api(`/campaigns/${campaignId}/contacts`)).body as { data: ContactView[] }).data;
  }

  it('cancels from the command line: calls already queued are never dialled', async () => {
    // One live call at a time for the account: the campaign's other claims wait in the queue.
    const fixture = await callFixture(service, { maxLiveCalls: 1, maxDurationS: 3 });
    const api = jsonApi(
      () => service.url,
      () => fixture.key,
    );
    const numbers = [1, 2, 3, 4, 5].map((n) => `+1555010000600${n}${storeKind === 'sqlite' ? 1 : 2}`);
    const created = await api('/campaigns', {
      method: 'POST',
      body: {
        agent_id: fixture.agentId,
        from_number: fixture.from,
        calling_window: alwaysOpen,
        time_zone: 'UTC',
        max_concurrency: 5,
        calls_per_minute: 600,
        contacts: numbers.map((to_number) => ({ to_number })),
      },
    });
    const campaignId = (created.body as { campaign_id: string }).campaign_id;
    // Every contact claimed: one call live, the others queued behind the account's cap.
    await eventually(
      async () => {
        const contacts = await contactsOf(api, campaignId);
        const queued = contacts.filter((contact) => contact.calls[0]?.status === 'queued');
        return contacts.every((contact) => contact.state === 'calling') && queued.length >= 3
          ? true
          : undefined;
      },
      20_000,
      'four calls queued',
    );
    const queuedNumbers = (await contactsOf(api, campaignId))
      .filter((contact) => contact.calls[0]?.status === 'queued')
      .map((contact) => contact.to_number);
    const out: string[] = [];
    await campaignVerbs.cancel?.(
      {
        store: service.store,
        json: true,
        accountId: fixture.accountId,
        out: { stdout: (text) => out.push(text), stderr: (text) => out.push(text) },
        secretBox: () => Promise.reject(new Error('not needed')),
      },
      [campaignId],
    );
    expect(JSON.parse(out.join(''))).toMatchObject({ status: 'canceled' });
    // Long enough for the live call to end and the queue to reach every other call.
    const settled = await eventually(
      async () => {
        const contacts = await contactsOf(api, campaignId);
        return contacts.every((contact) => contact.state !== 'calling') ? contacts : undefined;
      },
      20_000,
      'no contact left on a call',
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const invited = (await service.store.sandboxInvites.list()).map((invite) => invite.toNumber);
    for (const number of queuedNumbers) expect(invited).not.toContain(number);
    for (const contact of settled.filter((each) => queuedNumbers.includes(each.to_number))) {
      expect(contact.state).toBe('canceled');
      const call = await service.store.calls.getById(contact.calls[0]?.call_id as string);
      expect(call).toMatchObject({ status: 'canceled', dialingAt: null });
    }
  }, 60_000);

  it('pauses with a reason and an event when its key is revoked, releases the claim, and resumes', async () => {
    const fixture = await callFixture(service, { maxDurationS: 3 });
    const api = jsonApi(
      () => service.url,
      () => fixture.key,
    );
    const endpoint = await api('/webhook', { method: 'PUT', body: { url: receiver.url } });
    expect(endpoint.status).toBe(200);
    await api('/webhook/events', { method: 'PUT', body: { events: ['campaign.paused'] } });
    // A second key to create the campaign with, revoked before its start.
    const creator = await createApiKey(service.store, fixture.accountId, 'campaign creator');
    const creatorApi = jsonApi(
      () => service.url,
      () => creator.key,
    );
    const number = `+155501000060${storeKind === 'sqlite' ? 71 : 72}`;
    const created = await creatorApi('/campaigns', {
      method: 'POST',
      body: {
        agent_id: fixture.agentId,
        from_number: fixture.from,
        calling_window: alwaysOpen,
        time_zone: 'UTC',
        starts_at: new Date(Date.now() + 1_500).toISOString(),
        contacts: [{ to_number: number }],
      },
    });
    expect(created.status).toBe(201);
    const campaignId = (created.body as { campaign_id: string }).campaign_id;
    await service.store.apiKeys.revoke(fixture.accountId, creator.record.id, new Date().toISOString());
    const paused = await eventually(
      async () => {
        const { body } = await api(`/campaigns/${campaignId}`);
        return (body as { status: string }).status === 'paused'
          ? (body as Record<string, unknown>)
          : undefined;
      },
      20_000,
      'the pause',
    );
    expect(paused.status_reason).toBe('api_key_revoked');
    // The claim was released: the contact waits again, with no attempt and no call.
    const [contact] = await contactsOf(api, campaignId);
    expect(contact).toMatchObject({ state: 'pending', attempts: 0, calls: [], waiting_reason: 'paused' });
    const event = await eventually(
      async () =>
        receiver.requests
          .map((request) => JSON.parse(request.body) as { type: string; data: Record<string, unknown> })
          .find((body) => body.type === 'campaign.paused' && body.data.campaign_id === campaignId),
      20_000,
      'the campaign.paused event',
    );
    expect(event.data).toMatchObject({ status: 'paused', status_reason: 'api_key_revoked' });

    // Resumed with a valid key: the campaign's calls are placed under that key, and it completes.
    const resumed = await api(`/campaigns/${campaignId}/resume`, { method: 'POST' });
    expect(resumed.body).toMatchObject({ status: 'running', status_reason: null });
    const finished = await eventually(
      async () => {
        const { body } = await api(`/campaigns/${campaignId}`);
        const status = (body as { status: string }).status;
        expect(status).not.toBe('paused');
        return status === 'completed' ? body : undefined;
      },
      30_000,
      'completion after resume',
    );
    expect(finished).toMatchObject({ progress: { done: 1 } });
  }, 60_000);

  it('never marks a suppressed call as dialled', async () => {
    const fixture = await callFixture(service);
    const api = jsonApi(
      () => service.url,
      () => fixture.key,
    );
    const number = `+155501000060${storeKind === 'sqlite' ? 81 : 82}`;
    await api('/do-not-call', { method: 'POST', body: { numbers: [number] } });
    const placed = await api('/calls/outbound', {
      method: 'POST',
      body: { agent_id: fixture.agentId, from_number: fixture.from, to_number: number },
    });
    expect(placed.status).toBe(200);
    const callId = (placed.body as { call_id: string }).call_id;
    const call = await waitForTerminal(service, callId);
    expect(call).toMatchObject({ status: 'canceled', endReason: 'do_not_call', dialingAt: null });
    const shown = (await api(`/calls/${callId}`)).body as Record<string, unknown>;
    expect(shown.dialed_at ?? null).toBeNull();
    expect((await service.store.sandboxInvites.list()).map((invite) => invite.toNumber)).not.toContain(
      number,
    );
  }, 30_000);

  it('releases a held call when the quiet hours are removed', async () => {
    const fixture = await callFixture(service);
    const api = jsonApi(
      () => service.url,
      () => fixture.key,
    );
    const clock = (ms: number) => new Date(ms).toISOString().slice(11, 16);
    const rule = {
      start: clock(Date.now() - 3_600_000),
      end: clock(Date.now() + 2 * 3_600_000),
      time_zone: 'UTC',
    };
    await api('/quiet-hours', { method: 'PUT', body: { quiet_hours: rule } });
    // The gate reads quiet hours again every 5 s.
    await new Promise((resolve) => setTimeout(resolve, 5_500));
    const number = `+155501000020${storeKind === 'sqlite' ? 91 : 92}`;
    const placed = await api('/calls/outbound', {
      method: 'POST',
      body: { agent_id: fixture.agentId, from_number: fixture.from, to_number: number },
    });
    const callId = (placed.body as { call_id: string }).call_id;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await service.store.calls.getById(callId))?.status).toBe('queued');
    await api('/quiet-hours', { method: 'PUT', body: { quiet_hours: null } });
    // Released: dialled (a busy line) long before the old end, two hours away.
    expect((await waitForTerminal(service, callId, 20_000)).status).toBe('busy');
  }, 40_000);

  it('says why each waiting contact waits', async () => {
    const fixture = await callFixture(service);
    const api = jsonApi(
      () => service.url,
      () => fixture.key,
    );
    const suffix = storeKind === 'sqlite' ? '1' : '2';
    const capped = `+15550100002990${suffix}`;
    // Already called once today: over a daily cap of 1.
    const single = await api('/calls/outbound', {
      method: 'POST',
      body: { agent_id: fixture.agentId, from_number: fixture.from, to_number: capped },
    });
    await waitForTerminal(service, (single.body as { call_id: string }).call_id);
    const nowMs = Date.now();
    const closedStart = new Date(nowMs + 3 * 3_600_000).toISOString().slice(11, 16);
    const closedEnd = new Date(nowMs + 4 * 3_600_000).toISOString().slice(11, 16);
    const inWindow = await api('/campaigns', {
      method: 'POST',
      body: {
        agent_id: fixture.agentId,
        from_number: fixture.from,
        calling_window: alwaysOpen,
        time_zone: 'UTC',
        max_daily_attempts: 1,
        contacts: [{ to_number: capped }],
      },
    });
    const closed = await api('/campaigns', {
      method: 'POST',
      body: {
        agent_id: fixture.agentId,
        from_number: fixture.from,
        calling_window: { start: closedStart, end: closedEnd },
        time_zone: 'UTC',
        contacts: [{ to_number: `+15550100002991${suffix}` }],
      },
    });
    const cappedId = (inWindow.body as { campaign_id: string }).campaign_id;
    const closedId = (closed.body as { campaign_id: string }).campaign_id;
    const reasonOf = async (campaignId: string) => (await contactsOf(api, campaignId))[0]?.waiting_reason;
    await eventually(
      async () => ((await reasonOf(cappedId)) === 'daily_cap' ? true : undefined),
      10_000,
      'the daily cap as the reason',
    );
    expect(await reasonOf(closedId)).toBe('window');
    await api(`/campaigns/${closedId}/pause`, { method: 'POST' });
    expect(await reasonOf(closedId)).toBe('paused');
    // The command line shows the same.
    const out: string[] = [];
    await campaignVerbs.contacts?.(
      {
        store: service.store,
        json: true,
        accountId: fixture.accountId,
        out: { stdout: (text) => out.push(text), stderr: (text) => out.push(text) },
        secretBox: () => Promise.reject(new Error('not needed')),
      },
      [cappedId],
    );
    expect(JSON.parse(out.join(''))).toMatchObject({
      contacts: [{ to_number: capped, waiting_reason: 'daily_cap' }],
    });
  }, 40_000);

  it('edits a running campaign live: a new window frees the held contact, audited; 409 once completed', async () => {
    const fixture = await callFixture(service, { maxDurationS: 3 });
    const api = jsonApi(
      () => service.url,
      () => fixture.key,
    );
    const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
    const number = `+155501000060${storeKind === 'sqlite' ? 51 : 52}`;
    const created = await api('/campaigns', {
      method: 'POST',
      body: {
        agent_id: fixture.agentId,
        from_number: fixture.from,
        calling_window: { start: hhmm(Date.now() + 3 * 3_600_000), end: hhmm(Date.now() + 4 * 3_600_000) },
        time_zone: 'UTC',
        contacts: [{ to_number: number }],
      },
    });
    const campaignId = (created.body as { campaign_id: string }).campaign_id;
    expect((await contactsOf(api, campaignId))[0]?.waiting_reason).toBe('window');
    // The command line's edit: the pace, audited as the command line's.
    const out: string[] = [];
    await campaignVerbs.edit?.(
      {
        store: service.store,
        json: true,
        accountId: fixture.accountId,
        out: { stdout: (text) => out.push(text), stderr: (text) => out.push(text) },
        secretBox: () => Promise.reject(new Error('not needed')),
      },
      [campaignId, '--per-minute', '30'],
    );
    expect(JSON.parse(out.join(''))).toMatchObject({ calls_per_minute: 30 });
    expect((await api(`/campaigns/${campaignId}`, { method: 'PATCH', body: { agent_id: 'x' } })).status).toBe(
      400,
    );
    expect(
      (await api(`/campaigns/${campaignId}`, { method: 'PATCH', body: { max_concurrency: 0 } })).status,
    ).toBe(400);
    const edited = await api(`/campaigns/${campaignId}`, {
      method: 'PATCH',
      body: { calling_window: alwaysOpen },
    });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({
      calling_window: { start: '00:00', end: '23:59' },
      calls_per_minute: 30,
    });
    // Effective at the next claim: the contact held for the old window is called now.
    await eventually(
      async () => {
        const { body } = await api(`/campaigns/${campaignId}`);
        return (body as { status: string }).status === 'completed' ? true : undefined;
      },
      30_000,
      'completion after the edit',
    );
    expect((await service.store.sandboxInvites.list()).map((invite) => invite.toNumber)).toContain(number);
    const audit = (await api('/audit-log')).body as {
      data: { action: string; actor: string; subject: string; detail: Record<string, unknown> }[];
    };
    const edits = audit.data.filter(
      (entry) => entry.action === 'campaign_edit' && entry.subject === campaignId,
    );
    expect(edits.map((entry) => entry.actor).sort()).toEqual([
      `api_key:${await keyIdOf(fixture.accountId)}`,
      'cli',
    ]);
    expect(edits.find((entry) => entry.actor === 'cli')?.detail).toEqual({
      calls_per_minute: { from: 10, to: 30 },
    });
    expect(
      (await api(`/campaigns/${campaignId}`, { method: 'PATCH', body: { calls_per_minute: 5 } })).status,
    ).toBe(409);
  }, 60_000);

  it('takes a CSV over HTTP with the command line checks and names bad rows by line', async () => {
    const fixture = await callFixture(service);
    const settings = encodeURIComponent(
      JSON.stringify({
        agent_id: fixture.agentId,
        from_number: fixture.from,
        calling_window: { start: '09:00', end: '17:00' },
        time_zone: 'UTC',
        starts_at: new Date(Date.now() + 86_400_000).toISOString(),
      }),
    );
    const post = (body: string, query = `?settings=${settings}`) =>
      fetch(`${service.url}/v1/campaigns${query}`, {
        method: 'POST',
        headers: { 'X-API-Key': fixture.key, 'Content-Type': 'text/csv; charset=utf-8' },
        body,
      });
    const bad = await post('to_number,time_zone\n+12125550100,\n555-0100,\n+12125550100,Mars/Olympus\n');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      error: {
        message: '2 rows need fixing; nothing was created or dialled',
        rows: [
          { line: 3, message: expect.stringMatching(/to_number must be an E\.164/) },
          { line: 4, message: expect.stringMatching(/time_zone must be an IANA/) },
        ],
      },
    });
    expect((await post('to_number\n+12125550100\n', '')).status).toBe(400);
    const good = await post('to_number,time_zone\n+12125550100,\n+13105550100,America/Los_Angeles\n');
    expect(good.status).toBe(201);
    expect(await good.json()).toMatchObject({ status: 'running', contact_count: 2 });
  }, 30_000);

  async function keyIdOf(accountId: string): Promise<string> {
    const keys = await service.store.apiKeys.list(accountId);
    return keys.find((key) => key.name === 'calls')?.id ?? '';
  }
});
