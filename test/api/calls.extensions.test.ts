import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueNames } from '../../src/queue/types.js';
import { postCall, request } from '../helpers/http.js';
import {
  type AccountFixture,
  createAccountFixture,
  startTestService,
  type TestService,
} from '../helpers/service.js';
import { countJobs, storeKinds } from '../helpers/stores.js';

/** The read extensions of DESIGN §3, isolation between accounts, persistence and logs. */

describe.each(storeKinds)('on the %s store', (kind) => {
  let service: TestService;
  let alpha: AccountFixture;
  let beta: AccountFixture;

  function body(fixture: AccountFixture, overrides: Record<string, unknown> = {}) {
    return {
      agent_id: fixture.agentId,
      from_number: fixture.number,
      to_number: '+15550100001',
      ...overrides,
    };
  }

  async function createCall(
    fixture: AccountFixture,
    overrides: Record<string, unknown> = {},
  ): Promise<string> {
    const result = await postCall(service.url, fixture.key, body(fixture, overrides));
    expect(result.status).toBe(200);
    return (result.body as { call_id: string }).call_id;
  }

  function get(path: string, key: string) {
    return request(`${service.url}${path}`, { headers: { 'X-API-Key': key } });
  }

  beforeAll(async () => {
    service = await startTestService({ store: kind });
    alpha = await createAccountFixture(service.store, { name: 'alpha' });
    beta = await createAccountFixture(service.store, { name: 'beta', number: '+15550008888' });
  });

  afterAll(async () => {
    await service.close();
  });

  describe('GET /v1/calls/{call_id}', () => {
    it('returns the call record with the overrides as sent and no invented later states', async () => {
      const callId = await createCall(alpha, { context: 'VIP', variables: { customer_name: 'Ann' } });
      const result = await get(`/v1/calls/${callId}`, alpha.key);
      expect(result.status).toBe(200);
      expect(result.body).toMatchObject({
        call_id: callId,
        status: 'queued',
        agent_id: alpha.agentId,
        context: 'VIP',
        first_message: null,
        variables: { customer_name: 'Ann' },
        end_reason: null,
        answered_by: null,
        dialed_at: null,
        answered_at: null,
        ended_at: null,
        duration_seconds: null,
        transcript: [],
        recording_url: null,
        extracted_data: {},
      });
      const timeline = (result.body as { timeline: { status: string }[] }).timeline;
      expect(timeline.map((entry) => entry.status)).toEqual(['queued']);
    });

    it('404 for an unknown id and for malformed ids', async () => {
      for (const id of ['call_01H00000000000000000000000', 'nope', '%27%3B--']) {
        const result = await get(`/v1/calls/${id}`, alpha.key);
        expect(result.status).toBe(404);
        expect((result.body as { error: { code: string } }).error.code).toBe('not_found');
      }
    });
  });

  describe('GET /v1/calls', () => {
    it('pages newest first with a cursor until has_more is false', async () => {
      const fixture = await createAccountFixture(service.store, { name: 'paging' });
      const created: string[] = [];
      for (let i = 0; i < 7; i++) created.push(await createCall(fixture));
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const query: string = cursor ? `?limit=3&cursor=${cursor}` : '?limit=3';
        const result = await get(`/v1/calls${query}`, fixture.key);
        expect(result.status).toBe(200);
        const page = result.body as {
          data: { call_id: string }[];
          has_more: boolean;
          next_cursor: string | null;
        };
        seen.push(...page.data.map((call) => call.call_id));
        cursor = page.has_more ? page.next_cursor : null;
        pages++;
      } while (cursor && pages < 10);
      expect(pages).toBe(3);
      expect(seen).toEqual([...created].reverse());
    });

    it('filters by status', async () => {
      const queued = await get('/v1/calls?status=queued&limit=100', alpha.key);
      expect((queued.body as { data: unknown[] }).data.length).toBeGreaterThan(0);
      const completed = await get('/v1/calls?status=completed', alpha.key);
      expect((completed.body as { data: unknown[] }).data).toEqual([]);
    });

    it('400 validation_error for a bad limit, status or cursor', async () => {
      for (const query of [
        '?limit=0',
        '?limit=101',
        '?limit=abc',
        '?status=done',
        '?cursor=xyz',
        '?colour=red',
      ]) {
        const result = await get(`/v1/calls${query}`, alpha.key);
        expect(result.status, query).toBe(400);
        expect((result.body as { error: { code: string } }).error.code).toBe('validation_error');
      }
    });
  });

  describe('isolation between accounts', () => {
    it("one account's key cannot use or see another account's agents, numbers or calls", async () => {
      const alphaCall = await createCall(alpha);
      // Beta using alpha's agent: the agent does not exist for beta.
      const withAlphaAgent = await postCall(service.url, beta.key, body(beta, { agent_id: alpha.agentId }));
      expect(withAlphaAgent.status).toBe(404);
      // Beta using alpha's caller ID: not configured in beta's account.
      const withAlphaNumber = await postCall(
        service.url,
        beta.key,
        body(beta, { from_number: alpha.number }),
      );
      expect(withAlphaNumber.status).toBe(400);
      expect((await get(`/v1/calls/${alphaCall}`, beta.key)).status).toBe(404);
      const list = await get('/v1/calls?limit=100', beta.key);
      expect((list.body as { data: { call_id: string }[] }).data.map((call) => call.call_id)).not.toContain(
        alphaCall,
      );
    });
  });

  describe('persistence', () => {
    it('keeps calls, keys and their dispatch jobs across a restart on the same data', async () => {
      const callId = await createCall(alpha);
      await service.restart();
      const result = await get(`/v1/calls/${callId}`, alpha.key);
      expect(result.status).toBe(200);
      expect((result.body as { status: string }).status).toBe('queued');
      expect(await countJobs(service.store, queueNames.dispatch, { call_id: callId })).toBe(1);
    });
  });

  describe('public routes', () => {
    it('GET /healthz and /readyz answer without a key', async () => {
      expect((await request(`${service.url}/healthz`)).body).toEqual({ status: 'ok' });
      expect((await request(`${service.url}/readyz`)).body).toEqual({ status: 'ready' });
    });

    it('GET /v1/openapi.json describes every operation, its errors and the key header', async () => {
      const result = await request(`${service.url}/v1/openapi.json`);
      expect(result.status).toBe(200);
      const document = result.body as {
        openapi: string;
        paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown }>>;
        components: { securitySchemes: { apiKey: { name: string; in: string } } };
      };
      expect(document.openapi).toBe('3.1.0');
      expect(document.components.securitySchemes.apiKey).toMatchObject({ name: 'X-API-Key', in: 'header' });
      const create = document.paths['/v1/calls/outbound']?.post;
      expect(Object.keys(create?.responses ?? {}).sort()).toEqual([
        '200',
        '400',
        '401',
        '404',
        '422',
        '429',
        '500',
      ]);
      expect(create?.requestBody).toBeDefined();
      expect(document.paths['/v1/calls/{call_id}']?.get).toBeDefined();
      expect(document.paths['/v1/calls']?.get).toBeDefined();
    });
  });

  describe('logs', () => {
    it('write one line per request and never an API key or a full phone number', async () => {
      const before = service.logs.lines.length;
      await createCall(alpha, { to_number: '+14155550123' });
      await postCall(service.url, 'cw_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', body(alpha));
      const lines = service.logs.lines.slice(before);
      const requestLines = lines.filter((line) => JSON.parse(line).msg === 'request');
      expect(requestLines).toHaveLength(2);
      const text = service.logs.text();
      expect(text).not.toContain(alpha.key);
      expect(text).not.toContain('cw_live_');
      expect(text).not.toContain('+14155550123');
      expect(text).not.toContain('4155550123');
    });
  });
});
