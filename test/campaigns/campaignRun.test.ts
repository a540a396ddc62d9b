import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CallingWindow,
  callingWindowOf,
  isWindowOpen,
  nextWindowOpening,
} from '../../src/domain/callingWindow.js';
import { callFixture, startFullService } from '../helpers/fullService.js';
import { jsonApi } from '../helpers/http.js';
import { assertWebhookConformsToOpenApi } from '../helpers/openApiCheck.js';
import { dropTestSchema, newTestSchema, storeEnv } from '../helpers/postgres.js';
import { eventually, type Receiver, startReceiver } from '../webhooks/harness.js';

/**
 * A campaign run to completion on the sandbox carrier with real SIP and RTP, on each store: a
 * calling window held in each contact's own zone, a retry after busy, the do-not-call list, the
 * concurrency cap and the pace. The scheduler's clock is moved forward to reach the retry. The
 * account's endpoint (a real HTTP receiver) asked for the status events: each call's ringing and
 * answer, and the campaign's completion, arrive signed, once each.
 */

const window: CallingWindow = callingWindowOf({ start: '09:00', end: '17:00' });
const candidateZones = [
  'Pacific/Honolulu',
  'America/Los_Angeles',
  'America/Chicago',
  'America/New_York',
  'America/Sao_Paulo',
  'Europe/London',
  'Europe/Berlin',
  'Asia/Dubai',
  'Asia/Kolkata',
  'Asia/Shanghai',
  'Asia/Tokyo',
  'Australia/Sydney',
  'Pacific/Auckland',
];

/** A zone where the window is open for the next hour, and one where it stays shut for at least an hour. */
function zonesForNow(nowMs: number): { open: string; closed: string } {
  const open = candidateZones.find(
    (zone) => isWindowOpen(window, [zone], nowMs) && isWindowOpen(window, [zone], nowMs + 3_600_000),
  );
  const closed = candidateZones.find((zone) => {
    const opening = nextWindowOpening(window, [zone], nowMs);
    return opening !== null && opening > nowMs + 3_600_000;
  });
  if (!open || !closed) throw new Error('no zone pair for this hour');
  return { open, closed };
}

interface ContactView {
  to_number: string;
  state: string;
  attempts: number;
  last_outcome: string | null;
  calls: { call_id: string; status: string | null; created_at: string }[];
}

