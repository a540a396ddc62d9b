import { describe, expect, it } from 'vitest';
import { isAppError } from './errors.js';
import type { CallRecord } from './records.js';
import {
  callAnsweredEvent,
  callRingingEvent,
  callTransferredEvent,
  eventTypesFromStored,
  parseEventTypes,
} from './statusEvents.js';

describe('the event types an endpoint asks for', () => {
  it('always include call.completed, keep the documented order and count a repeat once', () => {
    expect(parseEventTypes([])).toEqual(['call.completed']);
    expect(parseEventTypes(['campaign.completed', 'call.ringing', 'call.ringing', 'call.completed'])).toEqual(
      ['call.completed', 'call.ringing', 'campaign.completed'],
    );
  });

  it('refuse anything but an array of known names, naming the bad one', () => {
    for (const bad of ['call.ringing', null, {}, [1], ['call.started'], ['CALL.RINGING']]) {
      let refused: unknown;
      try {
        parseEventTypes(bad);
      } catch (error) {
        refused = error;
      }
      expect(isAppError(refused) && refused.code === 'validation_error', JSON.stringify(bad)).toBe(true);
    }
    expect(() => parseEventTypes(['x'.repeat(500)])).toThrow(/unknown event type "x{40}"/);
  });

  it('read from the store, fall back to call.completed only when the stored value is unreadable', () => {
    expect(eventTypesFromStored('["call.completed","call.answered"]')).toEqual([
      'call.completed',
      'call.answered',
    ]);
    expect(eventTypesFromStored('not json')).toEqual(['call.completed']);
    expect(eventTypesFromStored(null)).toEqual(['call.completed']);
  });
});

describe('call status event bodies', () => {
  const call = {
    id: 'call_1',
    accountId: 'acc_1',
    agentId: 'agt_1',
    fromNumber: '+15550000001',
    toNumber: '+15550000002',
    variables: null,
  } as unknown as CallRecord;
  const envelope = { id: 'evt_1', createdAt: '2026-11-26T10:00:00.000Z' };
  const summary = {
    call_id: 'call_1',
    agent_id: 'agt_1',
    from_number: '+15550000001',
    to_number: '+15550000002',
    variables: {},
  };

  it('carry the call, their envelope and what each adds', () => {
    expect(callRingingEvent(call, { ...envelope, ringingAt: 'r' })).toEqual({
      type: 'call.ringing',
      id: 'evt_1',
      created_at: envelope.createdAt,
      data: { ...summary, ringing_at: 'r' },
    });
    expect(callAnsweredEvent(call, { ...envelope, answeredAt: 'a', answeredBy: 'machine' }).data).toEqual({
      ...summary,
      answered_at: 'a',
      answered_by: 'machine',
    });
    expect(
      callTransferredEvent(call, {
        ...envelope,
        transferredAt: 't',
        transfer: { target: 'desk', via: 'warm', outcome: 'no_answer', sipStatus: null, reason: 'r' },
      }),
    ).toMatchObject({
      type: 'call.transferred',
      data: { transferred_at: 't', target: 'desk', via: 'warm', outcome: 'no_answer', sip_status: null },
    });
  });
});
