import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiKey } from '../admin/apiKeys.js';
import { completedEventBuilder } from '../calls/completedEvents.js';
import { newId } from '../domain/ids.js';
import type { EventRecord } from '../domain/records.js';
import { createLogger } from '../logger.js';
import { openSqliteStore } from '../openStore.js';
import { SecretBox } from '../secrets/secretBox.js';
import type { SqliteStore } from '../store/sqlite/sqliteStore.js';
import { activeSecrets, type DeliveryWorker, startDeliveryWorker } from './deliveryWorker.js';
import { generateWebhookSecret } from './signing.js';

let dir: string;
let store: SqliteStore;
let worker: DeliveryWorker | undefined;
let server: Server;
let hits = 0;
let receiverUrl: string;
const secretBox = new SecretBox(randomBytes(32));

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callwright-worker-'));
  store = openSqliteStore(join(dir, 'callwright.db'));
  hits = 0;
  server = createServer((_req, res) => {
    hits++;
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});

afterEach(async () => {
  await worker?.stop();
  worker = undefined;
  await store.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

async function accountWithEvent(): Promise<{ accountId: string; eventId: string }> {
  const account = await store.accounts.create({ name: 'worker' });
  const { record } = await createApiKey(store, account.id, 'k');
  const agent = await store.agents.create({
    accountId: account.id,
    name: 'a',
    active: true,
    prompt: 'p',
    firstMessage: '',
    variables: [],
    extraction: [],
    brain: 'script',
    script: null,
    settings: {},
    maxDurationS: 5,
    silenceTimeoutS: 5,
  });
  const id = newId('call');
  await store.calls.createQueued({
    id,
    accountId: account.id,
    agentId: agent.id,
    apiKeyId: record.id,
    fromNumber: '+15550009999',
    toNumber: '+15550100005',
    firstMessage: null,
    context: null,
    variables: null,
    createdAt: new Date().toISOString(),
  });
  await store.calls.finish(
    id,
    { status: 'failed', endReason: 'unreachable', atIso: new Date().toISOString() },
    completedEventBuilder(() => null),
  );
  const [event] = await store.events.list(account.id, { limit: 1 });
  return { accountId: account.id, eventId: event?.id as string };
}

function start(allowPrivate: boolean): void {
  worker = startDeliveryWorker({
    events: store.events,
    endpoints: store.webhookEndpoints,
    queue: store.queue,
    logger: createLogger('silent'),
    secretBox,
    allowPrivate,
    workerId: 'test',
    pollIntervalMs: 20,
    retryDelay: (attemptsMade) => (attemptsMade >= 2 ? null : 20),
  });
}

async function until(eventId: string, check: (event: EventRecord) => boolean): Promise<EventRecord> {
  for (let i = 0; i < 400; i++) {
    const event = await store.events.getById(eventId);
    if (event && check(event)) return event;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`event ${eventId} never reached the expected state`);
}

describe('the delivery worker', () => {
  it('re-checks the address at delivery: a loopback endpoint stored earlier is refused when not allowed', async () => {
    const { accountId, eventId } = await accountWithEvent();
    // Stored directly, as if allowed when configured (or as if DNS changed since).
    await store.webhookEndpoints.set(
      accountId,
      receiverUrl,
      secretBox.seal(generateWebhookSecret()),
      new Date().toISOString(),
    );
    start(false);
    const event = await until(eventId, (each) => each.status === 'failed');
    const attempts = await store.events.attempts(eventId);
    expect(attempts).toHaveLength(2);
    expect(attempts[0]?.statusCode).toBeNull();
    expect(attempts[0]?.error).toMatch(/loopback address.*CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE=true/);
    expect(event.attempts).toBe(2);
    expect(hits).toBe(0);
  });

  it('parks events while there is no endpoint and sends them once one is set', async () => {
    const { accountId, eventId } = await accountWithEvent();
    start(true);
    await until(eventId, (each) => each.status === 'parked');
    expect(await store.queue.depth('webhook.deliver')).toMatchObject({ count: 0 });
    await store.webhookEndpoints.set(
      accountId,
      receiverUrl,
      secretBox.seal(generateWebhookSecret()),
      new Date().toISOString(),
    );
    const delivered = await until(eventId, (each) => each.status === 'delivered');
    expect(delivered.attempts).toBe(1);
    expect(hits).toBe(1);
  });

  it('signs with the previous secret only until it expires', async () => {
    const { accountId } = await accountWithEvent();
    const [first, second] = [generateWebhookSecret(), generateWebhookSecret()];
    await store.webhookEndpoints.set(accountId, receiverUrl, secretBox.seal(first), 'x');
    const rotated = await store.webhookEndpoints.rotateSecret(
      accountId,
      secretBox.seal(second),
      new Date(Date.now() + 1000).toISOString(),
      'y',
    );
    expect(rotated && activeSecrets(rotated, Date.now(), secretBox)).toEqual([second, first]);
    expect(rotated && activeSecrets(rotated, Date.now() + 2000, secretBox)).toEqual([second]);
  });

  it('opens sealed secrets, and signs with a plain one an earlier version stored until it is sealed', async () => {
    const { accountId } = await accountWithEvent();
    const legacy = generateWebhookSecret();
    const stored = await store.webhookEndpoints.set(accountId, receiverUrl, legacy, 'x');
    expect(stored && activeSecrets(stored, Date.now(), secretBox)).toEqual([legacy]);
    const otherKey = new SecretBox(randomBytes(32));
    const sealed = await store.webhookEndpoints.set(accountId, receiverUrl, otherKey.seal(legacy), 'y');
    expect(() => activeSecrets(sealed, Date.now(), secretBox)).toThrow();
  });
});
