import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueNames } from '../../src/queue/types.js';
import { callFixture, startFullService, waitForTerminal } from '../helpers/fullService.js';
import { jsonApi, postCall } from '../helpers/http.js';

/**
 * Service-wide quiet hours (CALLWRIGHT_QUIET_HOURS): a single call asked for during them is
 * accepted as the specification says, stays queued with no INVITE sent, and its dispatch job waits
 * (looking again each minute) for the end of the quiet hours in the callee's zone (UTC here: the
 * sandbox's +1555 numbers name no zone of their own).
 */

const clock = (ms: number) => new Date(ms).toISOString().slice(11, 16);
const quietStartMs = Date.now() - 3_600_000;
const quietEndMs = Date.now() + 2 * 3_600_000;

let service: Awaited<ReturnType<typeof startFullService>>;
let fixture: Awaited<ReturnType<typeof callFixture>>;

beforeAll(async () => {
  service = await startFullService({
    CALLWRIGHT_QUIET_HOURS: `${clock(quietStartMs)}-${clock(quietEndMs)}`,
    CALLWRIGHT_QUIET_HOURS_TIME_ZONE: 'UTC',
  });
  fixture = await callFixture(service);
});

afterAll(async () => {
  await service?.dispose();
});

describe('quiet hours', () => {
  it('keeps a call queued, undialled, until the quiet hours end', async () => {
    const response = await postCall(service.url, fixture.key, {
      agent_id: fixture.agentId,
      from_number: fixture.from,
      to_number: '+15550100002',
    });
    expect(response.body).toMatchObject({ status: 'queued' });
    const callId = (response.body as { call_id: string }).call_id;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await service.store.calls.getById(callId))?.status).toBe('queued');
    expect((await service.store.sandboxInvites.list()).map((invite) => invite.toNumber)).not.toContain(
      '+15550100002',
    );
    const depth = await service.store.queue.depth(queueNames.dispatch);
    expect(depth.count).toBe(1);
    // The job waits, looking again within a minute (so removed quiet hours release it), never
    // later than the first minute after the quiet hours.
    expect(depth.oldestRunAtMs).toBeGreaterThan(Date.now());
    expect(depth.oldestRunAtMs).toBeLessThanOrEqual(Date.now() + 60_000);
  });

  it("holds an account's own quiet hours, set over the API, for its calls only", async () => {
    const other = await startFullService();
    try {
      const caller = await callFixture(other);
      const api = jsonApi(
        () => other.url,
        () => caller.key,
      );
      expect((await api('/quiet-hours')).body).toEqual({ quiet_hours: null });
      const rule = { start: clock(quietStartMs), end: clock(quietEndMs), time_zone: 'UTC' };
      expect((await api('/quiet-hours', { method: 'PUT', body: { quiet_hours: rule } })).body).toEqual({
        quiet_hours: rule,
      });
      expect(
        (
          await api('/quiet-hours', {
            method: 'PUT',
            body: { quiet_hours: { ...rule, time_zone: 'Nowhere' } },
          })
        ).status,
      ).toBe(400);
      const { body } = await api('/calls/outbound', {
        method: 'POST',
        body: { agent_id: caller.agentId, from_number: caller.from, to_number: '+155501000020001' },
      });
      const held = (body as { call_id: string }).call_id;
      // Another account of the same service is not held.
      const free = await callFixture(other);
      const freeCall = await postCall(other.url, free.key, {
        agent_id: free.agentId,
        from_number: free.from,
        to_number: '+155501000020002',
      });
      expect((await waitForTerminal(other, (freeCall.body as { call_id: string }).call_id)).status).toBe(
        'busy',
      );
      expect((await other.store.calls.getById(held))?.status).toBe('queued');
      expect((await other.store.sandboxInvites.list()).map((invite) => invite.toNumber)).not.toContain(
        '+155501000020001',
      );
      await api('/quiet-hours', { method: 'PUT', body: { quiet_hours: null } });
    } finally {
      await other.dispose();
    }
  }, 40_000);

  it('refuses a malformed setting at start-up', async () => {
    await expect(startFullService({ CALLWRIGHT_QUIET_HOURS: '9pm-8am' })).rejects.toThrow(/21:00-08:00/);
  });
});
