import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AbortError,
  AuthenticationError,
  CallwrightClient,
  type CallwrightClientOptions,
  CallwrightError,
  InvalidPhoneError,
  NetworkError,
  NotFoundError,
  parseRetryAfterMs,
  RateLimitError,
  type RetryInfo,
  ServerError,
  TimeoutError,
  ValidationError,
} from '../../src/client/index.js';
import {
  type AccountFixture,
  createAccountFixture,
  startTestService,
  type TestService,
} from '../helpers/service.js';
import { type FetchRecord, recordingFetch, startProxy, waitFor } from './harness.js';

/** The client against a real service (real HTTP, real SQLite), API only: calls stay queued. */

let service: TestService;
let account: AccountFixture;

function client(options: Partial<CallwrightClientOptions> & { log?: FetchRecord[] } = {}) {
  const { log = [], ...rest } = options;
  return new CallwrightClient({
    apiKey: account.key,
    baseUrl: service.url,
    baseDelayMs: 20,
    fetch: recordingFetch(log),
    ...rest,
  });
}

function callRequest(overrides: Record<string, unknown> = {}) {
  return { agent_id: account.agentId, from_number: account.number, to_number: '+15550100001', ...overrides };
}

async function failure(promise: Promise<unknown>): Promise<CallwrightError> {
  const error = await promise.then(
    () => new Error('expected a failure'),
    (caught: unknown) => caught,
  );
  if (!(error instanceof CallwrightError)) throw error;
  return error;
}

function requestsTo(path: string, method = 'GET'): number {
  return service.logs.lines.filter((line) => {
    const entry = JSON.parse(line) as { msg?: string; path?: string; method?: string };
    return entry.msg === 'request' && entry.path === path && entry.method === method;
  }).length;
}

beforeAll(async () => {
  service = await startTestService();
  account = await createAccountFixture(service.store);
});

afterAll(async () => {
  await service.close();
});

describe('calls', () => {
  it('createOutbound queues a call and get reads it back', async () => {
    const log: FetchRecord[] = [];
    const api = client({ log });
    const created = await api.calls.createOutbound(callRequest({ variables: { customer_name: 'Ann' } }));
    expect(created).toMatchObject({ status: 'queued', agent_id: account.agentId, to_number: '+15550100001' });
    const call = await api.calls.get(created.call_id);
    expect(call.call_id).toBe(created.call_id);
    expect(call.variables).toEqual({ customer_name: 'Ann' });
    expect(call.timeline[0]?.status).toBe('queued');
    // The key travels only in X-API-Key: never in a URL, never in another header.
    for (const record of log) {
      expect(record.url).not.toContain(account.key);
      expect(record.requestHeaders.get('x-api-key')).toBe(account.key);
      const others = [...record.requestHeaders].filter(([name]) => name !== 'x-api-key');
      expect(others.some(([, value]) => value.includes(account.key))).toBe(false);
    }
  });

  it('list iterates over every page with the cursor, newest first, and filters by status', async () => {
    const other = await createAccountFixture(service.store, { name: 'pages' });
    const api = new CallwrightClient({
      apiKey: other.key,
      baseUrl: `${service.url}/v1`,
      fetch: recordingFetch([]),
    });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const call = await api.calls.createOutbound({
        agent_id: other.agentId,
        from_number: other.number,
        to_number: '+15550100001',
      });
      ids.push(call.call_id);
    }
    const pages = [];
    for await (const page of api.calls.list({ limit: 2 })) pages.push(page);
    expect(pages.map((page) => page.data.length)).toEqual([2, 2, 1]);
    expect(pages.flatMap((page) => page.data.map((call) => call.call_id))).toEqual([...ids].reverse());
    expect(pages.at(-1)?.has_more).toBe(false);
    const completed = [];
    for await (const page of api.calls.list({ status: 'completed' })) completed.push(...page.data);
    expect(completed).toEqual([]);
  });
});

