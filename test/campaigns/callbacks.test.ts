import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { nextWindowOpening } from '../../src/domain/callingWindow.js';
import { callFixture, startFullService, waitForTerminal } from '../helpers/fullService.js';
import { jsonApi } from '../helpers/http.js';
import { dropTestSchema, newTestSchema, storeEnv } from '../helpers/postgres.js';
import { eventually } from '../webhooks/harness.js';

/**
 * "Call me back tomorrow": a script agent's schedule_callback on the sandbox, both stores. In a
 * campaign the contact's next attempt is the asked time in its zone, moved into the campaign's
 * window; it waits with `waiting_reason: "callback"` though no retry rule would call it again; on
 * a single call the agent is told callbacks are not available.
 */

interface ContactView {
  state: string;
  attempts: number;
  last_outcome: string | null;
  next_attempt_at: string | null;
  waiting_reason: string | null;
}

const hourMs = 3_600_000;

describe.each(['sqlite', 'postgres'] as const)('schedule_callback on %s', (storeKind) => {
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

  it('sets the contact next attempt to the callback, moved into the window; not available on a single call', async () => {
    const fixture = await callFixture(service, { maxDurationS: 6 });
    const api = jsonApi(
      () => service.url,
      () => fixture.key,
    );
    // 29 h from now: past tomorrow's window (now-1 h to now+3 h, UTC), so moved to the next opening.
    const callbackMinutes = 29 * 60;
    const agent = await createAgent(service.store, fixture.accountId, {
      name: 'Callback',
      prompt: 'p',
      maxDurationS: 6,
      script: {
        start: 'hello',
        nodes: {
          hello: {
            say: 'Of course, we will call you back.',
            schedule_callback: { in_minutes: callbackMinutes },
            next: 'bye',
          },
          bye: { say: 'Goodbye.', end: true },
        },
      },
    });
    const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
    const window = { start: hhmm(Date.now() - hourMs), end: hhmm(Date.now() + 3 * hourMs) };
    const number = `+155501000074${storeKind === 'sqlite' ? 1 : 2}`;
    const created = await api('/campaigns', {
      method: 'POST',
      body: {
        agent_id: agent.id,
        from_number: fixture.from,
        calling_window: window,
        time_zone: 'UTC',
        contacts: [{ to_number: number, time_zone: 'UTC' }],
      },
    });
    expect(created.status).toBe(201);
    const campaignId = (created.body as { campaign_id: string }).campaign_id;
    const contact = async () =>
      ((await api(`/campaigns/${campaignId}/contacts`)).body as { data: ContactView[] }).data[0];
    const startedMs = Date.now();
    const settled = await eventually(
      async () => {
        const now = await contact();
        return now?.state === 'retry_wait' ? now : undefined;
      },
      30_000,
      'the attempt settled with its callback',
    );
    expect(settled).toMatchObject({
      attempts: 1,
      last_outcome: 'answered',
      waiting_reason: 'callback',
    });
    const callbackMs = Date.parse(settled.next_attempt_at ?? '');
    // The asked time (29 h on) lies outside the window: the next opening after it.
    const asked = startedMs + callbackMinutes * 60_000;
    const calling = { ...window, weekdays: [1, 2, 3, 4, 5, 6, 7] };
    const expected = nextWindowOpening(calling, ['UTC'], asked);
    expect(Math.abs(callbackMs - (expected ?? 0))).toBeLessThan(2 * 60_000);
    expect(hhmm(callbackMs)).toBe(window.start);
    const campaign = (await api(`/campaigns/${campaignId}`)).body as { status: string };
    expect(campaign.status).toBe('running');
    // The call's transcript says what was scheduled.
    const [attempt] = (
      (await api(`/campaigns/${campaignId}/contacts`)).body as { data: { calls: { call_id: string }[] }[] }
    ).data[0]!.calls;
    const call = await waitForTerminal(service, attempt!.call_id);
    expect(call.transcript.find((entry) => entry.event === 'tool_result')?.text).toContain(
      '"scheduled":true',
    );

    // A single call: the same agent is told callbacks are not available, truthfully.
    const single = await api('/calls/outbound', {
      method: 'POST',
      body: {
        agent_id: agent.id,
        from_number: fixture.from,
        to_number: `+155501000075${storeKind === 'sqlite' ? 1 : 2}`,
      },
    });
    expect(single.status).toBe(200);
    const singleCall = await waitForTerminal(service, (single.body as { call_id: string }).call_id, 30_000);
    expect(singleCall.transcript.find((entry) => entry.event === 'tool_result')?.text).toContain(
      'not available on this call',
    );
  }, 90_000);
});
