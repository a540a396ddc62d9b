import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import type { NewInboundCall } from '../../src/store/inboundCallRepository.js';
import {
  type AnyStore,
  type CallOwner,
  createCallOwner,
  newQueuedCall,
  openTestStore,
  storeKinds,
  type TestStoreHandle,
} from '../helpers/stores.js';

/** Inbound calls' rows, numbers' inbound settings, the callback lookup and the caps (issue 40), on both stores. */

const ourNumber = '+15550000001';
const caller = '+15550000002';

describe.each(storeKinds)('inbound calls on %s', (kind) => {
  let handle: TestStoreHandle;
  let store: AnyStore;
  let owner: CallOwner;

  beforeEach(async () => {
    handle = await openTestStore(kind);
    store = handle.store;
    owner = await createCallOwner(store, { account: { name: 'inbound', maxLiveCalls: 2 } });
    await store.numbers.add({ accountId: owner.account.id, number: ourNumber, route: 'sandbox' });
  });

  afterEach(async () => {
    await handle.dispose();
  });

  function inbound(overrides: Partial<NewInboundCall> = {}): NewInboundCall {
    const atMs = Date.now();
    return {
      id: newId('call'),
      accountId: owner.account.id,
      agentId: owner.agent.id,
      fromNumber: caller,
      toNumber: ourNumber,
      callbackOf: null,
      context: null,
      variables: null,
      sipCallId: newId('call'),
      workerId: 'wrk_1',
      leaseUntilIso: new Date(atMs + 30_000).toISOString(),
      atIso: new Date(atMs).toISOString(),
      ...overrides,
    };
  }

  it('existing calls are outbound; an inbound call is written live with its direction and link', async () => {
    const outbound = await store.calls.createQueued(
      newQueuedCall(owner.owner, { fromNumber: ourNumber, toNumber: caller }),
    );
    expect(outbound).toMatchObject({ direction: 'outbound', callbackOf: null });
    const result = await store.inboundCalls.createAnswering(inbound({ callbackOf: outbound?.id ?? null }));
    if (!('created' in result)) throw new Error(`refused: ${result.refused}`);
    expect(result.created).toMatchObject({
      direction: 'inbound',
      callbackOf: outbound?.id,
      status: 'dialing',
      fromNumber: caller,
      toNumber: ourNumber,
      apiKeyId: null,
      workerId: 'wrk_1',
    });
    const inboundOnly = await store.inboundCalls.list(owner.account.id, { direction: 'inbound', limit: 10 });
    expect(inboundOnly.map((call) => call.id)).toEqual([result.created.id]);
    const outboundOnly = await store.inboundCalls.list(owner.account.id, {
      direction: 'outbound',
      limit: 10,
    });
    expect(outboundOnly.map((call) => call.id)).toEqual([outbound?.id]);
  });

  it('finds the latest outbound call to the caller within the window, from that number only', async () => {
    const sinceIso = new Date(Date.now() - 60_000).toISOString();
    expect(
      await store.inboundCalls.latestOutboundTo(owner.account.id, ourNumber, caller, sinceIso),
    ).toBeNull();
    const old = await store.calls.createQueued(
      newQueuedCall(owner.owner, {
        fromNumber: ourNumber,
        toNumber: caller,
        createdAt: new Date(Date.now() - 120_000).toISOString(),
      }),
    );
    expect(old).not.toBeNull();
    expect(
      await store.inboundCalls.latestOutboundTo(owner.account.id, ourNumber, caller, sinceIso),
    ).toBeNull();
    await store.calls.createQueued(
      newQueuedCall(owner.owner, { fromNumber: '+15550000009', toNumber: caller }),
    );
    const recent = await store.calls.createQueued(
      newQueuedCall(owner.owner, { fromNumber: ourNumber, toNumber: caller }),
    );
    const found = await store.inboundCalls.latestOutboundTo(owner.account.id, ourNumber, caller, sinceIso);
    expect(found?.id).toBe(recent?.id);
  });

  it('keeps a number inbound agent, fallback and cap', async () => {
    const number = await store.inboundCalls.setNumberInbound(owner.account.id, ourNumber, {
      inboundAgentId: owner.agent.id,
      inboundFallback: 'voicemail',
      maxLiveCalls: 1,
    });
    expect(number).toMatchObject({
      inboundAgentId: owner.agent.id,
      inboundFallback: 'voicemail',
      maxLiveCalls: 1,
    });
    expect(await store.numbers.get(owner.account.id, ourNumber)).toMatchObject({ maxLiveCalls: 1 });
    expect(await store.inboundCalls.numbersCalled(ourNumber)).toHaveLength(1);
    expect(
      await store.inboundCalls.setNumberInbound(owner.account.id, '+15550000077', {
        inboundAgentId: null,
        inboundFallback: 'refuse',
        maxLiveCalls: null,
      }),
    ).toBeNull();
  });

  it('counts inbound and outbound live calls together against the number and account caps, race-free', async () => {
    await store.inboundCalls.setNumberInbound(owner.account.id, ourNumber, {
      inboundAgentId: owner.agent.id,
      inboundFallback: 'refuse',
      maxLiveCalls: 1,
    });
    // An outbound call live on the number fills its cap of one.
    const outbound = await store.calls.createQueued(
      newQueuedCall(owner.owner, { fromNumber: ourNumber, toNumber: caller }),
    );
    const lease = {
      workerId: 'wrk_1',
      untilIso: new Date(Date.now() + 30_000).toISOString(),
      atIso: new Date().toISOString(),
    };
    expect('claimed' in (await store.calls.claimForDialing(outbound?.id as string, lease))).toBe(true);
    expect(await store.inboundCalls.createAnswering(inbound())).toEqual({ refused: 'number_capped' });
    // Without the number's cap, only the account's (2) applies: of three at once, one gets in.
    await store.inboundCalls.setNumberInbound(owner.account.id, ourNumber, {
      inboundAgentId: owner.agent.id,
      inboundFallback: 'refuse',
      maxLiveCalls: null,
    });
    const results = await Promise.all([
      store.inboundCalls.createAnswering(inbound()),
      store.inboundCalls.createAnswering(inbound()),
      store.inboundCalls.createAnswering(inbound()),
    ]);
    expect(results.filter((result) => 'created' in result)).toHaveLength(1);
    expect(
      results.filter((result) => 'refused' in result && result.refused === 'account_capped'),
    ).toHaveLength(2);
  });
});
