import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postCall, request } from '../helpers/http.js';
import { assertRawConforms, exchangeRaw, type RawExchange } from '../helpers/rawSocket.js';
import {
  type AccountFixture,
  createAccountFixture,
  startTestService,
  type TestService,
} from '../helpers/service.js';
import { storeKinds } from '../helpers/stores.js';

/**
 * Issue 12, defects 8 and 9: slow and oversized requests are cut off, and whatever the HTTP
 * parser refuses still gets `{"error":{"code","message"}}` with a documented status.
 */

const requestTimeoutMs = 1_000;
/** How long a test waits for the server to act: generous, so a loaded machine does not flake. */
const deadlineMs = 15_000;
/**
 * A body too big to read: kernel buffers take up to tcp_rmem's + tcp_wmem's maximum (36 MiB on this
 * kind of machine, autotuned) and a loaded server reads on until its close catches up (4–6 MiB
 * accepted in all when quiet, 19 MiB once in CI), so a server that stops reading accepts well under half of it; one that reads it takes all.
 */
const hugeBodyBytes = 200 * 1024 * 1024;

function expectValidationError(exchange: RawExchange) {
  expect(exchange.response.status).toBe(400);
  expect(exchange.response.headers['content-type']).toContain('application/json');
  expect(exchange.response.body).toEqual({
    error: { code: 'validation_error', message: expect.any(String) },
  });
}

