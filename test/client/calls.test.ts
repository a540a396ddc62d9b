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
    // The payload is a union of every event type: `type` narrows it.
    if (event.payload.type !== 'call.completed') throw new Error(`unexpected ${event.payload.type}`);
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

describe('the management resources', () => {
  it('agents, numbers, the webhook and the do-not-call list, typed, against the real service', async () => {
    const agent = await api.agents.create({
      name: 'Client-made',
      prompt: 'p',
      first_message: 'Hello from the client.',
      max_duration_s: 3,
    });
    expect(agent).toMatchObject({ name: 'Client-made', active: true, brain: 'script' });
    expect((await api.agents.update(agent.agent_id, { name: 'Renamed' })).name).toBe('Renamed');
    expect((await api.agents.list()).data.map((entry) => entry.agent_id)).toContain(agent.agent_id);
    expect((await api.agents.deactivate(agent.agent_id)).active).toBe(false);
    expect((await api.agents.activate(agent.agent_id)).active).toBe(true);
    const missing = await api.agents.get('agt_missing').catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(NotFoundError);

    expect(await api.numbers.add('+15550009970')).toMatchObject({ number: '+15550009970', route: 'sandbox' });
    expect((await api.numbers.list()).data.map((entry) => entry.number)).toContain('+15550009970');

    const endpoint = await api.webhook.get();
    expect(endpoint.url).toBe(receiver.url);
    expect(endpoint.secret).toBe(secret);
    expect(endpoint.events).toEqual(['call.completed']);
    const chosen = await api.webhook.setEvents(['call.answered']);
    expect(chosen).toMatchObject({ events: ['call.completed', 'call.answered'], secret });
    expect((await api.webhook.setEvents([])).events).toEqual(['call.completed']);

    expect(await api.doNotCall.add(['+15550100006'], 'client test')).toEqual({ added: 1, already_listed: 0 });
    expect(await api.doNotCall.get('+15550100006')).toMatchObject({ reason: 'client test', source: 'api' });
    const created = await api.calls.createOutbound({
      agent_id: agent.agent_id,
      from_number: '+15550009970',
      to_number: '+15550100006',
    });
    expect((await waitForTerminal(service, created.call_id)).endReason).toBe('do_not_call');
    expect(await api.doNotCall.remove('+15550100006')).toEqual({ number: '+15550100006', deleted: true });
    expect(await api.numbers.remove('+15550009970')).toEqual({ number: '+15550009970', deleted: true });
  }, 30_000);
});
