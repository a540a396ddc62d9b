import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotateWebhookSecret, setWebhookEnabled, setWebhookEndpoint } from '../../src/admin/webhooks.js';
import { isAppError } from '../../src/domain/errors.js';
import { callFixture, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';
import {
  eventOfCall,
  eventually,
  pointAccountAt,
  type Receiver,
  startReceiver,
  startWebhookService,
  type WebhookTestService,
} from './harness.js';

/**
 * call.completed delivery end to end: a real call on the sandbox carrier, the outbox row written
 * with its terminal status, the delivery worker, and a real HTTP receiver on 127.0.0.1.
 */

let harness: WebhookTestService;
const receivers: Receiver[] = [];
const timeoutMs = 400;

beforeAll(async () => {
  harness = await startWebhookService({
    // Short delays instead of 5 s, 5 min…: at most 8 attempts, Retry-After still honoured.
    retryDelay: (attemptsMade, retryAfterMs) => (attemptsMade >= 8 ? null : Math.max(30, retryAfterMs ?? 0)),
    timeoutMs,
  });
});

afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await harness.dispose();
});

async function receiverWith(behaviour: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const receiver = await startReceiver(behaviour);
  receivers.push(receiver);
  return receiver;
}

/** An account pointed at the receiver, and a call to the unreachable persona (ends at once). */
async function callTo(receiver: Receiver, to = '+15550100005') {
  const fixture = await callFixture(harness.service);
  const secret = await pointAccountAt(harness.service, fixture.accountId, receiver.url);
  const created = await postCall(harness.service.url, fixture.key, {
    agent_id: fixture.agentId,
    from_number: fixture.from,
    to_number: to,
  });
  expect(created.status).toBe(200);
  const callId = (created.body as { call_id: string }).call_id;
  return { ...fixture, secret, callId };
}