describe.each(storeKinds)('the HTTP edge on the %s store', (kind) => {
  let service: TestService;
  let fixture: AccountFixture;
  let host: string;

  beforeAll(async () => {
    service = await startTestService({
      store: kind,
      httpTimeouts: {
        requestTimeoutMs,
        headersTimeoutMs: requestTimeoutMs,
        idleTimeoutMs: 30_000,
        keepAliveTimeoutMs: 5_000,
      },
    });
    fixture = await createAccountFixture(service.store);
    host = new URL(service.url).host;
  });

  afterAll(async () => {
    await service.close();
  });

  function createHead(headerLines: string[]): string {
    return [`POST /v1/calls/outbound HTTP/1.1`, `Host: ${host}`, ...headerLines, '', ''].join('\r\n');
  }

  describe('slow clients (defect 8)', () => {
    it('closes a connection that sent its headers and one body byte once the request time is up', async () => {
      const head = createHead([
        `X-API-Key: ${fixture.key}`,
        'Content-Type: application/json',
        'Content-Length: 100',
      ]);
      const exchange = await exchangeRaw(service.url, `${head}{`, { deadlineMs });
      expect(exchange.closedByServer).toBe(true);
      expectValidationError(exchange);
      await assertRawConforms(service.url, 'POST', '/v1/calls/outbound', exchange.response);
    });

    it('closes a connection whose headers never end', async () => {
      const exchange = await exchangeRaw(
        service.url,
        `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nX-Slow: 1\r\n`,
        {
          deadlineMs,
        },
      );
      expect(exchange.closedByServer).toBe(true);
      expectValidationError(exchange);
    });

    it('answers an unauthenticated 200 MB body with 401 without reading it', async () => {
      const head = createHead(['Content-Type: application/json', `Content-Length: ${hugeBodyBytes}`]);
      const exchange = await exchangeRaw(service.url, head, {
        deadlineMs,
        body: { totalBytes: hugeBodyBytes },
      });
      expect(exchange.response.status).toBe(401);
      expect((exchange.response.body as { error: { code: string } }).error.code).toBe('unauthorized');
      expect(exchange.closedByServer).toBe(true);
      expect(exchange.bodyBytesAccepted).toBeLessThan(hugeBodyBytes / 2);
    });

    it('answers an authenticated body over 64 KiB with 400 by its Content-Length, without reading it', async () => {
      const head = createHead([
        `X-API-Key: ${fixture.key}`,
        'Content-Type: application/json',
        `Content-Length: ${hugeBodyBytes}`,
      ]);
      const exchange = await exchangeRaw(service.url, head, {
        deadlineMs,
        body: { totalBytes: hugeBodyBytes },
      });
      expectValidationError(exchange);
      expect(exchange.closedByServer).toBe(true);
      expect(exchange.bodyBytesAccepted).toBeLessThan(hugeBodyBytes / 2);
      await assertRawConforms(service.url, 'POST', '/v1/calls/outbound', exchange.response);
    });

    it('cuts a chunked body off at 64 KiB', async () => {
      const head = createHead([
        `X-API-Key: ${fixture.key}`,
        'Content-Type: application/json',
        'Transfer-Encoding: chunked',
      ]);
      const exchange = await exchangeRaw(service.url, head, {
        deadlineMs,
        body: { totalBytes: hugeBodyBytes, chunked: true },
      });
      expectValidationError(exchange);
      expect(exchange.closedByServer).toBe(true);
      expect(exchange.bodyBytesAccepted).toBeLessThan(hugeBodyBytes / 2);
    });
  });

  describe('requests the HTTP parser refuses (defect 9)', () => {
    const cases: Array<{ name: string; method: string; target: string; request: () => string }> = [
      {
        name: 'a header line without a valid name',
        method: 'GET',
        target: '/healthz',
        request: () => `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nBad Header: x\r\n\r\n`,
      },
      {
        name: 'two Content-Length headers that disagree',
        method: 'POST',
        target: '/v1/calls/outbound',
        request: () =>
          `${createHead([`X-API-Key: ${fixture.key}`, 'Content-Type: application/json', 'Content-Length: 2', 'Content-Length: 3'])}{}`,
      },
      {
        name: 'Content-Length beside Transfer-Encoding: chunked',
        method: 'POST',
        target: '/v1/calls/outbound',
        request: () =>
          `${createHead([`X-API-Key: ${fixture.key}`, 'Content-Type: application/json', 'Content-Length: 2', 'Transfer-Encoding: chunked'])}2\r\n{}\r\n0\r\n\r\n`,
      },
      {
        name: 'a URL longer than the header limit',
        method: 'GET',
        target: '/v1/calls',
        request: () => `GET /v1/calls?cursor=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
      },
      {
        name: 'headers larger than the limit',
        method: 'GET',
        target: '/healthz',
        request: () => `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nX-Filler: ${'b'.repeat(20_000)}\r\n\r\n`,
      },
      {
        name: 'a request line that is not HTTP',
        method: 'GET',
        target: '/healthz',
        request: () => 'HELLO THERE\r\n\r\n',
      },
    ];

    it.each(cases)('answers $name with 400 validation_error as JSON, and closes', async (testCase) => {
      const exchange = await exchangeRaw(service.url, testCase.request(), { deadlineMs });
      expectValidationError(exchange);
      expect(exchange.response.headers.connection).toBe('close');
      expect(exchange.response.headers['x-request-id']).toMatch(/^req_[0-9a-f]{16}$/);
      expect(exchange.closedByServer).toBe(true);
      await assertRawConforms(service.url, testCase.method, testCase.target, exchange.response);
    });

    it('refuses a JSON body that is not valid UTF-8 with 400, instead of replacing the bytes', async () => {
      const text = JSON.stringify({
        agent_id: fixture.agentId,
        from_number: fixture.number,
        to_number: '+15550100001',
        context: 'caf__',
      });
      const body = Buffer.from(text, 'utf8');
      const at = body.indexOf('__');
      body[at] = 0xc3; // a lead byte of a two-byte sequence...
      body[at + 1] = 0x28; // ...followed by '(' instead of a continuation byte
      const result = await request(`${service.url}/v1/calls/outbound`, {
        method: 'POST',
        headers: { 'X-API-Key': fixture.key, 'Content-Type': 'application/json' },
        body,
      });
      expect(result.status).toBe(400);
      expect(result.body).toEqual({
        error: { code: 'validation_error', message: 'request body is not valid UTF-8' },
      });
    });

    it('still accepts a body that is valid UTF-8 beyond ASCII', async () => {
      const result = await postCall(service.url, fixture.key, {
        agent_id: fixture.agentId,
        from_number: fixture.number,
        to_number: '+15550100001',
        context: 'café, 東京, 🙂',
      });
      expect(result.status).toBe(200);
    });
  });
});
