import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { completedEventBuilder } from '../../src/calls/completedEvents.js';
import type { AccountRecord, AgentRecord, ApiKeyRecord } from '../../src/domain/records.js';
import {
  type AnyStore,
  createCallOwner,
  newQueuedCall,
  openTestStore,
  storeKinds,
  type TestStoreHandle,
} from '../helpers/stores.js';

/**
 * The variables a call's tools set (`response_variables`) are written with its end, on SQLite and
 * on PostgreSQL, and its `call.completed` event reports them; an end without them keeps the
 * request's variables.
 */

const buildEvent = completedEventBuilder(() => null);

describe.each(storeKinds)('the variables tools set, at the end of a call, on %s', (kind) => {
  let handle: TestStoreHandle;
  let store: AnyStore;
  let owner: { account: AccountRecord; key: ApiKeyRecord; agent: AgentRecord };

  beforeEach(async () => {
    handle = await openTestStore(kind);
    store = handle.store;
    owner = await createCallOwner(store, { agent: { script: { start: { say: 'x' } } } });
  });

  afterEach(async () => {
    await handle.dispose();
  });

  async function liveCall(): Promise<string> {
    const call = await store.calls.createQueued(
      newQueuedCall(
        { accountId: owner.account.id, agentId: owner.agent.id, apiKeyId: owner.key.id },
        { variables: { customer_name: 'Ann' } },
      ),
    );
    const id = call?.id ?? '';
    const atIso = new Date().toISOString();
    await store.calls.claimForDialing(id, {
      workerId: 'w',
      untilIso: new Date(Date.now() + 30_000).toISOString(),
      atIso,
    });
    await store.calls.markLive(id, 'w', 'in_progress', atIso);
    return id;
  }

  it('stores them and reports them in call.completed', async () => {
    const id = await liveCall();
    const variables = { customer_name: 'Ann', order_status: 'shipped', eta_days: 2, gift: false };
    const finished = await store.calls.finish(
      id,
      { status: 'completed', endReason: 'agent_hangup', variables, atIso: new Date().toISOString() },
      buildEvent,
    );
    expect(finished?.variables).toEqual(variables);
    expect((await store.calls.getById(id))?.variables).toEqual(variables);
    const [event] = await store.events.list(owner.account.id, { limit: 1 });
    expect(JSON.parse(event?.body ?? '{}').data.variables).toEqual(variables);
  });

  it("keeps the request's variables when the end brings none", async () => {
    const id = await liveCall();
    await store.calls.finish(
      id,
      { status: 'completed', endReason: 'agent_hangup', atIso: new Date().toISOString() },
      buildEvent,
    );
    expect((await store.calls.getById(id))?.variables).toEqual({ customer_name: 'Ann' });
  });
});