describe('typed errors', () => {
  it('400, 401, 404, 422 and 429 each come as their own class with status, code, message and request id', async () => {
    const api = client({ maxRetries: 0 });
    const cases: Array<[Promise<unknown>, new (...args: never[]) => CallwrightError, number, string]> = [
      [api.calls.createOutbound(callRequest({ context: 7 })), ValidationError, 400, 'validation_error'],
      [api.calls.listPage({ limit: 0 }), ValidationError, 400, 'validation_error'],
      [client({ apiKey: 'cw_live_wrong' }).calls.get('call_x'), AuthenticationError, 401, 'unauthorized'],
      [api.calls.get('call_01H00000000000000000000000'), NotFoundError, 404, 'not_found'],
      [api.events.get('evt_01H00000000000000000000000'), NotFoundError, 404, 'not_found'],
      [
        api.calls.createOutbound(callRequest({ agent_id: 'agt_01H00000000000000000000000' })),
        NotFoundError,
        404,
        'not_found',
      ],
      [
        api.calls.createOutbound(callRequest({ to_number: '5550100001' })),
        InvalidPhoneError,
        422,
        'invalid_phone',
      ],
    ];
    for (const [promise, ErrorClass, status, code] of cases) {
      const error = await failure(promise);
      expect(error).toBeInstanceOf(ErrorClass);
      expect(error).toMatchObject({ status, code });
      expect(error.message.length).toBeGreaterThan(0);
      expect(error.requestId).toMatch(/^req_[0-9a-f]{16}$/);
    }

    const limited = await startTestService({ ratePolicy: '1/60s' });
    try {
      const fixture = await createAccountFixture(limited.store);
      const api429 = new CallwrightClient({ apiKey: fixture.key, baseUrl: limited.url, maxRetries: 0 });
      await api429.calls.listPage();
      const error = await failure(api429.calls.listPage());
      expect(error).toBeInstanceOf(RateLimitError);
      expect(error).toMatchObject({ status: 429, code: 'rate_limited' });
      expect((error as RateLimitError).retryAfterMs).toBeGreaterThanOrEqual(1000);
      // A Retry-After longer than the client will wait is thrown at once, not slept through.
      const patient = new CallwrightClient({
        apiKey: fixture.key,
        baseUrl: limited.url,
        maxRetryAfterMs: 100,
      });
      const started = Date.now();
      expect(await failure(patient.calls.listPage())).toBeInstanceOf(RateLimitError);
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      await limited.close();
    }
  });
});

describe('retries', () => {
  it('under a small rate limit every create succeeds, each retry waiting at least Retry-After', async () => {
    const limited = await startTestService({ ratePolicy: '2/1s' });
    try {
      const fixture = await createAccountFixture(limited.store);
      const log: FetchRecord[] = [];
      const retries: RetryInfo[] = [];
      const api = new CallwrightClient({
        apiKey: fixture.key,
        baseUrl: limited.url,
        maxRetries: 6,
        baseDelayMs: 50,
        fetch: recordingFetch(log),
        onRetry: (info) => retries.push(info),
      });
      const body = { agent_id: fixture.agentId, from_number: fixture.number, to_number: '+15550100001' };
      const created = [];
      for (let i = 0; i < 5; i++) created.push(await api.calls.createOutbound(body));
      expect(new Set(created.map((call) => call.call_id)).size).toBe(5);
      expect(log.filter((record) => record.status === 200)).toHaveLength(5);
      const limitedAnswers = log.filter((record) => record.status === 429);
      expect(limitedAnswers.length).toBeGreaterThan(0);
      expect(retries.length).toBe(limitedAnswers.length);
      for (const retry of retries) expect(retry.error).toBeInstanceOf(RateLimitError);
      for (let i = 0; i + 1 < log.length; i++) {
        const record = log[i] as FetchRecord;
        if (record.status !== 429) continue;
        const waitedMs = (log[i + 1] as FetchRecord).atMs - record.atMs;
        expect(waitedMs).toBeGreaterThanOrEqual(Number(record.retryAfter) * 1000 - 20);
      }
    } finally {
      await limited.close();
    }
  });

  it('backoff is full jitter: random within an exponentially growing, capped ceiling', async () => {
    const { Transport } = await import('../../src/client/transport.js');
    const options = {
      apiKey: 'k',
      baseUrl: 'http://127.0.0.1:1',
      timeoutMs: 1000,
      maxRetries: 3,
      baseDelayMs: 100,
      maxDelayMs: 1000,
      maxRetryAfterMs: 60_000,
      fetch,
    };
    const high = new Transport({ ...options, random: () => 0.999 });
    expect([1, 2, 3, 4, 5, 6].map((n) => high.backoffMs(n))).toEqual([99, 199, 399, 799, 999, 999]);
    expect(new Transport({ ...options, random: () => 0 }).backoffMs(4)).toBe(0);
    expect(parseRetryAfterMs('3')).toBe(3000);
    expect(parseRetryAfterMs(new Date(Date.now() + 5000).toUTCString())).toBeGreaterThan(3000);
    expect(parseRetryAfterMs('soon')).toBeNull();
  });

  it('never retries a create after a connection reset past the request: one call, a NetworkError', async () => {
    const proxy = await startProxy(service.url, 'reset-after-request');
    const fixture = await createAccountFixture(service.store, { name: 'reset' });
    const retries: RetryInfo[] = [];
    try {
      const api = new CallwrightClient({
        apiKey: fixture.key,
        baseUrl: proxy.url,
        maxRetries: 3,
        baseDelayMs: 10,
        onRetry: (info) => retries.push(info),
      });
      const before = requestsTo('/v1/calls/outbound', 'POST');
      const error = await failure(
        api.calls.createOutbound({
          agent_id: fixture.agentId,
          from_number: fixture.number,
          to_number: '+15550100001',
        }),
      );
      expect(error).toBeInstanceOf(NetworkError);
      expect(error).not.toBeInstanceOf(TimeoutError);
      expect(error).toMatchObject({ status: 0, code: 'network_error', requestId: null });
      expect(retries).toEqual([]);
      expect(proxy.forwarded.filter((bytes) => bytes.startsWith('POST /v1/calls/outbound'))).toHaveLength(1);
      await waitFor('the server to log the create', () =>
        requestsTo('/v1/calls/outbound', 'POST') > before ? true : undefined,
      );
      expect(requestsTo('/v1/calls/outbound', 'POST') - before).toBe(1);
      const calls = await service.store.calls.list(fixture.accountId, { limit: 10 });
      expect(calls).toHaveLength(1); // the server did create it: a retry would have made two

      // The same reset on a read is retried, then thrown.
      const reads = requestsTo('/v1/calls');
      expect(await failure(api.calls.listPage())).toBeInstanceOf(NetworkError);
      expect(retries).toHaveLength(3);
      await waitFor('the server to log the reads', () =>
        requestsTo('/v1/calls') - reads >= 4 ? true : undefined,
      );
      expect(requestsTo('/v1/calls') - reads).toBe(4);
    } finally {
      await proxy.close();
    }
  });

  it('reads are retried on 5xx until they succeed; a create is not retried on 5xx', async () => {
    const proxy = await startProxy(service.url, 'bad-gateway-first', 2);
    try {
      const retries: RetryInfo[] = [];
      const api = client({
        baseUrl: proxy.url,
        fetch: globalThis.fetch,
        onRetry: (info) => retries.push(info),
      });
      const page = await api.calls.listPage({ limit: 1 });
      expect(page.data).toHaveLength(1);
      expect(retries.map((retry) => retry.error.status)).toEqual([502, 502]);
      expect(retries[0]?.error).toBeInstanceOf(ServerError);

      const second = await startProxy(service.url, 'bad-gateway-first', 1);
      try {
        const before = requestsTo('/v1/calls/outbound', 'POST');
        const createRetries: RetryInfo[] = [];
        const creator = client({
          baseUrl: second.url,
          fetch: globalThis.fetch,
          onRetry: (info) => createRetries.push(info),
        });
        const error = await failure(creator.calls.createOutbound(callRequest()));
        expect(error).toBeInstanceOf(ServerError);
        expect(error).toMatchObject({ status: 502, code: 'server_error' });
        expect(createRetries).toEqual([]);
        expect(requestsTo('/v1/calls/outbound', 'POST')).toBe(before);
      } finally {
        await second.close();
      }
    } finally {
      await proxy.close();
    }
  });

  it('a refused connection is retried, even for a create (nothing was sent)', async () => {
    const proxy = await startProxy(service.url, 'hold');
    const url = proxy.url;
    await proxy.close();
    const retries: RetryInfo[] = [];
    const api = client({
      baseUrl: url,
      fetch: globalThis.fetch,
      maxRetries: 2,
      onRetry: (info) => retries.push(info),
    });
    expect(await failure(api.calls.createOutbound(callRequest()))).toBeInstanceOf(NetworkError);
    expect(retries).toHaveLength(2);
  });
});

