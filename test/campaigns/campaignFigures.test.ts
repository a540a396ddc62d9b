import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { completedEventBuilder } from '../../src/calls/completedEvents.js';
import { campaignFigures } from '../../src/campaigns/campaignResults.js';
import { createCampaign } from '../../src/campaigns/createCampaign.js';
import type { CampaignRecord } from '../../src/domain/campaigns.js';
import { newId } from '../../src/domain/ids.js';
import type { CallFinish } from '../../src/domain/records.js';
import { type AnyStore, openTestStore, sqlOn, storeKinds, type TestStoreHandle } from '../helpers/stores.js';

/**
 * Issue 37, campaign figures: kept per (campaign, caller ID, callee's local hour) by a trigger in
 * the transaction that finishes a call — not recounted when read. On each store, calls finished
 * at once by four processes (four stores on the same data) add up exactly; a call canceled before
 * it was dialled is no attempt; a finish that does not apply (already finished) adds nothing; and
 * the figures survive the erasure of the calls they count.
 */

const callsPerProcess = 25;
const processes = 4;
const callerIds = ['+15550009991', '+15550009992'];

describe.each(storeKinds)('campaign figures on the %s store', (kind) => {
  let handle: TestStoreHandle;
  let store: AnyStore;
  let campaign: CampaignRecord;
  let accountId = '';
  let apiKeyId = '';
  let agentId = '';

  beforeAll(async () => {
    handle = await openTestStore(kind);
    store = handle.store;
    const account = await store.accounts.create({ name: 'figures' });
    accountId = account.id;
    const key = await createApiKey(store, accountId, 'k');
    apiKeyId = key.record.id;
    agentId = (await createAgent(store, accountId, { name: 'A', prompt: 'p', firstMessage: 'Hello.' })).id;
    for (const number of callerIds) await addPhoneNumber(store, accountId, number);
    campaign = await createCampaign(
      store,
      { account, apiKeyId },
      {
        agent_id: agentId,
        caller_ids: callerIds,
        calling_window: { start: '00:00', end: '23:59' },
        time_zone: 'UTC',
        // Far ahead: nothing here dials; the test writes the attempts and finishes the calls itself.
        starts_at: '2099-01-01T00:00:00.000Z',
      },
      { kind: 'json', contacts: [{ to_number: '+15550100001' }] },
    );
  }, 60_000);

  afterAll(async () => {
    await handle?.dispose();
  });

  /** A queued (then answered) call of the campaign, attempt recorded at `localHour`. */
  async function attemptCall(index: number, localHour: number): Promise<string> {
    const callId = newId('call');
    const createdAt = new Date().toISOString();
    await store.campaigns.recordAttempt({
      callId,
      campaignId: campaign.id,
      contactId: newId('campaignContact'),
      attempt: 1,
      createdAt,
      localHour,
    });
    const call = await store.calls.createQueued({
      id: callId,
      accountId,
      agentId,
      apiKeyId,
      fromNumber: callerIds[index % 2] as string,
      toNumber: `+1555010000${String(index).padStart(4, '0')}`,
      firstMessage: null,
      context: null,
      variables: null,
      createdAt,
    });
    expect(call).not.toBeNull();
    return callId;
  }

  /** Call `index` ends busy, answered by a person (a success), or by a machine; 30 s connected. */
  function finishOf(index: number, answeredAt: number): CallFinish {
    const kindOf = index % 3;
    return {
      status: kindOf === 0 ? 'busy' : 'completed',
      endReason: kindOf === 0 ? 'rejected' : 'callee_hangup',
      answeredBy: kindOf === 2 ? 'machine' : kindOf === 1 ? 'human' : null,
      metrics: { cost: { currency: 'USD', total_usd: 0.0125, by_stage: {} } },
      analysis:
        kindOf === 1
          ? {
              status: 'completed',
              reason: null,
              summary: 'ok',
              success: { passed: index % 2 === 0, explanation: '' },
            }
          : null,
      atIso: new Date(answeredAt + 30_000).toISOString(),
    } as CallFinish;
  }

  it('calls finished at once by four processes add up exactly, per caller ID and local hour', async () => {
    const total = callsPerProcess * processes;
    const answeredAt = Date.parse('2026-11-27T10:00:00.000Z');
    const callIds: string[] = [];
    for (let index = 0; index < total; index += 1) callIds.push(await attemptCall(index, index % 24));
    // Answered 30 s before they end (busy calls never reach in_progress).
    for (const [index, callId] of callIds.entries()) {
      if (index % 3 === 0) continue;
      await sqlOn(store, "UPDATE calls SET status = 'in_progress', in_progress_at = ? WHERE id = ?", [
        new Date(answeredAt).toISOString(),
        callId,
      ]);
    }
    const writers = await Promise.all(Array.from({ length: processes }, () => handle.openAnother()));
    const buildEvent = completedEventBuilder(() => null);
    await Promise.all(
      writers.map(async (writer, process) => {
        for (let step = 0; step < callsPerProcess; step += 1) {
          const index = step * processes + process;
          const finished = await writer.calls.finish(
            callIds[index] as string,
            finishOf(index, answeredAt),
            buildEvent,
          );
          expect(finished).not.toBeNull();
        }
      }),
    );
    // Finishing again applies to nothing, and adds nothing.
    expect(await store.calls.finish(callIds[1] as string, finishOf(1, answeredAt), buildEvent)).toBeNull();

    const expected = { attempts: 0, answered: 0, voicemail: 0, succeeded: 0, connected: 0 };
    const byCaller = new Map<string, number>();
    const byHour = new Map<number, number>();
    for (let index = 0; index < total; index += 1) {
      const kindOf = index % 3;
      expected.attempts += 1;
      if (kindOf === 1) expected.answered += 1;
      if (kindOf === 2) expected.voicemail += 1;
      if (kindOf === 1 && index % 2 === 0) expected.succeeded += 1;
      if (kindOf !== 0) expected.connected += 30_000;
      const caller = callerIds[index % 2] as string;
      byCaller.set(caller, (byCaller.get(caller) ?? 0) + 1);
      byHour.set(index % 24, (byHour.get(index % 24) ?? 0) + 1);
    }
    const figures = await campaignFigures(store, campaign);
    expect(figures.overall).toEqual({
      attempts: expected.attempts,
      connected_minutes: Math.round((expected.connected / 60_000) * 100) / 100,
      cost_usd: Math.round(expected.attempts * 12_500) / 1_000_000,
      answered: expected.answered,
      voicemail: expected.voicemail,
      succeeded: expected.succeeded,
      answer_rate: Math.round((expected.answered / expected.attempts) * 10_000) / 10_000,
      voicemail_rate: Math.round((expected.voicemail / expected.attempts) * 10_000) / 10_000,
      success_rate: Math.round((expected.succeeded / expected.answered) * 10_000) / 10_000,
    });
    expect(figures.by_caller_id.map((row) => [row.caller_id, row.attempts])).toEqual([...byCaller.entries()]);
    expect(figures.by_local_hour.map((row) => [row.local_hour, row.attempts])).toEqual(
      [...byHour.entries()].sort(([a], [b]) => a - b),
    );
  }, 120_000);

  it('a call canceled before it was dialled is no attempt; erasing calls keeps the figures', async () => {
    const before = await campaignFigures(store, campaign);
    const callId = await attemptCall(9_000, 5);
    await store.calls.finish(
      callId,
      { status: 'canceled', endReason: 'do_not_call', atIso: new Date().toISOString() } as CallFinish,
      completedEventBuilder(() => null),
    );
    expect(await campaignFigures(store, campaign)).toEqual(before);
    // The erasure path itself: the number's calls (and their attempts) go, the sums stay.
    const number = '+15550100000001';
    const calls = await store.privacy.callsOfNumber(accountId, number);
    expect(calls).toHaveLength(1);
    expect(
      await store.privacy.eraseNumber(
        accountId,
        number,
        calls.map((call) => call.id),
      ),
    ).toMatchObject({
      calls: 1,
    });
    expect(await campaignFigures(store, campaign)).toEqual(before);
  });
});
