import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { createRecordingLinks, type RecordingLinks } from '../../src/api/recordingLinks.js';
import { completedEventBuilder } from '../../src/calls/completedEvents.js';
import { newId } from '../../src/domain/ids.js';
import { parseRatePolicy, type RatePolicy } from '../../src/domain/rateLimit.js';
import { MemoryRateLimiter } from '../../src/limits/rateLimiter.js';
import { createLogger } from '../../src/logger.js';
import { openSqliteStore } from '../../src/openStore.js';
import { queueNames } from '../../src/queue/types.js';
import { FileRecordingStorage } from '../../src/recordings/recordingStorage.js';
import type { SqliteStore } from '../../src/store/sqlite/sqliteStore.js';
import { request } from '../helpers/http.js';
import { createAccountFixture } from '../helpers/service.js';

/** The events resource and the recording route, on a real SQLite store through app.inject. */

let dataDir: string;
let store: SqliteStore;
let app: FastifyInstance;
let links: RecordingLinks;
let wakes = 0;
let baseUrl: string;

function policy(text: string): RatePolicy {
  return parseRatePolicy(text) as RatePolicy;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'callwright-events-'));
  store = openSqliteStore(join(dataDir, 'callwright.db'));
  links = createRecordingLinks({
    publicUrl: 'https://calls.example.com',
    keyBase64: Buffer.alloc(32, 7).toString('base64'),
  });
  app = await buildApp({
    store,
    config: {
      ratePolicy: policy('100000/10s'),
      authFailurePolicy: policy('100000/60s'),
      publicUrl: 'https://calls.example.com',
      trustProxy: false,
    },
    logger: createLogger('silent'),
    limiter: new MemoryRateLimiter(),
    version: 'test',
    recordings: { links, storage: new FileRecordingStorage(dataDir) },
    wakeWebhookDelivery: () => {
      wakes++;
    },
  });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await app.close();
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A call made terminal through the store's outbox path (no dispatcher runs here). */
async function endedCall(accountId: string, agentId: string, recordingPath: string | null = null) {
  const fixtureKey = (await store.apiKeys.list(accountId))[0];
  const id = newId('call');
  await store.calls.createQueued({
    id,
    accountId,
    agentId,
    apiKeyId: fixtureKey?.id as string,
    fromNumber: '+15550009999',
    toNumber: '+15550100005',
    firstMessage: null,
    context: null,
    variables: null,
    createdAt: new Date().toISOString(),
  });
  const call = await store.calls.finish(
    id,
    { status: 'failed', endReason: 'unreachable', recordingPath, atIso: new Date().toISOString() },
    completedEventBuilder((ended) => links.urlFor(ended)),
  );
  return call as NonNullable<typeof call>;
}

interface EventJson {
  event_id: string;
  call_id: string;
  status: string;
  payload: { data: { call_id: string } };
}
interface PageJson {
  data: EventJson[];
  has_more: boolean;
  next_cursor: string | null;
}

async function get<T = unknown>(path: string, key?: string) {
  const result = await request(`${baseUrl}${path}`, { headers: key ? { 'X-API-Key': key } : {} });
  return { status: result.status, body: result.body as T, headers: result.headers, text: result.text };
}

function post(path: string, key: string) {
  return request(`${baseUrl}${path}`, { method: 'POST', headers: { 'X-API-Key': key } });
}

