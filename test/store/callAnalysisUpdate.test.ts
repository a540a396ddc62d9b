import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { completedEventBuilder } from '../../src/calls/completedEvents.js';
import type { CallAnalysis } from '../../src/domain/callAnalysis.js';
import {
  type AnyStore,
  type CallOwner,
  createCallOwner,
  newQueuedCall,
  openTestStore,
  storeKinds,
  type TestStoreHandle,
} from '../helpers/stores.js';

/**
 * `calls.setAnalysis` (POST /v1/calls/{id}/analysis) on both stores: it replaces the analysis and
 * extracted data of an ended call of the account, and touches nothing else — not a live call, not
 * another account's call, not the call's status or its call.completed.
 */

const newAnalysis: CallAnalysis = {
  status: 'completed',
  reason: null,
  summary: 'Confirmed for Tuesday.',
  success: { passed: true, explanation: 'It was confirmed.' },
};

describe.each(storeKinds)('calls.setAnalysis on %s', (kind) => {
  let handle: TestStoreHandle;
  let store: AnyStore;
  let owner: CallOwner;

  beforeEach(async () => {
    handle = await openTestStore(kind);
    store = handle.store;
    owner = await createCallOwner(store);
  });

  afterEach(async () => {
    await handle.dispose();
  });

  it("replaces an ended call's analysis and data, and nothing else", async () => {
    const call = await store.calls.createQueued(newQueuedCall(owner.owner));
    const callId = call?.id as string;
    const result = { extractedData: { outcome: 'confirmed' }, analysis: newAnalysis };
    // Not ended: untouched.
    expect(await store.calls.setAnalysis(owner.account.id, callId, result)).toBeNull();
    await store.calls.finish(
      callId,
      {
        status: 'completed',
        endReason: 'agent_hangup',
        atIso: new Date().toISOString(),
        extractedData: {},
        analysis: { status: 'failed', reason: 'the model timed out', summary: null, success: null },
      },
      completedEventBuilder(() => null),
    );
    const other = await createCallOwner(store, { account: { name: 'other' } });
    expect(await store.calls.setAnalysis(other.account.id, callId, result)).toBeNull();
    const updated = await store.calls.setAnalysis(owner.account.id, callId, result);
    expect(updated).toMatchObject({
      id: callId,
      status: 'completed',
      endReason: 'agent_hangup',
      extractedData: { outcome: 'confirmed' },
      analysis: newAnalysis,
    });
    expect(await store.calls.get(owner.account.id, callId)).toMatchObject({
      extractedData: { outcome: 'confirmed' },
      analysis: newAnalysis,
    });
    // Still the one call.completed, as it was sent.
    const events = (await store.events.list(owner.account.id, { limit: 10 })).filter(
      (event) => event.callId === callId,
    );
    expect(events.map((event) => event.type)).toEqual(['call.completed']);
    expect(JSON.parse(events[0]?.body ?? '{}').data.analysis.status).toBe('failed');
  });
});