describe('timeouts and AbortSignal', () => {
  it('a silent server gives a TimeoutError after timeoutMs, and a create is not retried', async () => {
    const proxy = await startProxy(service.url, 'hold');
    try {
      const retries: RetryInfo[] = [];
      const api = client({
        baseUrl: proxy.url,
        fetch: globalThis.fetch,
        timeoutMs: 200,
        onRetry: (info) => retries.push(info),
      });
      const started = Date.now();
      const error = await failure(api.calls.createOutbound(callRequest()));
      expect(error).toBeInstanceOf(TimeoutError);
      expect(error.code).toBe('timeout');
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);
      expect(retries).toEqual([]);
      expect(await failure(api.calls.get('call_x', { timeoutMs: 100 }))).toBeInstanceOf(TimeoutError);
      expect(retries).toHaveLength(3);
    } finally {
      await proxy.close();
    }
  });

  it('an AbortSignal stops the request, and the wait between retries', async () => {
    const proxy = await startProxy(service.url, 'hold');
    try {
      const api = client({ baseUrl: proxy.url, fetch: globalThis.fetch });
      const error = await failure(api.calls.get('call_x', { signal: AbortSignal.timeout(100) }));
      expect(error).toBeInstanceOf(AbortError);
      expect(error.code).toBe('aborted');
      const aborted = new AbortController();
      aborted.abort();
      expect(await failure(client().calls.listPage({}, { signal: aborted.signal }))).toBeInstanceOf(
        AbortError,
      );
    } finally {
      await proxy.close();
    }
    const limited = await startTestService({ ratePolicy: '1/60s' });
    try {
      const fixture = await createAccountFixture(limited.store);
      const api = new CallwrightClient({ apiKey: fixture.key, baseUrl: limited.url });
      await api.calls.listPage();
      const started = Date.now();
      const error = await failure(api.calls.listPage({}, { signal: AbortSignal.timeout(150) }));
      expect(error).toBeInstanceOf(AbortError);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await limited.close();
    }
  });
});
