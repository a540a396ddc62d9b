import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRawResponse } from '../helpers/rawSocket.js';
import {
  type AccountFixture,
  createAccountFixture,
  startTestService,
  type TestService,
} from '../helpers/service.js';

/**
 * A request that is on its way while the process closes (SIGTERM, the grace period) is answered as
 * any other: the store stays open until the HTTP server has closed, so the request gets the
 * contract's statuses and error model, never the framework's own 503 body (a status the
 * specification does not list for its operation).
 */
describe('a request in flight during a graceful close', () => {
  let service: TestService;
  let fixture: AccountFixture;

  beforeAll(async () => {
    service = await startTestService({ store: 'sqlite' });
    fixture = await createAccountFixture(service.store);
  });

  afterAll(async () => {
    await service.close();
  });

  it('is answered as usual', async () => {
    const { hostname, port } = new URL(service.url);
    const socket = connect({ host: hostname, port: Number(port) });
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // The request line and part of the headers arrive before the close, the rest after it.
    socket.write(`GET /v1/calls/call_00000000000000000000000000 HTTP/1.1\r\nHost: ${hostname}\r\n`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closing = service.app.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.end(`X-API-Key: ${fixture.key}\r\nConnection: close\r\n\r\n`);
    await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    socket.destroy();
    await closing;
    const response = parseRawResponse(Buffer.concat(chunks));
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
  });
});
