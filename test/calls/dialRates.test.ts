import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callFixture, startFullService, waitForTerminal } from '../helpers/fullService.js';
import { jsonApi } from '../helpers/http.js';
import { dropTestSchema, newTestSchema, storeEnv } from '../helpers/postgres.js';

/**
 * A cap on calls per second from one caller ID, on each store (the buckets are the rate
 * limiter's: memory embedded, rows in PostgreSQL): eight calls asked for at once leave at the
 * capped rate, read off the times the calls started dialling.
 */

describe.each(['sqlite', 'postgres'] as const)('dial rates on %s', (storeKind) => {
  let service: Awaited<ReturnType<typeof startFullService>>;
  let fixture: Awaited<ReturnType<typeof callFixture>>;
  const schema = newTestSchema();

  beforeAll(async () => {
    service = await startFullService(storeEnv(storeKind, schema));
    fixture = await callFixture(service, { maxDurationS: 3, maxLiveCalls: 20 });
  });

  afterAll(async () => {
    await service?.dispose();
    if (storeKind === 'postgres') await dropTestSchema(schema);
  });

  const api = jsonApi(
    () => service.url,
    () => fixture.key,
  );

  it('lets calls leave a capped caller ID no faster than its calls per second', async () => {
    const set = await api('/dial-rates', {
      method: 'PUT',
      body: { scope: 'caller_id', subject: fixture.from, calls_per_second: 2 },
    });
    expect(set.body).toEqual({ scope: 'caller_id', subject: fixture.from, calls_per_second: 2 });
    expect((await api('/dial-rates')).body).toEqual({ data: [set.body] });
    expect(
      (
        await api('/dial-rates', {
          method: 'PUT',
          body: { scope: 'caller_id', subject: '+15550000000', calls_per_second: 2 },
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await api('/dial-rates', {
          method: 'PUT',
          body: { scope: 'trunk', subject: 'nope', calls_per_second: 2 },
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await api('/dial-rates', {
          method: 'PUT',
          body: { scope: 'caller_id', subject: fixture.from, calls_per_second: 0 },
        })
      ).status,
    ).toBe(400);

    const ids = await Promise.all(
      Array.from({ length: 8 }, async (_, index) => {
        const { body } = await api('/calls/outbound', {
          method: 'POST',
          body: {
            agent_id: fixture.agentId,
            from_number: fixture.from,
            to_number: `+15550100002010${index}`,
          },
        });
        return (body as { call_id: string }).call_id;
      }),
    );
    const calls = await Promise.all(ids.map((id) => waitForTerminal(service, id, 30_000)));
    const starts = calls.map((call) => Date.parse(call.dialingAt as string)).sort((a, b) => a - b);
    // A bucket of two, refilled two a second: eight calls take at least three seconds, and no
    // second holds more than four starts.
    expect((starts.at(-1) as number) - (starts[0] as number)).toBeGreaterThanOrEqual(2_700);
    for (let index = 4; index < starts.length; index += 1) {
      expect((starts[index] as number) - (starts[index - 4] as number)).toBeGreaterThanOrEqual(900);
    }
    await api('/dial-rates', {
      method: 'PUT',
      body: { scope: 'caller_id', subject: fixture.from, calls_per_second: null },
    });
    expect((await api('/dial-rates')).body).toEqual({ data: [] });
  }, 60_000);
});