describe.each(['sqlite', 'postgres'] as const)('a campaign on %s', (storeKind) => {
  let service: Awaited<ReturnType<typeof startFullService>>;
  let fixture: Awaited<ReturnType<typeof callFixture>>;
  let clockOffsetMs = 0;
  let receiver: Receiver;
  const schema = newTestSchema();

  beforeAll(async () => {
    receiver = await startReceiver();
    const env: Record<string, string> = {
      ...storeEnv(storeKind, schema),
      CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true',
    };
    service = await startFullService(env, {
      campaignScheduler: { tickMs: 100, nowMs: () => Date.now() + clockOffsetMs },
    });
    fixture = await callFixture(service, { maxDurationS: 3 });
  });

  afterAll(async () => {
    await service?.dispose();
    await receiver?.close();
    if (storeKind === 'postgres') await dropTestSchema(schema);
  });

  const api = jsonApi(
    () => service.url,
    () => fixture.key,
  );

  async function waitForStatus(campaignId: string, status: string, timeoutMs: number) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { body } = await api(`/campaigns/${campaignId}`);
      if ((body as { status: string }).status === status) return body as Record<string, unknown>;
      if (Date.now() > deadline) throw new Error(`campaign still ${JSON.stringify(body)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  it('runs to completion holding windows, retries, the suppression list, the cap and the pace', async () => {
    const { open, closed } = zonesForNow(Date.now());
    await api('/do-not-call', { method: 'POST', body: { numbers: ['+15550100007'] } });
    const endpoint = await api('/webhook', { method: 'PUT', body: { url: receiver.url } });
    const secret = (endpoint.body as { secret: string }).secret;
    const events = ['call.ringing', 'call.answered', 'campaign.completed'];
    expect((await api('/webhook/events', { method: 'PUT', body: { events } })).status).toBe(200);
    const created = await api('/campaigns', {
      method: 'POST',
      body: {
        name: 'reminders',
        agent_id: fixture.agentId,
        from_number: fixture.from,
        calling_window: window,
        time_zone: open,
        max_concurrency: 2,
        calls_per_minute: 120,
        retry: { busy: { after_minutes: 1, max_attempts: 2 }, failed: { after_minutes: 1, max_attempts: 1 } },
        ends_at: new Date(Date.now() + 20 * 60_000).toISOString(),
        contacts: [
          { to_number: '+15550100006', time_zone: open },
          { to_number: '+15550100002', time_zone: open },
          { to_number: '+15550100005', time_zone: open },
          { to_number: '+15550100007', time_zone: open },
          { to_number: '+15550100001', time_zone: closed },
        ],
      },
    });
    expect(created.status).toBe(201);
    const campaignId = (created.body as { campaign_id: string }).campaign_id;
    expect(created.body).toMatchObject({ status: 'running', contact_count: 5, progress: { pending: 5 } });

    // The first attempts end (busy at once, the person after 2 s); the busy one waits a minute.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { body } = await api(`/campaigns/${campaignId}`);
      const progress = (body as { progress: Record<string, number> }).progress;
      if (progress.retry_wait === 1 && progress.calling === 0 && progress.pending === 0) break;
      if (Date.now() > deadline) throw new Error(`no retry wait: ${JSON.stringify(progress)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    clockOffsetMs = 61_000;
    const finished = await waitForStatus(campaignId, 'completed', 30_000);
    expect(finished.progress).toMatchObject({
      pending: 0,
      calling: 0,
      retry_wait: 0,
      done: 3,
      do_not_call: 1,
      expired: 1,
      outcomes: { answered: 1, busy: 1, failed: 1 },
    });

    const contacts = (await api(`/campaigns/${campaignId}/contacts`)).body as { data: ContactView[] };
    const byNumber = new Map(contacts.data.map((contact) => [contact.to_number, contact]));
    expect(byNumber.get('+15550100006')).toMatchObject({
      state: 'done',
      last_outcome: 'answered',
      attempts: 1,
    });
    expect(byNumber.get('+15550100002')).toMatchObject({ state: 'done', last_outcome: 'busy', attempts: 2 });
    expect(byNumber.get('+15550100002')?.calls.map((call) => call.status)).toEqual(['busy', 'busy']);
    expect(byNumber.get('+15550100005')).toMatchObject({
      state: 'done',
      last_outcome: 'failed',
      attempts: 1,
    });
    expect(byNumber.get('+15550100007')).toMatchObject({ state: 'do_not_call', attempts: 0, calls: [] });
    expect(byNumber.get('+15550100001')).toMatchObject({ state: 'expired', attempts: 0, calls: [] });

    // Nothing reached the carrier for the suppressed number or the one outside its window.
    const invited = (await service.store.sandboxInvites.list()).map((invite) => invite.toNumber);
    expect(invited).not.toContain('+15550100007');
    expect(invited).not.toContain('+15550100001');

    // Every call started inside its callee's window; never more than two at once; the pace held.
    const calls = await Promise.all(
      contacts.data.flatMap((contact) =>
        contact.calls.map(async (attempt) => (await service.store.calls.getById(attempt.call_id))!),
      ),
    );
    expect(calls).toHaveLength(4);
    for (const call of calls) {
      expect(call.dialingAt).not.toBeNull();
      expect(isWindowOpen(window, [open], Date.parse(call.dialingAt!))).toBe(true);
    }
    const edges = calls.flatMap((call) => [
      { atMs: Date.parse(call.dialingAt!), step: 1 },
      { atMs: Date.parse(call.endedAt!), step: -1 },
    ]);
    edges.sort((a, b) => a.atMs - b.atMs || a.step - b.step);
    let live = 0;
    let maxLive = 0;
    for (const edge of edges) {
      live += edge.step;
      maxLive = Math.max(maxLive, live);
    }
    expect(maxLive).toBeLessThanOrEqual(2);

    // The status events, as the receiver got them (verified, each type once per call).
    const received = await eventually(
      async () => {
        const bodies = receiver.requests.map((request) => {
          const payload = new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
          return payload as { type: string; id: string; data: Record<string, unknown> };
        });
        return bodies.some((body) => body.type === 'campaign.completed') &&
          bodies.filter((body) => body.type === 'call.completed').length === 4
          ? bodies
          : undefined;
      },
      20_000,
      'the campaign.completed delivery',
    );
    for (const body of received) await assertWebhookConformsToOpenApi(service.url, body);
    const ofCall = (callId: string) =>
      received.filter((body) => body.data.call_id === callId).map((body) => body.type);
    const answeredCall = byNumber.get('+15550100006')?.calls[0]?.call_id as string;
    expect(ofCall(answeredCall).sort()).toEqual(['call.answered', 'call.completed', 'call.ringing']);
    const answered = received.find((body) => body.type === 'call.answered');
    expect(answered?.data).toMatchObject({ call_id: answeredCall, to_number: '+15550100006' });
    expect(['human', 'machine', 'unknown']).toContain(answered?.data.answered_by);
    // The unreachable number neither rang nor answered.
    const unreachable = byNumber.get('+15550100005')?.calls[0]?.call_id as string;
    expect(ofCall(unreachable)).toEqual(['call.completed']);
    // No call has two events of one type; the campaign's completion came once, with its progress.
    const keys = received.map((body) => `${body.type} ${String(body.data.call_id ?? body.data.campaign_id)}`);
    expect(new Set(keys).size).toBe(keys.length);
    const completion = received.filter((body) => body.type === 'campaign.completed');
    expect(completion).toHaveLength(1);
    expect(completion[0]?.data).toMatchObject({
      campaign_id: campaignId,
      status: 'completed',
      progress: { done: 3, do_not_call: 1, expired: 1 },
    });
    const listed = (await api('/events?limit=50')).body as {
      data: { type: string; campaign_id: string | null }[];
    };
    expect(listed.data.find((event) => event.type === 'campaign.completed')?.campaign_id).toBe(campaignId);
    const starts = calls.map((call) => Date.parse(call.createdAt)).sort((a, b) => a - b);
    // 120 a minute: one start per 500 ms, a late scheduler catching up by one start at most.
    for (let index = 2; index < starts.length; index += 1) {
      expect((starts[index] as number) - (starts[index - 2] as number)).toBeGreaterThanOrEqual(450);
    }
  }, 90_000);

  it('reports every bad contact by its index and creates nothing', async () => {
    const before = (await api('/campaigns')).body as { data: unknown[] };
    const response = await api('/campaigns', {
      method: 'POST',
      body: {
        agent_id: fixture.agentId,
        from_number: fixture.from,
        calling_window: { start: '09:00', end: '17:00' },
        time_zone: 'America/New_York',
        contacts: [
          { to_number: '+15550100006' },
          { to_number: '555-0100' },
          { to_number: '+15550100002', variables: { unknown_name: 'x' } },
          { to_number: '+15550100006' },
          { to_number: '+15550100003', time_zone: 'Mars/Olympus' },
        ],
      },
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      error: {
        code: 'validation_error',
        message: '4 rows need fixing; nothing was created or dialled',
        rows: [
          { index: 1, message: expect.stringMatching(/to_number must be an E\.164/) },
          { index: 2, message: expect.stringMatching(/unknown_name is not declared/) },
          { index: 3, message: 'to_number repeats contact 0' },
          { index: 4, message: expect.stringMatching(/time_zone must be an IANA/) },
        ],
      },
    });
    expect(((await api('/campaigns')).body as { data: unknown[] }).data).toHaveLength(before.data.length);
  });

  it('holds the daily cap per number across single calls and campaigns', async () => {
    const single = await api('/calls/outbound', {
      method: 'POST',
      body: { agent_id: fixture.agentId, from_number: fixture.from, to_number: '+155501000050042' },
    });
    const singleId = (single.body as { call_id: string }).call_id;
    const { open } = zonesForNow(Date.now());
    const created = await api('/campaigns', {
      method: 'POST',
      body: {
        agent_id: fixture.agentId,
        from_number: fixture.from,
        calling_window: window,
        time_zone: open,
        max_daily_attempts: 1,
        ends_at: new Date(Date.now() + 3_600_000).toISOString(),
        contacts: [{ to_number: '+155501000050042' }, { to_number: '+155501000050043' }],
      },
    });
    expect(created.body).toMatchObject({ max_daily_attempts: 1 });
    const campaignId = (created.body as { campaign_id: string }).campaign_id;
    const finished = await waitForStatus(campaignId, 'completed', 20_000);
    // Already called once today: its next chance is a day away, after the campaign's end.
    expect(finished.progress).toMatchObject({ done: 1, expired: 1 });
    const contacts = (await api(`/campaigns/${campaignId}/contacts`)).body as { data: ContactView[] };
    expect(contacts.data[0]).toMatchObject({ to_number: '+155501000050042', state: 'expired', calls: [] });
    const invites = (await service.store.sandboxInvites.list()).filter(
      (invite) => invite.toNumber === '+155501000050042',
    );
    expect(invites).toHaveLength(1);
    expect((await service.store.calls.getById(singleId))?.status).toBe('failed');
  }, 40_000);

  it('pauses, resumes and cancels; a canceled campaign cannot be resumed', async () => {
    const { open } = zonesForNow(Date.now());
    const created = await api('/campaigns', {
      method: 'POST',
      body: {
        agent_id: fixture.agentId,
        from_number: fixture.from,
        calling_window: window,
        time_zone: open,
        max_concurrency: 1,
        calls_per_minute: 600,
        contacts: ['+15550100003', '+15550100013', '+15550100012', '+15550100011'].map((to_number) => ({
          to_number,
        })),
      },
    });
    const campaignId = (created.body as { campaign_id: string }).campaign_id;
    expect((await api(`/campaigns/${campaignId}/pause`, { method: 'POST' })).body).toMatchObject({
      status: 'paused',
    });
    expect((await api(`/campaigns/${campaignId}/pause`, { method: 'POST' })).status).toBe(409);
    expect((await api(`/campaigns/${campaignId}/resume`, { method: 'POST' })).body).toMatchObject({
      status: 'running',
    });
    const canceled = await api(`/campaigns/${campaignId}/cancel`, { method: 'POST' });
    expect(canceled.body).toMatchObject({ status: 'canceled' });
    expect((await api(`/campaigns/${campaignId}/resume`, { method: 'POST' })).status).toBe(409);
    // What was waiting is canceled; at most the one call already placed ends as it would.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { body } = await api(`/campaigns/${campaignId}`);
      const progress = (body as { progress: Record<string, number> }).progress;
      if (progress.calling === 0) {
        expect(progress.pending).toBe(0);
        expect(progress.canceled).toBeGreaterThanOrEqual(3);
        break;
      }
      if (Date.now() > deadline) throw new Error(`still calling: ${JSON.stringify(progress)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect((await api('/campaigns/cmp_nope')).status).toBe(404);
  }, 40_000);
});
