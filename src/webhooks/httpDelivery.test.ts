import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { deliverOnce, parseRetryAfterMs } from './httpDelivery.js';
import { generateWebhookSecret, webhookHeaders } from './signing.js';
import type { HostnameLookup } from './urlGuard.js';
import { verifyWebhook } from './verify.js';

interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

interface TestServer {
  port: number;
  baseUrl: string;
  received: ReceivedRequest[];
}

const openServers: Server[] = [];

/** A real HTTP server on 127.0.0.1 that records each request before the handler answers it. */
async function startServer(
  handle: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<TestServer> {
  const received: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks),
      });
      handle(request, response);
    });
  });
  openServers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { port, baseUrl: `http://127.0.0.1:${port}`, received };
}

afterEach(async () => {
  const servers = openServers.splice(0);
  await Promise.all(
    servers.map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

const secret = generateWebhookSecret();
const body = JSON.stringify({
  type: 'call.completed',
  id: 'evt_1',
  data: { call_id: 'call_1', text: 'Grüße' },
});

function signedHeaders(): Record<string, string> {
  return webhookHeaders({ secrets: [secret], id: 'evt_1', timestampS: Math.floor(Date.now() / 1000), body });
}

function lookupTo(address: string): HostnameLookup {
  return async () => [{ address, family: 4 }];
}

describe('deliverOnce', () => {
  it('POSTs the signed bytes to the endpoint and reports a 2xx as ok', async () => {
    const server = await startServer((_request, response) => response.writeHead(200).end('thanks'));
    const headers = signedHeaders();
    const result = await deliverOnce({
      url: `${server.baseUrl}/hooks?source=cw`,
      body,
      headers,
      allowPrivate: true,
    });

    expect(result).toMatchObject({
      ok: true,
      status: 200,
      responseExcerpt: 'thanks',
      error: null,
      retryAfterMs: null,
      gone: false,
    });
    expect(result.latencyMs).toBeGreaterThanOrEqual(0);
    expect(server.received).toHaveLength(1);
    const [request] = server.received;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/hooks?source=cw');
    expect(request?.body.equals(Buffer.from(body, 'utf8'))).toBe(true);
    expect(request?.headers).toMatchObject({
      host: `127.0.0.1:${server.port}`,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'webhook-id': 'evt_1',
      'webhook-signature': headers['webhook-signature'],
    });
    expect(verifyWebhook(secret, request?.headers ?? {}, request?.body ?? Buffer.alloc(0))).toMatchObject({
      id: 'evt_1',
    });
  });

  it('treats 204 as ok and 500 as a failure with the response excerpt', async () => {
    const noContent = await startServer((_request, response) => response.writeHead(204).end());
    expect(
      await deliverOnce({ url: noContent.baseUrl, body, headers: signedHeaders(), allowPrivate: true }),
    ).toMatchObject({ ok: true, status: 204, responseExcerpt: '', error: null });

    const failing = await startServer((_request, response) => response.writeHead(500).end('database down'));
    expect(
      await deliverOnce({ url: failing.baseUrl, body, headers: signedHeaders(), allowPrivate: true }),
    ).toMatchObject({
      ok: false,
      status: 500,
      responseExcerpt: 'database down',
      error: 'endpoint responded with HTTP 500',
      retryAfterMs: null,
      gone: false,
    });
  });

  it('reports 410 as gone', async () => {
    const server = await startServer((_request, response) => response.writeHead(410).end('endpoint removed'));
    const result = await deliverOnce({
      url: server.baseUrl,
      body,
      headers: signedHeaders(),
      allowPrivate: true,
    });
    expect(result).toMatchObject({
      ok: false,
      status: 410,
      gone: true,
      error: 'endpoint responded with HTTP 410',
    });
  });

  it('reads Retry-After in seconds on 429 and as an HTTP-date on 503, and ignores it otherwise', async () => {
    const tooMany = await startServer((_request, response) =>
      response.writeHead(429, { 'retry-after': '120' }).end(),
    );
    expect(
      await deliverOnce({ url: tooMany.baseUrl, body, headers: signedHeaders(), allowPrivate: true }),
    ).toMatchObject({ ok: false, status: 429, retryAfterMs: 120_000 });

    const inTenMinutes = new Date(Date.now() + 600_000).toUTCString();
    const unavailable = await startServer((_request, response) =>
      response.writeHead(503, { 'retry-after': inTenMinutes }).end(),
    );
    const result = await deliverOnce({
      url: unavailable.baseUrl,
      body,
      headers: signedHeaders(),
      allowPrivate: true,
    });
    expect(result.status).toBe(503);
    expect(result.retryAfterMs).toBeGreaterThan(590_000);
    expect(result.retryAfterMs).toBeLessThanOrEqual(600_000);

    const failing = await startServer((_request, response) =>
      response.writeHead(500, { 'retry-after': '120' }).end(),
    );
    expect(
      await deliverOnce({ url: failing.baseUrl, body, headers: signedHeaders(), allowPrivate: true }),
    ).toMatchObject({ status: 500, retryAfterMs: null });
  });

  it('does not follow a redirect', async () => {
    const server = await startServer((request, response) => {
      if (request.url === '/hook') response.writeHead(302, { location: '/elsewhere' }).end();
      else response.writeHead(200).end('followed');
    });
    const result = await deliverOnce({
      url: `${server.baseUrl}/hook`,
      body,
      headers: signedHeaders(),
      allowPrivate: true,
    });
    expect(result).toMatchObject({
      ok: false,
      status: 302,
      error: 'redirect not followed (HTTP 302 to /elsewhere)',
    });
    expect(server.received.map((request) => request.url)).toEqual(['/hook']);
  });

  it('times out a server that never answers', async () => {
    const server = await startServer(() => {
      // Never responds.
    });
    const result = await deliverOnce({
      url: server.baseUrl,
      body,
      headers: signedHeaders(),
      allowPrivate: true,
      timeoutMs: 300,
    });
    expect(result).toMatchObject({
      ok: false,
      status: null,
      error: 'timed out after 300 ms',
      responseExcerpt: '',
    });
    expect(result.latencyMs).toBeGreaterThanOrEqual(290);
    expect(result.latencyMs).toBeLessThan(3000);
    expect(server.received).toHaveLength(1);
  });

  it('keeps the status of a response whose body stalls past the deadline', async () => {
    const server = await startServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.write('accepted, but');
    });
    const result = await deliverOnce({
      url: server.baseUrl,
      body,
      headers: signedHeaders(),
      allowPrivate: true,
      timeoutMs: 300,
    });
    expect(result).toMatchObject({ ok: true, status: 200, responseExcerpt: 'accepted, but', error: null });
    expect(result.latencyMs).toBeGreaterThanOrEqual(290);
  });

  it('times out a DNS lookup that never finishes', async () => {
    const neverResolves: HostnameLookup = () => new Promise(() => {});
    const result = await deliverOnce({
      url: 'https://hooks.example.com/in',
      body,
      headers: signedHeaders(),
      allowPrivate: false,
      timeoutMs: 200,
      lookup: neverResolves,
    });
    expect(result).toMatchObject({ ok: false, status: null, error: 'timed out after 200 ms' });
  });

  it('stops reading a huge response at the cap', async () => {
    const server = await startServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const writeMore = () => {
        // An endless body: only the client closing the connection ends it.
        while (!response.destroyed && response.write(chunk)) {}
        if (!response.destroyed) response.once('drain', writeMore);
      };
      writeMore();
    });
    const result = await deliverOnce({
      url: server.baseUrl,
      body,
      headers: signedHeaders(),
      allowPrivate: true,
      timeoutMs: 5000,
    });
    expect(result).toMatchObject({ ok: true, status: 200, error: null });
    expect(result.responseExcerpt).toBe('x'.repeat(4096));
    expect(result.latencyMs).toBeLessThan(2000);

    const small = await deliverOnce({
      url: server.baseUrl,
      body,
      headers: signedHeaders(),
      allowPrivate: true,
      maxResponseBytes: 10,
    });
    expect(small.responseExcerpt).toBe('xxxxxxxxxx');
  });

  it('reports a refused connection instead of throwing', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const result = await deliverOnce({
      url: `http://127.0.0.1:${port}/hook`,
      body,
      headers: signedHeaders(),
      allowPrivate: true,
    });
    expect(result).toMatchObject({ ok: false, status: null, gone: false, retryAfterMs: null });
    expect(result.error).toContain('ECONNREFUSED');
  });

  it('reports a connection closed without a response', async () => {
    const server = await startServer((request) => request.socket.destroy());
    const result = await deliverOnce({
      url: server.baseUrl,
      body,
      headers: signedHeaders(),
      allowPrivate: true,
    });
    expect(result).toMatchObject({ ok: false, status: null });
    expect(result.error).toContain('socket hang up');
  });

  it('reports a TLS failure instead of throwing', async () => {
    const plainHttp = await startServer((_request, response) => response.writeHead(200).end());
    const result = await deliverOnce({
      url: `https://hooks.example.com:${plainHttp.port}/hook`,
      body,
      headers: signedHeaders(),
      allowPrivate: true,
      lookup: lookupTo('127.0.0.1'),
      timeoutMs: 2000,
    });
    expect(result).toMatchObject({ ok: false, status: null });
    expect(result.error).not.toBeNull();
    expect(result.error).toMatch(/EPROTO|SSL|TLS/);
  });

  it('refuses a loopback URL before connecting unless private addresses are allowed', async () => {
    const server = await startServer((_request, response) => response.writeHead(200).end());
    const result = await deliverOnce({
      url: server.baseUrl,
      body,
      headers: signedHeaders(),
      allowPrivate: false,
    });
    expect(result).toMatchObject({
      ok: false,
      status: null,
      error:
        'webhook URL points to a loopback address (127.0.0.1); set CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE=true to allow it',
    });
    expect(server.received).toHaveLength(0);
  });

  it('refuses a public-looking hostname that resolves to loopback (DNS rebinding)', async () => {
    const server = await startServer((_request, response) => response.writeHead(200).end());
    const result = await deliverOnce({
      url: `http://hooks.example.com:${server.port}/hook`,
      body,
      headers: signedHeaders(),
      allowPrivate: false,
      lookup: lookupTo('127.0.0.1'),
    });
    expect(result).toMatchObject({ ok: false, status: null });
    expect(result.error).toBe(
      'webhook URL host hooks.example.com resolves to a loopback address (127.0.0.1); set CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE=true to allow it',
    );
    expect(server.received).toHaveLength(0);
  });

  it('connects to the looked-up address while sending the original Host', async () => {
    const server = await startServer((_request, response) => response.writeHead(202).end());
    const result = await deliverOnce({
      url: `http://hooks.example.com:${server.port}/hook`,
      body,
      headers: signedHeaders(),
      allowPrivate: true,
      lookup: lookupTo('127.0.0.1'),
    });
    expect(result).toMatchObject({ ok: true, status: 202 });
    expect(server.received[0]?.headers.host).toBe(`hooks.example.com:${server.port}`);
  });
});

describe('parseRetryAfterMs', () => {
  const nowMs = Date.parse('2025-01-01T00:00:00Z');

  it.each([
    ['0', 0],
    ['30', 30_000],
    [' 7 ', 7000],
    ['Wed, 01 Jan 2025 00:01:00 GMT', 60_000],
    ['Tue, 31 Dec 2024 23:00:00 GMT', 0],
  ])('reads %j as %d ms', (value, expectedMs) => {
    expect(parseRetryAfterMs(value, nowMs)).toBe(expectedMs);
  });

  it.each([undefined, '', '-5', '1.5', 'soon', '2025-13-45'])('ignores %j', (value) => {
    expect(parseRetryAfterMs(value, nowMs)).toBeNull();
  });
});