describe('GET /v1/events', () => {
  it('lists the account’s events newest first with cursor pagination; another account sees none', async () => {
    const mine = await createAccountFixture(store, { name: 'mine' });
    const other = await createAccountFixture(store, { name: 'other' });
    const calls = [];
    for (let i = 0; i < 5; i++) calls.push(await endedCall(mine.accountId, mine.agentId));
    const first = await get<PageJson>('/v1/events?limit=2', mine.key);
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(2);
    expect(first.body.has_more).toBe(true);
    expect(first.body.data[0]).toMatchObject({
      type: 'call.completed',
      call_id: calls[4]?.id,
      status: 'pending',
      attempts: 0,
    });
    const seen = [...first.body.data];
    let cursor = first.body.next_cursor;
    while (cursor) {
      const page = await get<PageJson>(`/v1/events?limit=2&cursor=${cursor}`, mine.key);
      seen.push(...page.body.data);
      cursor = page.body.next_cursor;
    }
    expect(seen.map((event) => event.call_id)).toEqual(calls.map((call) => call.id).reverse());
    expect((await get<PageJson>('/v1/events', other.key)).body.data).toEqual([]);
    expect((await get('/v1/events?cursor=nope', mine.key)).status).toBe(400);
    expect((await get('/v1/events')).status).toBe(401);

    const eventId = seen[0]?.event_id;
    const shown = await get<EventJson>(`/v1/events/${eventId}`, mine.key);
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({
      event_id: eventId,
      attempt_log: [],
      payload: { id: eventId, type: 'call.completed' },
    });
    expect(shown.body.payload.data.call_id).toBe(seen[0]?.call_id);
    expect((await get(`/v1/events/${eventId}`, other.key)).status).toBe(404);
    expect((await get(`/v1/events/evt_nope`, mine.key)).status).toBe(404);
  });

  it('shows attempts and resends an event without duplicating its waiting job', async () => {
    const mine = await createAccountFixture(store, { name: 'resend' });
    const call = await endedCall(mine.accountId, mine.agentId);
    const [event] = await store.events.list(mine.accountId, { limit: 1 });
    const eventId = event?.id as string;
    const claimed = await store.queue.claim(queueNames.webhook, 'test', 1000, 60_000);
    const job = claimed.find((each) => each.payload.event_id === eventId);
    for (const other of claimed) if (other !== job) await store.queue.retryAt(other.id, Date.now());
    expect(job).toBeDefined();
    await store.events.recordAttempt(
      job?.id as string,
      {
        eventId,
        attemptedAt: new Date().toISOString(),
        url: 'http://127.0.0.1:9/x',
        statusCode: 500,
        latencyMs: 12,
        responseExcerpt: 'no',
        error: 'endpoint responded with HTTP 500',
      },
      { kind: 'failed' },
    );
    const shown = await get<{ attempt_log: unknown[] }>(`/v1/events/${eventId}`, mine.key);
    expect(shown.body).toMatchObject({ status: 'failed', attempts: 1, call_id: call.id });
    expect(shown.body.attempt_log).toEqual([
      expect.objectContaining({
        status_code: 500,
        latency_ms: 12,
        response_excerpt: 'no',
        error: 'endpoint responded with HTTP 500',
      }),
    ]);
    const before = wakes;
    const resent = await post(`/v1/events/${eventId}/resend`, mine.key);
    expect(resent.status).toBe(200);
    expect(resent.body).toMatchObject({ event_id: eventId, status: 'pending' });
    expect(wakes).toBe(before + 1);
    // A second resend moves the waiting job rather than adding one.
    await post(`/v1/events/${eventId}/resend`, mine.key);
    expect(store.queue.findByPayload(queueNames.webhook, { event_id: eventId })).toHaveLength(1);
    // While an attempt is in flight, a resend is refused.
    await store.queue.claim(queueNames.webhook, 'test', 100, 60_000);
    const busy = await post(`/v1/events/${eventId}/resend`, mine.key);
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ error: { code: 'conflict' } });
  });
});

