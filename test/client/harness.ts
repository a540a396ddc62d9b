import { createServer, type Server } from 'node:http';
import {
  type AddressInfo,
  connect,
  createServer as createTcpServer,
  type Socket,
  type Server as TcpServer,
} from 'node:net';
import { verifyWebhook } from '../../src/webhooks/verify.js';
import { assertConformsToOpenApi } from '../helpers/openApiCheck.js';

export interface FetchRecord {
  atMs: number;
  method: string;
  url: string;
  status: number | null;
  requestHeaders: Headers;
  retryAfter: string | null;
}

/**
 * A fetch for the client under test: the real global fetch, recording every attempt and checking
 * every answer against the service's OpenAPI document.
 */
export function recordingFetch(log: FetchRecord[]): typeof fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const record: FetchRecord = {
      atMs: Date.now(),
      method: init?.method ?? 'GET',
      url,
      status: null,
      requestHeaders: new Headers(init?.headers),
      retryAfter: null,
    };
    log.push(record);
    const response = await fetch(input, init);
    record.status = response.status;
    record.retryAfter = response.headers.get('retry-after');
    const copy = response.clone();
    const contentType = response.headers.get('content-type') ?? '';
    const text = contentType.startsWith('application/json') ? await copy.text() : '';
    await assertConformsToOpenApi(url, {
      method: record.method,
      status: response.status,
      headers: Object.fromEntries(response.headers),
      text,
    });
    return response;
  };
}

export type ProxyMode =
  /** Forward the request, then reset the client's connection when the answer starts. */
  | 'reset-after-request'
  /** Answer 502 from the proxy itself for the first `failures` connections, then forward. */
  | 'bad-gateway-first'
  /** Forward the request and never answer. */
  | 'hold';

export interface TcpProxy {
  url: string;
  /** Bytes of requests forwarded to the service, per connection. */
  forwarded: string[];
  close(): Promise<void>;
}

/** A real TCP proxy on loopback in front of the service, misbehaving as asked. */
export async function startProxy(target: string, mode: ProxyMode, failures = 0): Promise<TcpProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const forwarded: string[] = [];
  let connections = 0;
  const server: TcpServer = createTcpServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    connections += 1;
    if (mode === 'bad-gateway-first' && connections <= failures) {
      client.once('data', () => {
        client.end(
          'HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\nContent-Length: 11\r\nConnection: close\r\n\r\nbad gateway',
        );
      });
      return;
    }
    const index = forwarded.push('') - 1;
    const upstream = connect({ host: hostname, port: Number(port) });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('data', (chunk) => {
      forwarded[index] += chunk.toString('latin1');
      upstream.write(chunk);
    });
    client.on('end', () => upstream.end());
    upstream.on('data', (chunk) => {
      if (mode === 'reset-after-request') {
        client.resetAndDestroy();
        upstream.destroy();
      } else if (mode !== 'hold') {
        client.write(chunk);
      }
    });
    upstream.on('end', () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    forwarded,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export interface ReceivedWebhook {
  webhookId: string;
  event: { id: string; type: string; data: { call_id: string; status: string; end_reason: string | null } };
}

/** A webhook receiver on loopback that verifies every delivery with `callwright/webhooks`. */
export async function startReceiver(secret: () => string) {
  const received: ReceivedWebhook[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      try {
        const event = verifyWebhook(
          secret(),
          request.headers,
          Buffer.concat(chunks),
        ) as ReceivedWebhook['event'];
        received.push({ webhookId: String(request.headers['webhook-id']), event });
        response.writeHead(204).end();
      } catch {
        response.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 15_000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
