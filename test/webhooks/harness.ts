import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setWebhookEndpoint } from '../../src/admin/webhooks.js';
import type { EventRecord } from '../../src/domain/records.js';
import { createLogger } from '../../src/logger.js';
import { type RunningService, startService } from '../../src/server.js';
import type { DeliveryWorkerOptions } from '../../src/webhooks/deliveryWorker.js';
import { loopbackServiceConfig } from '../helpers/fullService.js';
import { LogCapture } from '../helpers/service.js';

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: string;
  atMs: number;
}

/** What the receiver does with its n-th request (0-based): answer, or hang without answering. */
export type ReceiverBehaviour = (
  index: number,
  request: ReceivedRequest,
) => { status: number; headers?: Record<string, string>; body?: string } | 'hang';

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  behaviour: ReceiverBehaviour;
  close(): Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1 that records every request. */
export async function startReceiver(
  behaviour: ReceiverBehaviour = () => ({ status: 200 }),
): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const receiver: Receiver = { url: '', requests, behaviour, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received = {
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        atMs: Date.now(),
      };
      const index = requests.length;
      requests.push(received);
      const answer = receiver.behaviour(index, received);
      if (answer === 'hang') return;
      res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
      res.end(answer.body ?? 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

export type WebhookServiceOptions = Pick<
  DeliveryWorkerOptions,
  'retryDelay' | 'timeoutMs' | 'pollIntervalMs' | 'concurrency'
>;

export interface WebhookTestService {
  service: RunningService;
  dataDir: string;
  logs: LogCapture;
  /** Stops the service (cleanly) and starts a new one on the same data directory. */
  restart(): Promise<void>;
  dispose(): Promise<void>;
}

/** The whole embedded service (sandbox carrier included) with webhooks to loopback allowed. */
export async function startWebhookService(
  delivery: WebhookServiceOptions = {},
  env: Record<string, string> = {},
): Promise<WebhookTestService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'callwright-webhooks-'));
  const logs = new LogCapture();
  const open = () =>
    startService(
      loopbackServiceConfig(dataDir, { CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true', ...env }),
      createLogger('info', logs),
      { webhookDelivery: delivery },
    );
  const handle: WebhookTestService = {
    service: await open(),
    dataDir,
    logs,
    async restart() {
      await handle.service.close();
      handle.service = await open();
    },
    async dispose() {
      await handle.service.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return handle;
}

export async function pointAccountAt(
  service: RunningService,
  accountId: string,
  url: string,
): Promise<string> {
  const endpoint = await setWebhookEndpoint(service.store, service.secretBox, accountId, url, {
    allowPrivate: true,
  });
  return endpoint.secret;
}

/** Polls until `check` returns a value (not undefined), or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 20_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} not reached after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The call's one call.completed event once it reaches `status`. */
export async function eventOfCall(
  service: RunningService,
  accountId: string,
  callId: string,
  status: EventRecord['status'],
  timeoutMs = 20_000,
): Promise<EventRecord> {
  return eventually(
    async () => {
      const events = (await service.store.events.list(accountId, { limit: 1000 })).filter(
        (event) => event.callId === callId && event.type === 'call.completed',
      );
      if (events.length > 1) throw new Error(`call ${callId} has ${events.length} events`);
      return events[0]?.status === status ? events[0] : undefined;
    },
    timeoutMs,
    `event of ${callId} ${status}`,
  );
}