describe('call.completed delivery', () => {
  it('signs the exact bytes: the independent standardwebhooks verifier accepts them', async () => {
    const receiver = await receiverWith(() => ({ status: 204 }));
    const { secret, callId, accountId } = await callTo(receiver);
    const event = await eventOfCall(harness.service, accountId, callId, 'delivered');
    expect(receiver.requests).toHaveLength(1);
    const [request] = receiver.requests;
    const headers = request?.headers as Record<string, string>;
    expect(headers['webhook-id']).toBe(event.id);
    expect(headers['content-type']).toBe('application/json');
    expect(request?.body).toBe(event.body);
    const verified = new Webhook(secret).verify(request?.body as string, headers) as {
      type: string;
      id: string;
      data: { call_id: string; status: string; end_reason: string; recording_url: null; transcript: [] };
    };
    expect(verified).toMatchObject({ type: 'call.completed', id: event.id });
    expect(verified.data).toMatchObject({
      call_id: callId,
      status: 'failed',
      end_reason: 'unreachable',
      recording_url: null,
      transcript: [],
    });
    // A tampered body does not verify.
    expect(() => new Webhook(secret).verify(`${request?.body} `, headers)).toThrow();
    const stored = await harness.service.store.events.attempts(event.id);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ statusCode: 204, error: null, url: receiver.url });
  });

  it('signs with both secrets while a secret is rotated, and each verifies', async () => {
    const receiver = await receiverWith(() => ({ status: 200 }));
    const fixture = await callFixture(harness.service);
    const oldSecret = await pointAccountAt(harness.service, fixture.accountId, receiver.url);
    const newSecret = (
      await rotateWebhookSecret(harness.service.store, harness.service.secretBox, fixture.accountId)
    ).secret;
    expect(newSecret).not.toBe(oldSecret);
    const created = await postCall(harness.service.url, fixture.key, {
      agent_id: fixture.agentId,
      from_number: fixture.from,
      to_number: '+15550100005',
    });
    const callId = (created.body as { call_id: string }).call_id;
    await eventOfCall(harness.service, fixture.accountId, callId, 'delivered');
    const request = receiver.requests[0];
    const headers = request?.headers as Record<string, string>;
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(() => new Webhook(oldSecret).verify(request?.body as string, headers)).not.toThrow();
    expect(() => new Webhook(newSecret).verify(request?.body as string, headers)).not.toThrow();
  });

  it('retries a failing receiver with the same webhook-id until it answers 2xx', async () => {
    const failures = 3;
    const receiver = await receiverWith((index) =>
      index < failures ? { status: 500, body: `boom ${index}` } : { status: 200 },
    );
    const { callId, accountId, secret } = await callTo(receiver);
    const event = await eventOfCall(harness.service, accountId, callId, 'delivered');
    expect(receiver.requests).toHaveLength(failures + 1);
    const ids = new Set(receiver.requests.map((request) => request.headers['webhook-id']));
    expect([...ids]).toEqual([event.id]);
    for (const request of receiver.requests) {
      expect(request.body).toBe(event.body);
      expect(() =>
        new Webhook(secret).verify(request.body, request.headers as Record<string, string>),
      ).not.toThrow();
    }
    const attempts = await harness.service.store.events.attempts(event.id);
    expect(attempts.map((attempt) => attempt.statusCode)).toEqual([500, 500, 500, 200]);
    expect(attempts[0]?.responseExcerpt).toBe('boom 0');
    expect(attempts[0]?.error).toBe('endpoint responded with HTTP 500');
    expect(event.attempts).toBe(4);
  });

  it('honours Retry-After on 429', async () => {
    const receiver = await receiverWith((index) =>
      index === 0 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 },
    );
    const { callId, accountId } = await callTo(receiver);
    await eventOfCall(harness.service, accountId, callId, 'delivered');
    const [first, second] = receiver.requests;
    expect((second?.atMs ?? 0) - (first?.atMs ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it('marks the event failed when the schedule is exhausted', async () => {
    const receiver = await receiverWith(() => ({ status: 502 }));
    const { callId, accountId } = await callTo(receiver);
    const event = await eventOfCall(harness.service, accountId, callId, 'failed');
    expect(event.attempts).toBe(8);
    expect(receiver.requests).toHaveLength(8);
  });

  it('a 410 disables the endpoint; events wait and go out when it is enabled again', async () => {
    const receiver = await receiverWith(() => ({ status: 410 }));
    const first = await callTo(receiver);
    await eventOfCall(harness.service, first.accountId, first.callId, 'parked');
    const endpoint = await harness.service.store.webhookEndpoints.get(first.accountId);
    expect(endpoint).toMatchObject({ enabled: false, disabledReason: 'the endpoint answered 410 Gone' });
    expect(receiver.requests).toHaveLength(1);

    // A second call while disabled: its event waits without an attempt.
    const created = await postCall(harness.service.url, first.key, {
      agent_id: first.agentId,
      from_number: first.from,
      to_number: '+15550100002',
    });
    const secondCallId = (created.body as { call_id: string }).call_id;
    await waitForTerminal(harness.service, secondCallId);
    const parked = await eventOfCall(harness.service, first.accountId, secondCallId, 'parked');
    expect(parked.attempts).toBe(0);
    expect(receiver.requests).toHaveLength(1);

    receiver.behaviour = () => ({ status: 200 });
    await setWebhookEnabled(harness.service.store, first.accountId, true);
    await eventOfCall(harness.service, first.accountId, first.callId, 'delivered');
    await eventOfCall(harness.service, first.accountId, secondCallId, 'delivered');
    expect(receiver.requests).toHaveLength(3);
  });

  it('times out a receiver that never answers, and delivers on the next attempt', async () => {
    const receiver = await receiverWith((index) => (index === 0 ? 'hang' : { status: 200 }));
    const { callId, accountId } = await callTo(receiver);
    const event = await eventOfCall(harness.service, accountId, callId, 'delivered');
    const attempts = await harness.service.store.events.attempts(event.id);
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatchObject({ statusCode: null, error: `timed out after ${timeoutMs} ms` });
    expect(attempts[0]?.latencyMs).toBeGreaterThanOrEqual(timeoutMs - 5);
    expect(attempts[0]?.latencyMs).toBeLessThan(timeoutMs + 1000);
    expect(attempts[1]?.statusCode).toBe(200);
  });

  it('refuses a private address unless allowed, at configuration', async () => {
    const fixture = await callFixture(harness.service);
    for (const url of [
      'http://127.0.0.1:9/hook',
      'http://10.0.0.8/hook',
      'http://[::1]/hook',
      'http://localhost/x',
    ]) {
      const refused = await setWebhookEndpoint(
        harness.service.store,
        harness.service.secretBox,
        fixture.accountId,
        url,
        {
          allowPrivate: false,
        },
      ).catch((error: unknown) => error);
      expect(isAppError(refused) && refused.code).toBe('validation_error');
      expect(String((refused as Error).message)).toMatch(/CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE=true/);
    }
    const refusedScheme = await setWebhookEndpoint(
      harness.service.store,
      harness.service.secretBox,
      fixture.accountId,
      'ftp://example.com/',
      {
        allowPrivate: true,
      },
    ).catch((error: unknown) => error);
    expect(isAppError(refusedScheme) && refusedScheme.code).toBe('validation_error');
    expect(await harness.service.store.webhookEndpoints.get(fixture.accountId)).toBeNull();
    const allowed = await setWebhookEndpoint(
      harness.service.store,
      harness.service.secretBox,
      fixture.accountId,
      'http://127.0.0.1:9/hook',
      {
        allowPrivate: true,
      },
    );
    expect(allowed.secret).toMatch(/^whsec_/);
  });

  it('never writes the secret or full phone numbers to the log', async () => {
    await eventually(async () => (harness.logs.lines.length > 0 ? true : undefined));
    const text = harness.logs.text();
    expect(text).not.toMatch(/whsec_/);
    expect(text).not.toMatch(/\+1555010000[0-9]/);
  });
});

describe('a restart in the middle of the schedule', () => {
  it('loses nothing: the event is delivered after the restart with the same id', async () => {
    const restarting = await startWebhookService({
      retryDelay: (attemptsMade) => (attemptsMade >= 8 ? null : 1500),
    });
    const receiver = await receiverWith((index) => (index < 1 ? { status: 503 } : { status: 200 }));
    try {
      const fixture = await callFixture(restarting.service);
      await pointAccountAt(restarting.service, fixture.accountId, receiver.url);
      const created = await postCall(restarting.service.url, fixture.key, {
        agent_id: fixture.agentId,
        from_number: fixture.from,
        to_number: '+15550100005',
      });
      const callId = (created.body as { call_id: string }).call_id;
      const pending = await eventually(async () => {
        const [event] = await restarting.service.store.events.list(fixture.accountId, { limit: 1 });
        return event && event.attempts === 1 ? event : undefined;
      });
      expect(pending.status).toBe('pending');
      expect(receiver.requests).toHaveLength(1);
      await restarting.restart();
      const delivered = await eventOfCall(restarting.service, fixture.accountId, callId, 'delivered');
      expect(delivered.id).toBe(pending.id);
      expect(receiver.requests.map((request) => request.headers['webhook-id'])).toEqual([
        pending.id,
        pending.id,
      ]);
      expect((await restarting.service.store.events.attempts(pending.id)).map((a) => a.statusCode)).toEqual([
        503, 200,
      ]);
      expect(await restarting.service.store.events.list(fixture.accountId, { limit: 10 })).toHaveLength(1);
    } finally {
      await restarting.dispose();
    }
    // Two whole service starts (each loads the offline speech engines: ~10 s apiece on a loaded
    // 2-core machine) and a call: the default 30 s was too short under the full suite's load.
  }, 90_000);
});
