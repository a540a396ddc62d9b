import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { completedEventBuilder } from '../../src/calls/completedEvents.js';
import { WebCallSweeper } from '../../src/calls/webCallSweeper.js';
import { newId } from '../../src/domain/ids.js';
import { newWebCallToken, webCallTokenHash, webCallTokenTtlMs } from '../../src/domain/webCalls.js';
import { createLogger } from '../../src/logger.js';
import { queueNames } from '../../src/queue/types.js';
import {
  type AnyStore,
  type CallOwner,
  countJobs,
  createCallOwner,
  newQueuedCall,
  openTestStore,
  storeKinds,
  type TestStoreHandle,
} from '../helpers/stores.js';

/** Web calls' rows and one-use tokens (issue 39), on both stores. */

describe.each(storeKinds)('web calls on %s', (kind) => {
  let handle: TestStoreHandle;
  let store: AnyStore;
  let owner: CallOwner;

  beforeEach(async () => {
    handle = await openTestStore(kind);
    store = handle.store;
    owner = await createCallOwner(store, { account: { name: 'web', maxLiveCalls: 1 } });
  });

  afterEach(async () => {
    await handle.dispose();
  });

  async function createWebCall(createdAtMs = Date.now()) {
    const token = newWebCallToken();
    const call = await store.webCalls.create({
      id: newId('call'),
      ...owner.owner,
      variables: { customer_name: 'Ann' },
      metadata: { visitor: 'v-17' },
      tokenHash: webCallTokenHash(token),
      createdAt: new Date(createdAtMs).toISOString(),
      expiresAt: new Date(createdAtMs + webCallTokenTtlMs).toISOString(),
    });
    return { token, call };
  }

  it('writes a queued call with channel web and no dispatch job; phone calls stay phone', async () => {
    const { call } = await createWebCall();
    expect(call).toMatchObject({ status: 'queued', channel: 'web', variables: { customer_name: 'Ann' } });
    expect(await store.calls.getById(call.id)).toMatchObject({ channel: 'web' });
    expect(await countJobs(store, queueNames.dispatch, { call_id: call.id })).toBe(0);
    const phone = await store.calls.createQueued(newQueuedCall(owner.owner));
    expect(phone?.channel).toBe('phone');
    expect((await store.calls.getById(phone?.id as string))?.channel).toBe('phone');
  });

  it('gives the call for a token once, and refuses it used, expired or unknown', async () => {
    const { token, call } = await createWebCall();
    const hash = webCallTokenHash(token);
    const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();
    expect(await store.webCalls.consume(hash, at(webCallTokenTtlMs + 1))).toEqual({ refused: 'expired' });
    const uses = await Promise.all([
      store.webCalls.consume(hash, at(0)),
      store.webCalls.consume(hash, at(0)),
    ]);
    expect(uses.filter((use) => 'callId' in use)).toEqual([{ callId: call.id, accountId: owner.account.id }]);
    expect(uses.filter((use) => 'refused' in use)).toEqual([{ refused: 'used' }]);
    expect(await store.webCalls.consume(webCallTokenHash(newWebCallToken()), at(0))).toEqual({
      refused: 'unknown',
    });
  });

  it("a web call is claimed like a dialled one, within the account's live-call cap", async () => {
    const first = await createWebCall();
    const second = await createWebCall();
    const lease = {
      workerId: 'wrk_1',
      untilIso: new Date(Date.now() + 30_000).toISOString(),
      atIso: new Date().toISOString(),
    };
    expect(await store.calls.claimForDialing(first.call.id, lease)).toMatchObject({
      claimed: { channel: 'web' },
    });
    expect(await store.calls.claimForDialing(second.call.id, lease)).toEqual({ refused: 'capped' });
  });

  it('ends, once, the web calls whose token expired unused; never one in use or still waiting', async () => {
    const buildEvent = completedEventBuilder(() => null);
    const sweeper = new WebCallSweeper({ store, buildEvent, logger: createLogger('silent') });
    const expired = await createWebCall(Date.now() - webCallTokenTtlMs - 1_000);
    const waiting = await createWebCall();
    const used = await createWebCall(Date.now() - webCallTokenTtlMs - 1_000);
    expect(
      await store.webCalls.consume(
        webCallTokenHash(used.token),
        new Date(Date.now() - 5_000 - webCallTokenTtlMs).toISOString(),
      ),
    ).toMatchObject({ callId: used.call.id });

    expect(await sweeper.sweep(Date.now())).toBe(1);
    expect(await store.calls.getById(expired.call.id)).toMatchObject({ status: 'canceled', channel: 'web' });
    expect(await store.calls.getById(waiting.call.id)).toMatchObject({ status: 'queued' });
    expect(await store.calls.getById(used.call.id)).toMatchObject({ status: 'queued' });
    const events = await store.events.list(owner.account.id, { limit: 10 });
    expect(events.map((event) => JSON.parse(event.body))).toEqual([
      expect.objectContaining({
        type: 'call.completed',
        data: expect.objectContaining({ call_id: expired.call.id, status: 'canceled' }),
      }),
    ]);
    // A second sweep (another worker's) repeats nothing.
    expect(await sweeper.sweep(Date.now())).toBe(0);
    expect(await store.events.list(owner.account.id, { limit: 10 })).toHaveLength(1);
    // The token that expired can no longer start its call.
    expect(await store.webCalls.consume(webCallTokenHash(expired.token), new Date().toISOString())).toEqual({
      refused: 'expired',
    });
  });

  it("keeps an account's allowed origins whole, replaced at once", async () => {
    expect(await store.webCalls.allowedOrigins(owner.account.id)).toEqual([]);
    const before = await createWebCall();
    expect(await store.webCalls.tokenOwner(webCallTokenHash(before.token))).toMatchObject({
      allowedOrigins: [],
    });
    await store.webCalls.setAllowedOrigins(
      owner.account.id,
      ['https://a.example.com', 'http://localhost:8080'],
      new Date().toISOString(),
    );
    await store.webCalls.setAllowedOrigins(
      owner.account.id,
      ['https://b.example.com'],
      new Date().toISOString(),
    );
    expect(await store.webCalls.allowedOrigins(owner.account.id)).toEqual(['https://b.example.com']);
    const other = await createCallOwner(store, { account: { name: 'other', maxLiveCalls: 1 } });
    expect(await store.webCalls.allowedOrigins(other.account.id)).toEqual([]);
    const { token, call } = await createWebCall();
    // The connect route reads the token's owner and its account's origins in one query.
    expect(await store.webCalls.tokenOwner(webCallTokenHash(token))).toEqual({
      callId: call.id,
      accountId: owner.account.id,
      agentId: owner.owner.agentId,
      allowedOrigins: ['https://b.example.com'],
    });
    expect(await store.webCalls.tokenOwner(webCallTokenHash(newWebCallToken()))).toBeNull();
  });
});
