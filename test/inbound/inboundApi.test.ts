import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import { postCall, request } from '../helpers/http.js';
import {
  type AccountFixture,
  createAccountFixture,
  startTestService,
  type TestService,
} from '../helpers/service.js';

/** Issue 40 over HTTP: a number's inbound agent, and calls listed and shown with their direction. */

describe('inbound calls over the API', () => {
  let service: TestService;
  let alpha: AccountFixture;
  let beta: AccountFixture;

  function call(method: string, path: string, key: string, body?: unknown) {
    return request(`${service.url}${path}`, {
      method,
      headers: { 'X-API-Key': key, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  beforeAll(async () => {
    service = await startTestService({ store: 'sqlite' });
    alpha = await createAccountFixture(service.store, { name: 'alpha' });
    beta = await createAccountFixture(service.store, { name: 'beta', number: '+15550008888' });
  });

  afterAll(async () => {
    await service.close();
  });

  it("sets a number's inbound agent, fallback and cap; refuses another account's agent and bad input", async () => {
    const path = `/v1/numbers/${encodeURIComponent(alpha.number)}/inbound`;
    const set = await call('PUT', path, alpha.key, {
      agent_id: alpha.agentId,
      fallback: 'voicemail',
      max_live_calls: 2,
    });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({
      number: alpha.number,
      inbound_agent_id: alpha.agentId,
      inbound_fallback: 'voicemail',
      max_live_calls: 2,
    });
    const listed = await call('GET', '/v1/numbers', alpha.key);
    expect((listed.body as { data: unknown[] }).data).toEqual([
      expect.objectContaining({ inbound_agent_id: alpha.agentId }),
    ]);
    expect((await call('PUT', path, alpha.key, { agent_id: beta.agentId })).status).toBe(404);
    expect((await call('PUT', path, beta.key, { agent_id: beta.agentId })).status).toBe(404);
    expect((await call('PUT', path, alpha.key, { fallback: 'ring' })).status).toBe(400);
    expect((await call('PUT', path, alpha.key, { max_live_calls: 0 })).status).toBe(400);
    expect((await call('PUT', path, alpha.key, { agent: 'x' })).status).toBe(400);
    const cleared = await call('PUT', path, alpha.key, { agent_id: null });
    expect(cleared.body).toMatchObject({
      inbound_agent_id: null,
      inbound_fallback: 'refuse',
      max_live_calls: null,
    });
  });

  it('shows direction and callback_of, and filters the listing by direction', async () => {
    const created = await postCall(service.url, alpha.key, {
      agent_id: alpha.agentId,
      from_number: alpha.number,
      to_number: '+15550100001',
    });
    const outboundId = (created.body as { call_id: string }).call_id;
    const atIso = new Date().toISOString();
    const answered = await service.store.inboundCalls.createAnswering({
      id: newId('call'),
      accountId: alpha.accountId,
      agentId: alpha.agentId,
      fromNumber: '+15550100001',
      toNumber: alpha.number,
      callbackOf: outboundId,
      context: null,
      variables: null,
      sipCallId: 'sip-1',
      workerId: 'wrk_test',
      leaseUntilIso: new Date(Date.now() + 60_000).toISOString(),
      atIso,
    });
    if (!('created' in answered)) throw new Error(answered.refused);
    const inboundId = answered.created.id;
    const shown = await call('GET', `/v1/calls/${inboundId}`, alpha.key);
    expect(shown.body).toMatchObject({
      direction: 'inbound',
      callback_of: outboundId,
      from_number: '+15550100001',
    });
    expect((await call('GET', `/v1/calls/${outboundId}`, alpha.key)).body).toMatchObject({
      direction: 'outbound',
      callback_of: null,
    });
    const ids = async (query: string) =>
      ((await call('GET', `/v1/calls${query}`, alpha.key)).body as { data: { call_id: string }[] }).data.map(
        (entry) => entry.call_id,
      );
    expect(await ids('?direction=inbound')).toEqual([inboundId]);
    expect(await ids('?direction=outbound')).toEqual([outboundId]);
    expect(await ids('')).toEqual([inboundId, outboundId]);
    expect(await ids('?direction=inbound&status=queued')).toEqual([]);
    expect((await call('GET', '/v1/calls?direction=sideways', alpha.key)).status).toBe(400);
    // The other account sees none of it.
    expect(
      ((await call('GET', '/v1/calls?direction=inbound', beta.key)).body as { data: unknown[] }).data,
    ).toEqual([]);
  });
});
