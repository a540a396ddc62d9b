import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeApiKey } from '../../src/admin/apiKeys.js';
import { createOutboundCall } from '../../src/calls/createOutboundCall.js';
import { AppError } from '../../src/domain/errors.js';
import { queueNames } from '../../src/queue/types.js';
import { postCall, rawPost, request } from '../helpers/http.js';
import {
  type AccountFixture,
  createAccountFixture,
  startTestService,
  type TestService,
} from '../helpers/service.js';
import { breakJobQueue, countJobs, sqlOn, storeKinds } from '../helpers/stores.js';

/**
 * Conformance with SPEC.md (Endpoints, Authentication, Errors) and DESIGN.md §1, one test per
 * rule, through real HTTP against a real SQLite file.
 */

describe.each(storeKinds)('on the %s store', (kind) => {
  let service: TestService;
  let account: AccountFixture;

  function validBody(overrides: Record<string, unknown> = {}) {
    return {
      agent_id: account.agentId,
      from_number: account.number,
      to_number: '+15550100001',
      ...overrides,
    };
  }

  function expectError(result: { status: number; body: unknown }, status: number, code: string) {
    expect(result.status).toBe(status);
    expect(result.body).toEqual({ error: { code, message: expect.any(String) } });
    const message = (result.body as { error: { message: string } }).error.message;
    expect(message.length).toBeGreaterThan(0);
    expect(message).not.toMatch(/\bat .*\.(js|ts):\d+/); // never a stack trace
  }

  beforeAll(async () => {
    service = await startTestService({ store: kind });
    account = await createAccountFixture(service.store);
  });

  afterAll(async () => {
    await service.close();
  });

  describe('POST /v1/calls/outbound: success', () => {
    it('answers 200 with exactly the six fields, status queued, echoes equal to the values sent', async () => {
      const body = validBody({ to_number: '+442071838750' });
      const result = await postCall(service.url, account.key, body);
      expect(result.status).toBe(200);
      const call = result.body as Record<string, string>;
      expect(Object.keys(call).sort()).toEqual(
        ['agent_id', 'call_id', 'created_at', 'from_number', 'status', 'to_number'].sort(),
      );
      expect(call.status).toBe('queued');
      expect(call.agent_id).toBe(body.agent_id);
      expect(call.to_number).toBe(body.to_number);
      expect(call.from_number).toBe(body.from_number);
      expect(call.call_id).toMatch(/^call_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(call.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(Math.abs(Date.parse(call.created_at as string) - Date.now())).toBeLessThan(60_000);
    });

    it('writes the call row and its dispatch job durably before answering', async () => {
      const result = await postCall(service.url, account.key, validBody());
      const callId = (result.body as { call_id: string }).call_id;
      const rows = await sqlOn(service.store, 'SELECT status, account_id FROM calls WHERE id = ?', [callId]);
      expect(rows).toEqual([{ status: 'queued', account_id: account.accountId }]);
      expect(await countJobs(service.store, queueNames.dispatch, { call_id: callId })).toBe(1);
    });

    it('creates a new call_id for every successful request (no de-duplication)', async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 5; i++) {
        const result = await postCall(service.url, account.key, validBody());
        expect(result.status).toBe(200);
        ids.add((result.body as { call_id: string }).call_id);
      }
      expect(ids.size).toBe(5);
    });

    it('accepts the optional overrides and stores them as sent, without changing the agent', async () => {
      const before = await service.store.agents.get(account.accountId, account.agentId);
      const overrides = {
        first_message: 'Hi there, it is Ann from the clinic 👋',
        context: 'The customer prefers mornings.',
        variables: { customer_name: 'Ann', slot: 'Tuesday 10:00' },
      };
      const result = await postCall(service.url, account.key, validBody(overrides));
      expect(result.status).toBe(200);
      const callId = (result.body as { call_id: string }).call_id;
      const stored = await service.store.calls.get(account.accountId, callId);
      expect(stored?.firstMessage).toBe(overrides.first_message);
      expect(stored?.context).toBe(overrides.context);
      expect(stored?.variables).toEqual(overrides.variables);
      expect(await service.store.agents.get(account.accountId, account.agentId)).toEqual(before);
    });

    it('accepts number and boolean variable values and a charset parameter on the Content-Type', async () => {
      const result = await postCall(
        service.url,
        account.key,
        validBody({ variables: { customer_name: 42, slot: true } }),
        { 'Content-Type': 'application/json; charset=utf-8' },
      );
      expect(result.status).toBe(200);
    });
  });

  describe('authentication (401 unauthorized)', () => {
    it('refuses a request without the header', async () => {
      expectError(await postCall(service.url, null, validBody()), 401, 'unauthorized');
    });

    it('says "invalid or missing API key"', async () => {
      const result = await postCall(service.url, null, validBody());
      expect((result.body as { error: { message: string } }).error.message).toBe(
        'invalid or missing API key',
      );
    });

    it('refuses an unknown key, a key with a broken checksum, and garbage', async () => {
      for (const key of [
        'cw_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
        `${account.key.slice(0, -1)}${account.key.endsWith('A') ? 'B' : 'A'}`,
        'not a key',
        `${account.key}x`,
        account.key.toLowerCase(),
      ]) {
        expectError(await postCall(service.url, key, validBody()), 401, 'unauthorized');
      }
    });

    it('reads the key only from a header named exactly X-API-Key (raw socket, any other casing fails)', async () => {
      const body = JSON.stringify(validBody());
      const exact = await rawPost(
        service.url,
        '/v1/calls/outbound',
        [`X-API-Key: ${account.key}`, 'Content-Type: application/json'],
        body,
      );
      expect(exact.status).toBe(200);
      for (const name of ['x-api-key', 'X-Api-Key', 'X-API-KEY', 'x-API-key']) {
        const result = await rawPost(
          service.url,
          '/v1/calls/outbound',
          [`${name}: ${account.key}`, 'Content-Type: application/json'],
          body,
        );
        expectError(result, 401, 'unauthorized');
        expect((result.body as { error: { message: string } }).error.message).toBe(
          `invalid or missing API key: the header name is case-sensitive, send exactly X-API-Key (this request sent ${name})`,
        );
      }
    });

    it('refuses a key given twice', async () => {
      const result = await rawPost(
        service.url,
        '/v1/calls/outbound',
        [`X-API-Key: ${account.key}`, `X-API-Key: ${account.key}`, 'Content-Type: application/json'],
        JSON.stringify(validBody()),
      );
      expectError(result, 401, 'unauthorized');
    });

    it('makes a revocation count from the very next request, and leaves other keys working', async () => {
      const other = await createAccountFixture(service.store, { name: 'revocation' });
      const { createApiKey } = await import('../../src/admin/apiKeys.js');
      const second = await createApiKey(service.store, other.accountId, 'second');
      const body = { agent_id: other.agentId, from_number: other.number, to_number: '+15550100001' };
      expect((await postCall(service.url, other.key, body)).status).toBe(200);
      await revokeApiKey(service.store, other.accountId, other.keyId);
      expectError(await postCall(service.url, other.key, body), 401, 'unauthorized');
      expect((await postCall(service.url, second.key, body)).status).toBe(200);
    });

    it('re-checks the key inside the insert transaction: a key revoked in flight gets 401 and writes nothing', async () => {
      const other = await createAccountFixture(service.store, { name: 'in flight' });
      const found = await service.store.apiKeys.findByHash(
        (await import('../../src/domain/apiKeys.js')).hashApiKey(other.key),
      );
      expect(found).not.toBeNull();
      // The request authenticated (found), then the key is revoked before the insert runs.
      await revokeApiKey(service.store, other.accountId, other.keyId);
      const attempt = createOutboundCall(
        service.store,
        { account: found!.account, apiKeyId: found!.key.id },
        { agent_id: other.agentId, from_number: other.number, to_number: '+15550100001' },
      );
      await expect(attempt).rejects.toMatchObject({ code: 'unauthorized', status: 401 });
      await expect(attempt).rejects.toBeInstanceOf(AppError);
      expect(await service.store.calls.list(other.accountId, { limit: 10 })).toEqual([]);
    });
  });

  describe('validation (400 validation_error) and phone format (422 invalid_phone)', () => {
    const cases: [string, (body: Record<string, unknown>) => unknown][] = [
      ['agent_id missing', ({ agent_id: _, ...rest }) => rest],
      ['from_number missing', ({ from_number: _, ...rest }) => rest],
      ['to_number missing', ({ to_number: _, ...rest }) => rest],
      ['agent_id not a string', (b) => ({ ...b, agent_id: 12 })],
      ['agent_id empty', (b) => ({ ...b, agent_id: '' })],
      ['agent_id over 64 characters', (b) => ({ ...b, agent_id: 'a'.repeat(65) })],
      ['to_number null', (b) => ({ ...b, to_number: null })],
      ['to_number a number', (b) => ({ ...b, to_number: 15550100001 })],
      ['from_number empty', (b) => ({ ...b, from_number: '' })],
      ['first_message not a string', (b) => ({ ...b, first_message: 5 })],
      ['first_message null', (b) => ({ ...b, first_message: null })],
      ['first_message over 2,000 characters', (b) => ({ ...b, first_message: 'x'.repeat(2001) })],
      ['context over 10,000 characters', (b) => ({ ...b, context: 'x'.repeat(10_001) })],
      ['context an object', (b) => ({ ...b, context: {} })],
      ['variables an array', (b) => ({ ...b, variables: [] })],
      ['variables null', (b) => ({ ...b, variables: null })],
      ['variables a string', (b) => ({ ...b, variables: 'a=b' })],
      [
        'variables with 51 keys',
        (b) => ({ ...b, variables: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`v${i}`, 1])) }),
      ],
      ['a variable name with a dash', (b) => ({ ...b, variables: { 'bad-name': 'x' } })],
      ['a variable name starting with a digit', (b) => ({ ...b, variables: { '1st': 'x' } })],
      ['a variable name over 64 characters', (b) => ({ ...b, variables: { [`a${'b'.repeat(64)}`]: 'x' } })],
      [
        'a variable value over 1,000 characters',
        (b) => ({ ...b, variables: { customer_name: 'x'.repeat(1001) } }),
      ],
      ['a variable value that is an object', (b) => ({ ...b, variables: { customer_name: { a: 1 } } })],
      ['a variable value that is null', (b) => ({ ...b, variables: { customer_name: null } })],
      ['a variable value that is an array', (b) => ({ ...b, variables: { customer_name: ['a'] } })],
      ['an unknown top-level field', (b) => ({ ...b, callback_url: 'https://example.com' })],
      [
        'a __proto__ field',
        () => JSON.parse(`{"__proto__":{"x":1},"agent_id":"a","from_number":"+1555","to_number":"+1555"}`),
      ],
    ];

    for (const [name, mutate] of cases) {
      it(`400 for ${name}`, async () => {
        expectError(await postCall(service.url, account.key, mutate(validBody())), 400, 'validation_error');
      });
    }

    it('names the field in the message', async () => {
      const result = await postCall(service.url, account.key, validBody({ first_message: 'x'.repeat(2001) }));
      expect((result.body as { error: { message: string } }).error.message).toContain('first_message');
      const unknown = await postCall(service.url, account.key, validBody({ colour: 'red' }));
      expect((unknown.body as { error: { message: string } }).error.message).toContain('colour');
    });

    it('takes the limits inclusively: 2,000 / 10,000 / 1,000 characters (emoji count as one) and 50 keys', async () => {
      const fifty = Object.fromEntries(Array.from({ length: 48 }, (_, i) => [`v${i}`, i]));
      const agent = await service.store.agents.create({
        ...(await service.store.agents.get(account.accountId, account.agentId))!,
        variables: [...Object.keys(fifty), 'customer_name', 'slot'].map((name) => ({
          name,
          default: null,
          description: '',
          required: false,
          type: 'any' as const,
        })),
      });
      const result = await postCall(
        service.url,
        account.key,
        validBody({
          agent_id: agent.id,
          first_message: '😀'.repeat(2000),
          context: 'c'.repeat(10_000),
          variables: { ...fifty, customer_name: 'n'.repeat(1000), slot: '🙂'.repeat(1000) },
        }),
      );
      expect(result.status).toBe(200);
    });

    for (const [field, value] of [
      ['to_number', '15550100001'],
      ['to_number', '+0123456'],
      ['to_number', '+1 555 010 0001'],
      ['to_number', '+1234567890123456'],
      ['to_number', '+'],
      ['from_number', 'caller'],
      ['from_number', '+1555abc'],
    ] as const) {
      it(`422 invalid_phone for ${field} = "${value}"`, async () => {
        const result = await postCall(service.url, account.key, validBody({ [field]: value }));
        expectError(result, 422, 'invalid_phone');
        expect((result.body as { error: { message: string } }).error.message).toContain(field);
      });
    }

    it('accepts the shortest and longest E.164 numbers as to_number', async () => {
      for (const number of ['+12', '+123456789012345']) {
        expect((await postCall(service.url, account.key, validBody({ to_number: number }))).status).toBe(200);
      }
    });
  });

  describe('Content-Type and body (400 validation_error)', () => {
    it('refuses a missing or wrong Content-Type', async () => {
      for (const contentType of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'application/jsonp',
        'application/json; charset=latin1',
      ]) {
        expectError(
          await postCall(service.url, account.key, validBody(), { 'Content-Type': contentType }),
          400,
          'validation_error',
        );
      }
      const none = await rawPost(
        service.url,
        '/v1/calls/outbound',
        [`X-API-Key: ${account.key}`],
        JSON.stringify(validBody()),
      );
      expectError(none, 400, 'validation_error');
    });

    it('refuses bodies that are not one JSON object', async () => {
      for (const body of ['', 'null', '[]', '"text"', '42', '{"agent_id":', '{} {}', '\u0000']) {
        expectError(await postCall(service.url, account.key, body), 400, 'validation_error');
      }
    });

    it('refuses a body over 64 KiB with 400 (not 413), and accepts one just under', async () => {
      const padding = (size: number) => JSON.stringify(validBody({ context: 'x' })).length + size;
      const big = JSON.stringify({ ...validBody(), context: 'x'.repeat(70_000) });
      expect(Buffer.byteLength(big)).toBeGreaterThan(64 * 1024);
      expectError(await postCall(service.url, account.key, big), 400, 'validation_error');
      // 64 KiB of JSON made of whitespace around a valid object is still one object within the limit.
      const json = JSON.stringify(validBody());
      const justUnder = json + ' '.repeat(64 * 1024 - Buffer.byteLength(json));
      expect(padding(0)).toBeGreaterThan(0);
      expect((await postCall(service.url, account.key, justUnder)).status).toBe(200);
    });
  });

  describe('agent and caller ID (404 not_found, 400 validation_error)', () => {
    it('404 for an unknown agent', async () => {
      expectError(
        await postCall(service.url, account.key, validBody({ agent_id: 'agt_01H00000000000000000000000' })),
        404,
        'not_found',
      );
    });

    it('404 for an inactive agent, and 200 again once it is activated', async () => {
      await service.store.agents.setActive(account.accountId, account.agentId, false);
      expectError(await postCall(service.url, account.key, validBody()), 404, 'not_found');
      await service.store.agents.setActive(account.accountId, account.agentId, true);
      expect((await postCall(service.url, account.key, validBody())).status).toBe(200);
    });

    it('400 when from_number is not configured in the account', async () => {
      const result = await postCall(service.url, account.key, validBody({ from_number: '+15550001234' }));
      expectError(result, 400, 'validation_error');
      expect((result.body as { error: { message: string } }).error.message).toContain('from_number');
    });

    it('400 naming a variable the agent does not declare', async () => {
      const result = await postCall(
        service.url,
        account.key,
        validBody({ variables: { customer_name: 'A', colour: 'red' } }),
      );
      expectError(result, 400, 'validation_error');
      expect((result.body as { error: { message: string } }).error.message).toContain('colour');
    });
  });

  describe('the order of checks (DESIGN §1)', () => {
    it('1 before 3: no key and a wrong Content-Type give 401', async () => {
      expectError(
        await postCall(service.url, null, 'x', { 'Content-Type': 'text/plain' }),
        401,
        'unauthorized',
      );
    });

    it('3 before 4: a wrong Content-Type with a bad body gives 400 about the Content-Type', async () => {
      const result = await postCall(
        service.url,
        account.key,
        { agent_id: 1 },
        { 'Content-Type': 'text/plain' },
      );
      expectError(result, 400, 'validation_error');
      expect((result.body as { error: { message: string } }).error.message).toContain('Content-Type');
    });

    it('4 before 5: a shape error and a bad phone give 400', async () => {
      expectError(
        await postCall(service.url, account.key, validBody({ to_number: 'nope', context: 7 })),
        400,
        'validation_error',
      );
    });

    it('5 before 6: a bad phone and an unknown agent give 422', async () => {
      expectError(
        await postCall(service.url, account.key, validBody({ to_number: 'nope', agent_id: 'agt_x' })),
        422,
        'invalid_phone',
      );
    });

    it('6 before 7: an unknown agent and an unconfigured caller ID give 404', async () => {
      expectError(
        await postCall(
          service.url,
          account.key,
          validBody({ agent_id: 'agt_x', from_number: '+15550001234' }),
        ),
        404,
        'not_found',
      );
    });

    it('7 before 8: an unconfigured caller ID and an undeclared variable give 400 about from_number', async () => {
      const result = await postCall(
        service.url,
        account.key,
        validBody({ from_number: '+15550001234', variables: { colour: 'red' } }),
      );
      expect((result.body as { error: { message: string } }).error.message).toContain('from_number');
    });
  });

  describe('routes and failures', () => {
    it('404 not_found for unknown routes and wrong methods, in the error shape', async () => {
      expectError(await request(`${service.url}/v1/nothing`), 404, 'not_found');
      expectError(
        await request(`${service.url}/v1/calls/outbound`, { headers: { 'X-API-Key': account.key } }),
        404,
        'not_found',
      );
      expectError(await request(`${service.url}/v1/calls/outbound`, { method: 'PUT' }), 404, 'not_found');
    });

    it('500 server_error without a stack trace when the store fails', async () => {
      const broken = await startTestService({ store: kind });
      const fixture = await createAccountFixture(broken.store);
      await breakJobQueue(broken.store);
      const result = await postCall(broken.url, fixture.key, {
        agent_id: fixture.agentId,
        from_number: fixture.number,
        to_number: '+15550100001',
      });
      expectError(result, 500, 'server_error');
      expect(result.text).not.toContain('jobs');
      expect(broken.logs.text()).toContain('unexpected error');
      await broken.close();
    });
  });
});
