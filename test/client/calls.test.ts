import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setWebhookEndpoint } from '../../src/admin/webhooks.js';
import { CallwrightClient, ConflictError, NotFoundError } from '../../src/client/index.js';
import type { WebhookEventSummary } from '../../src/client/types.js';
import { callFixture, startFullService, waitForTerminal } from '../helpers/fullService.js';
import { type FetchRecord, recordingFetch, startReceiver, waitFor } from './harness.js';

/** The client on calls that really happen: the whole service with the sandbox carrier. */

let service: Awaited<ReturnType<typeof startFullService>>;
let fixture: Awaited<ReturnType<typeof callFixture>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let secret = '';
let api: CallwrightClient;
const log: FetchRecord[] = [];

beforeAll(async () => {
  service = await startFullService({ CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true' });
  fixture = await callFixture(service);
  receiver = await startReceiver(() => secret);
  secret = (
    await setWebhookEndpoint(service.store, service.secretBox, fixture.accountId, receiver.url, {
      allowPrivate: true,
    })
  ).secret;
  api = new CallwrightClient({ apiKey: fixture.key, baseUrl: service.url, fetch: recordingFetch(log) });
});

afterAll(async () => {
  await service?.dispose();
  await receiver?.close();
});

describe('calls that end', () => {
  it('get shows the terminal record; cancel of an ended call is a ConflictError; no recording is a NotFoundError', async () => {
    const created = await api.calls.createOutbound({
      agent_id: fixture.agentId,
      from_number: fixture.from,
      to_number: '+15550100005',
    });
    await waitForTerminal(service, created.call_id);
    const call = await api.calls.get(created.call_id);
    expect(call).toMatchObject({ status: 'failed', end_reason: 'unreachable' });
    expect(call.timeline.at(-1)?.status).toBe('failed');

    const conflict = await api.calls.cancel(created.call_id).catch((error: unknown) => error);
    expect(conflict).toBeInstanceOf(ConflictError);
    expect(conflict).toMatchObject({ status: 409, code: 'conflict' });

    const noRecording = await api.calls.recording(created.call_id).catch((error: unknown) => error);
    expect(noRecording).toBeInstanceOf(NotFoundError);
  });

  it('cancel ends a ringing call as canceled', async () => {
    const created = await api.calls.createOutbound({
      agent_id: fixture.agentId,
      from_number: fixture.from,
      to_number: '+15550100003',
    });
    await waitFor('the call to ring', async () => {
      const call = await api.calls.get(created.call_id);
      return call.status === 'ringing' ? call : undefined;
    });
    const canceled = await api.calls.cancel(created.call_id);
    expect(canceled.call_id).toBe(created.call_id);
    expect(canceled.status).toBe('canceled');
  });

  it('a completed call has a recording the client can fetch', async () => {
    const created = await api.calls.createOutbound({
      agent_id: fixture.agentId,
      from_number: fixture.from,
      to_number: '+15550100006',
    });
    const ended = await waitForTerminal(service, created.call_id);
    expect(ended.status).toBe('completed');
    const wav = await api.calls.recording(created.call_id);
    expect(Buffer.from(wav.subarray(0, 4)).toString('latin1')).toBe('RIFF');
    expect(Buffer.from(wav.subarray(8, 12)).toString('latin1')).toBe('WAVE');
  });
});

describe('events', () => {
  it('list pages through the events, get shows payload and attempts, resend delivers the same event again', async () => {
    const summaries: WebhookEventSummary[] = await waitFor('three delivered events', async () => {
      const all: WebhookEventSummary[] = [];
      for await (const page of api.events.list({ limit: 2 })) all.push(...page.data);
      return all.length >= 3 && all.every((event) => event.status === 'delivered') ? all : undefined;
    });
    expect(summaries).toHaveLength(3);
    const first = summaries.at(-1) as WebhookEventSummary;
    const event = await api.events.get(first.event_id);
    expect(event.payload.id).toBe(first.event_id);
    expect(event.payload.type).toBe('call.completed');
    expect(event.payload.data.call_id).toBe(first.call_id);
    expect(event.attempt_log[0]?.status_code).toBe(204);

    const delivered = receiver.received.filter((item) => item.webhookId === first.event_id).length;
    const resent = await api.events.resend(first.event_id);
    expect(resent.event_id).toBe(first.event_id);
    await waitFor('the event to arrive again', () =>
      receiver.received.filter((item) => item.webhookId === first.event_id).length > delivered
        ? true
        : undefined,
    );
    const again = receiver.received.filter((item) => item.webhookId === first.event_id);
    expect(new Set(again.map((item) => JSON.stringify(item.event))).size).toBe(1);

    const missing = await api.events
      .resend('evt_01H00000000000000000000000')
      .catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(NotFoundError);
    // Every answer was checked against the OpenAPI document by the recording fetch.
    expect(log.length).toBeGreaterThan(8);
  });
});
