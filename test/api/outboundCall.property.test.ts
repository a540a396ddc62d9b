import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../helpers/http.js';
import {
  type AccountFixture,
  createAccountFixture,
  startTestService,
  type TestService,
} from '../helpers/service.js';
import { storeKinds } from '../helpers/stores.js';

/**
 * Thousands of random and mutated requests: never a 5xx, never a crash, always the error shape
 * with one of the specification's codes and the status that goes with it.
 */

const statusByCode: Record<string, number> = {
  validation_error: 400,
  unauthorized: 401,
  not_found: 404,
  invalid_phone: 422,
  rate_limited: 429,
};

describe.each(storeKinds)('on the %s store', (kind) => {
  let service: TestService;
  let account: AccountFixture;

  beforeAll(async () => {
    service = await startTestService({ store: kind });
    account = await createAccountFixture(service.store);
  });

  afterAll(async () => {
    await service.close();
  });

  const statusesSeen = new Map<number, number>();

  function checkAnswer(result: { status: number; body: unknown }, key: string | undefined): void {
    statusesSeen.set(result.status, (statusesSeen.get(result.status) ?? 0) + 1);
    expect(result.status).toBeLessThan(500);
    if (result.status === 200) {
      expect(key).toBe(account.key);
      expect(Object.keys(result.body as object).sort()).toEqual(
        ['agent_id', 'call_id', 'created_at', 'from_number', 'status', 'to_number'].sort(),
      );
      return;
    }
    const body = result.body as { error?: { code?: unknown; message?: unknown } };
    expect(Object.keys(body)).toEqual(['error']);
    expect(Object.keys(body.error ?? {}).sort()).toEqual(['code', 'message']);
    expect(typeof body.error?.message).toBe('string');
    const code = body.error?.code as string;
    expect(Object.keys(statusByCode)).toContain(code);
    expect(result.status).toBe(statusByCode[code]);
  }

  const phone = fc.oneof(
    fc.constantFrom('+15550100001', '+15550009999', '+1', '+0123', '15550100001', '', '+１２３'),
    fc.stringMatching(/^\+[0-9]{0,17}$/),
    fc.string({ maxLength: 20 }),
  );

  const jsonValue = fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.string({ maxLength: 3 }), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }),
  );

  /** A valid body with some fields replaced, removed or added: each field is kept valid most of the time. */
  function mutatedBody(fixture: AccountFixture) {
    const mostlyValid = <T>(valid: T, other: fc.Arbitrary<unknown>) =>
      fc.oneof({ weight: 8, arbitrary: fc.constant(valid) }, { weight: 1, arbitrary: other });
    const optional = (arbitrary: fc.Arbitrary<unknown>) =>
      fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arbitrary });
    return fc
      .record({
        agent_id: mostlyValid(fixture.agentId, fc.oneof(jsonValue, fc.constant(undefined))),
        from_number: mostlyValid(fixture.number, fc.oneof(phone, jsonValue, fc.constant(undefined))),
        to_number: mostlyValid('+15550100001', fc.oneof(phone, jsonValue, fc.constant(undefined))),
        first_message: optional(
          fc.oneof(fc.string({ maxLength: 50 }), fc.string({ minLength: 1990, maxLength: 2010 }), jsonValue),
        ),
        context: optional(fc.oneof(fc.string({ maxLength: 50 }), jsonValue)),
        variables: optional(
          fc.oneof(
            fc.dictionary(
              fc.oneof(
                fc.constantFrom('customer_name', 'slot', 'x-y', '1a', '__proto__', 'constructor'),
                fc.string({ maxLength: 8 }),
              ),
              jsonValue,
              { maxKeys: 4 },
            ),
            jsonValue,
          ),
        ),
        extra_field: fc.oneof(
          { weight: 8, arbitrary: fc.constant(undefined) },
          { weight: 1, arbitrary: jsonValue },
        ),
      })
      .map((body) => JSON.stringify(body));
  }

  const contentType = fc.oneof(
    fc.constant('application/json'),
    fc.constant('application/json; charset=utf-8'),
    fc.constant('APPLICATION/JSON'),
    fc.constantFrom('text/plain', 'application/json; charset=latin1', 'multipart/form-data', ''),
    fc.stringMatching(/^[a-z/;= -]{0,30}$/),
  );

  const apiKey = fc.oneof(
    { weight: 6, arbitrary: fc.constant('valid') },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.stringMatching(/^cw_live_[0-9A-Za-z]{0,40}$/) },
  );

  function validBody(fixture: AccountFixture, changes: Record<string, unknown>): string {
    return JSON.stringify({
      agent_id: fixture.agentId,
      from_number: fixture.number,
      to_number: '+15550100001',
      ...changes,
    });
  }

  describe('random and mutated requests', () => {
    it('mutated JSON bodies', async () => {
      await fc.assert(
        fc.asyncProperty(mutatedBody(account), contentType, apiKey, async (body, type, keyChoice) => {
          const key = keyChoice === 'valid' ? account.key : keyChoice;
          const headers: Record<string, string> = {};
          if (type !== '') headers['Content-Type'] = type;
          if (key !== undefined) headers['X-API-Key'] = key;
          const result = await request(`${service.url}/v1/calls/outbound`, { method: 'POST', headers, body });
          checkAnswer(result, key);
        }),
        {
          numRuns: 2000,
          // One request per outcome, so the check below holds whatever the random draw (a 404 needs
          // a well-formed agent id that does not exist, which the generators reach only rarely).
          examples: [
            [validBody(account, {}), 'application/json', 'valid'],
            [validBody(account, { unknown_field: true }), 'application/json', 'valid'],
            [validBody(account, {}), 'application/json', undefined],
            [validBody(account, { agent_id: 'agt_00000000000000000000000000' }), 'application/json', 'valid'],
            [validBody(account, { to_number: '+0123' }), 'application/json', 'valid'],
          ],
        },
      );
      // The generators reach every outcome, so the property is exercised past the first check.
      for (const status of [200, 400, 401, 404, 422])
        expect(statusesSeen.get(status) ?? 0, String(status)).toBeGreaterThan(0);
    });

    it('arbitrary JSON documents and raw bytes', async () => {
      const document = fc.oneof(
        fc.jsonValue().map((value) => JSON.stringify(value)),
        fc.string({ maxLength: 200 }),
        fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
        fc.integer({ min: 1, max: 5000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
        fc.integer({ min: 1, max: 5000 }).map((depth) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`),
      );
      await fc.assert(
        fc.asyncProperty(document, contentType, async (body, type) => {
          const headers: Record<string, string> = { 'X-API-Key': account.key };
          if (type !== '') headers['Content-Type'] = type;
          checkAnswer(
            await request(`${service.url}/v1/calls/outbound`, { method: 'POST', headers, body }),
            account.key,
          );
        }),
        { numRuns: 1500 },
      );
    });

    it('random extra headers, methods and paths', async () => {
      const headerName = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,20}$/);
      const headerValue = fc.stringMatching(/^[ -~]{0,40}$/);
      await fc.assert(
        fc.asyncProperty(
          fc.dictionary(headerName, headerValue, { maxKeys: 5 }),
          fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH'),
          fc.constantFrom(
            '/v1/calls/outbound',
            '/v1/calls',
            '/v1/calls/call_x',
            '/v1/',
            '/v2/calls/outbound',
            '/v1/calls/outbound/',
          ),
          async (extra, method, path) => {
            const headers: Record<string, string> = {
              ...extra,
              'X-API-Key': account.key,
              'Content-Type': 'application/json',
            };
            const hasBody = method !== 'GET';
            const result = await request(`${service.url}${path}`, {
              method,
              headers,
              ...(hasBody ? { body: JSON.stringify({ agent_id: account.agentId }) } : {}),
            });
            expect(result.status).toBeLessThan(500);
            if (result.status !== 200) checkAnswer(result, account.key);
          },
        ),
        { numRuns: 500 },
      );
      expect((await request(`${service.url}/healthz`)).status).toBe(200);
    });
  });
});