describe('GET /v1/calls/{call_id}/recording', () => {
  it('is null in the event and 404 when the call has no recording', async () => {
    const mine = await createAccountFixture(store, { name: 'rec-none' });
    const call = await endedCall(mine.accountId, mine.agentId);
    const event = (await store.events.list(mine.accountId, { limit: 1 }))[0];
    expect(JSON.parse(event?.body as string).data.recording_url).toBeNull();
    expect((await get(`/v1/calls/${call.id}`, mine.key)).body).toMatchObject({ recording_url: null });
    const response = await get(`/v1/calls/${call.id}/recording`, mine.key);
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ error: { code: 'not_found' } });
  });

  it('serves the WAV for a valid signed link without a key, and refuses bad or expired links', async () => {
    const mine = await createAccountFixture(store, { name: 'rec' });
    writeFileSync(join(dataDir, 'call.wav'), Buffer.from('RIFF....WAVEfmt '));
    const call = await endedCall(mine.accountId, mine.agentId, 'call.wav');
    const event = (await store.events.list(mine.accountId, { limit: 1 }))[0];
    const recordingUrl = new URL(JSON.parse(event?.body as string).data.recording_url);
    expect(recordingUrl.origin).toBe('https://calls.example.com');
    expect(recordingUrl.pathname).toBe(`/v1/calls/${call.id}/recording`);
    const expires = Number(recordingUrl.searchParams.get('expires'));
    expect(expires * 1000 - Date.now()).toBeGreaterThan(7 * 24 * 3600 * 1000 - 60_000);
    expect(expires * 1000 - Date.now()).toBeLessThanOrEqual(7 * 24 * 3600 * 1000);

    const signed = await get(`${recordingUrl.pathname}${recordingUrl.search}`);
    expect(signed.status).toBe(200);
    expect(signed.headers['content-type']).toBe('audio/wav');
    expect(signed.text).toBe('RIFF....WAVEfmt ');
    expect((await get(`/v1/calls/${call.id}/recording`, mine.key)).status).toBe(200);
    expect((await get(`/v1/calls/${call.id}/recording`)).status).toBe(401);

    // The call record carries a signed link too (it was always null), and it works without a key.
    const record = await get(`/v1/calls/${call.id}`, mine.key);
    const listed = await get('/v1/calls?limit=1', mine.key);
    const recordLink = new URL((record.body as { recording_url: string }).recording_url);
    expect(recordLink.pathname).toBe(`/v1/calls/${call.id}/recording`);
    expect((listed.body as { data: { recording_url: string | null }[] }).data[0]?.recording_url).toMatch(
      /\/recording\?expires=/,
    );
    const viaRecord = await get(`${recordLink.pathname}${recordLink.search}`);
    expect(viaRecord.status).toBe(200);
    expect(viaRecord.text).toBe('RIFF....WAVEfmt ');

    const tampered = new URL(recordingUrl);
    tampered.searchParams.set('expires', String(expires + 1));
    const badSignature = await get(`${tampered.pathname}${tampered.search}`, mine.key);
    expect(badSignature.status).toBe(401);
    expect(badSignature.body).toMatchObject({ error: { code: 'unauthorized' } });

    const other = await endedCall(mine.accountId, mine.agentId, 'call.wav');
    const wrongCall = await get(`/v1/calls/${other.id}/recording${recordingUrl.search}`);
    expect(wrongCall.status).toBe(401);

    const expiredUrl = new URL(links.urlFor(call, Date.now() - 8 * 24 * 3600 * 1000) as string);
    const expired = await get(`${expiredUrl.pathname}${expiredUrl.search}`);
    expect(expired.status).toBe(403);
    expect(expired.body).toMatchObject({ error: { code: 'forbidden' } });

    // Another account's key cannot read it.
    const stranger = await createAccountFixture(store, { name: 'stranger' });
    expect((await get(`/v1/calls/${call.id}/recording`, stranger.key)).status).toBe(404);
  });

  it('appears in the generated OpenAPI document with the events operations', async () => {
    const document = (await get('/v1/openapi.json')).body as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    expect(document.paths['/v1/calls/{call_id}/recording']?.get?.operationId).toBe('getCallRecording');
    expect(document.paths['/v1/events']?.get?.operationId).toBe('listEvents');
    expect(document.paths['/v1/events/{event_id}']?.get?.operationId).toBe('getEvent');
    expect(document.paths['/v1/events/{event_id}/resend']?.post?.operationId).toBe('resendEvent');
  });
});
