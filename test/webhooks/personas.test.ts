import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callFixture, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';
import { eventOfCall, pointAccountAt, type Receiver, startReceiver, startWebhookService } from './harness.js';

/** Every sandbox persona ends in exactly one call.completed event with its status and end_reason. */

let harness: Awaited<ReturnType<typeof startWebhookService>>;
let receiver: Receiver;
let fixture: Awaited<ReturnType<typeof callFixture>>;
let secret: string;

beforeAll(async () => {
  harness = await startWebhookService();
  receiver = await startReceiver(() => ({ status: 200 }));
  fixture = await callFixture(harness.service, { maxDurationS: 3 });
  secret = await pointAccountAt(harness.service, fixture.accountId, receiver.url);
});

afterAll(async () => {
  await receiver.close();
  await harness.dispose();
});

const personas: [string, string, string | null, 'unknown' | 'machine' | null][] = [
  // number, status, end_reason, answered_by (as the sandbox outcomes test records them)
  ['+15550100001', 'completed', 'max_duration', 'unknown'],
  ['+15550100002', 'busy', 'rejected', null],
  ['+15550100003', 'no_answer', null, null],
  // The greeting is decided a machine, but an agent that does not wait for the decision acts only on
  // the beep, which comes after the 3 s limit.
  ['+15550100004', 'completed', 'max_duration', 'machine'],
  ['+15550100005', 'failed', 'unreachable', null],
  ['+15550100006', 'completed', 'callee_hangup', 'unknown'],
  ['+15550100007', 'completed', 'max_duration', 'unknown'],
  ['+15550100008', 'completed', 'max_duration', 'unknown'],
];

describe('one call.completed per sandbox persona', () => {
  it.concurrent.each(personas)(
    '%s ends in one event: %s / %s',
    async (to, status, endReason) => {
      const created = await postCall(harness.service.url, fixture.key, {
        agent_id: fixture.agentId,
        from_number: fixture.from,
        to_number: to,
      });
      expect(created.status).toBe(200);
      const callId = (created.body as { call_id: string }).call_id;
      const call = await waitForTerminal(harness.service, callId, 25_000);
      const event = await eventOfCall(harness.service, fixture.accountId, callId, 'delivered');
      const deliveries = receiver.requests.filter((request) => request.headers['webhook-id'] === event.id);
      expect(deliveries).toHaveLength(1);
      const payload = new Webhook(secret).verify(
        deliveries[0]?.body as string,
        deliveries[0]?.headers as Record<string, string>,
      ) as { id: string; data: Record<string, unknown> };
      expect(payload.id).toBe(event.id);
      expect(payload.data).toMatchObject({
        call_id: callId,
        agent_id: fixture.agentId,
        to_number: to,
        from_number: fixture.from,
        status,
        end_reason: endReason,
        ended_at: call.endedAt,
        recording_url:
          call.recordingPath === null ? null : expect.stringContaining(`/v1/calls/${callId}/recording?`),
      });
      expect(Array.isArray(payload.data.transcript)).toBe(true);
      // No other event for this call: exactly one, whatever the persona.
      const bodies = receiver.requests.filter((request) => request.body.includes(callId));
      expect(bodies).toHaveLength(1);
    },
    40_000,
  );
});
