import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { request } from '../helpers/http.js';

/**
 * The management API (issue 17, item 1) through HTTP with the whole service: an agent made, read,
 * changed and deactivated over the API places real sandbox calls; caller IDs are added and removed;
 * the webhook endpoint is set (its URL guarded), read and its secret rotated — each only within
 * the key's own account.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
let key: string;
let otherKey: string;

beforeAll(async () => {
  service = await startFullService();
  const account = await service.store.accounts.create({ name: 'managed' });
  ({ key } = await createApiKey(service.store, account.id, 'k'));
  const other = await service.store.accounts.create({ name: 'other' });
  ({ key: otherKey } = await createApiKey(service.store, other.id, 'k'));
});

afterAll(async () => {
  await service?.dispose();
});

const api = (method: string, path: string, body?: unknown, apiKey = key) =>
  request(`${service.url}/v1${path}`, {
    method,
    headers: { 'X-API-Key': apiKey, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });

const errorOf = (result: { body: unknown }) =>
  (result.body as { error: { code: string; message: string } }).error;

describe('agents over the API', () => {
  it('creates, reads, lists, changes and deactivates an agent that places real calls', async () => {
    const created = await api('POST', '/agents', {
      name: 'Reminder',
      prompt: 'Remind {{customer_name}}.',
      first_message: 'Hello {{customer_name}}, this is a reminder.',
      variables: ['customer_name!'],
      extraction: [{ name: 'confirmed', type: 'boolean', description: 'they confirmed' }],
      max_duration_s: 4,
    });
    expect(created.status).toBe(200);
    const agent = created.body as { agent_id: string; variables: { name: string; required: boolean }[] };
    expect(agent).toMatchObject({ name: 'Reminder', active: true, brain: 'script', max_duration_s: 4 });
    expect(agent.variables).toEqual([expect.objectContaining({ name: 'customer_name', required: true })]);
    expect((await api('GET', `/agents/${agent.agent_id}`)).body).toMatchObject({ agent_id: agent.agent_id });
    expect(((await api('GET', '/agents')).body as { data: unknown[] }).data).toHaveLength(1);
    expect((await api('GET', `/agents/${agent.agent_id}`, undefined, otherKey)).status).toBe(404);

    expect((await api('POST', '/numbers', { number: '+15550009901' })).body).toMatchObject({
      number: '+15550009901',
      route: 'sandbox',
    });
    const call = async () => {
      const placed = await api('POST', '/calls/outbound', {
        agent_id: agent.agent_id,
        from_number: '+15550009901',
        to_number: '+15550100007',
        variables: { customer_name: 'Ann' },
      });
      return placed;
    };
    const first = await call();
    expect(first.status).toBe(200);
    const ended = await waitForTerminal(service, (first.body as { call_id: string }).call_id);
    expect(ended.transcript[0]?.text).toBe('Hello Ann, this is a reminder.');

    const changed = await api('PATCH', `/agents/${agent.agent_id}`, {
      first_message: 'Hi {{customer_name}}!',
    });
    expect(changed.body).toMatchObject({
      first_message: 'Hi {{customer_name}}!',
      prompt: 'Remind {{customer_name}}.',
    });
    const second = await call();
    const secondEnded = await waitForTerminal(service, (second.body as { call_id: string }).call_id);
    expect(secondEnded.transcript[0]?.text).toBe('Hi Ann!');

    expect((await api('POST', `/agents/${agent.agent_id}/deactivate`)).body).toMatchObject({ active: false });
    expect((await call()).status).toBe(404);
    expect((await api('POST', `/agents/${agent.agent_id}/activate`)).body).toMatchObject({ active: true });
  }, 40_000);

  it.each([
    [{ prompt: 'p' }, /name is required/],
    [{ name: 'x', prompt: 'p', colour: 'red' }, /unknown field: colour/],
    [{ name: 'x', prompt: 'p', variables: ['bad name'] }, /not a valid variable name/],
    [{ name: 'x', prompt: 'p', brain: 'llm', settings: { tts: { provider: 'nope' } } }, /settings\.tts/],
    [{ name: 'x', prompt: 'p' }, /would never speak/],
    [{ name: 'x', prompt: 'p', brain: 'llm', max_duration_s: 0 }, /max duration/],
  ])('refuses %j with a 400 that says why', async (body, why) => {
    const refused = await api('POST', '/agents', body);
    expect(refused.status).toBe(400);
    expect(errorOf(refused).message).toMatch(why);
  });

  it('a change is checked as a new agent is, and an unknown agent is 404', async () => {
    const created = await api('POST', '/agents', { name: 'Talker', prompt: 'p', brain: 'llm' });
    const id = (created.body as { agent_id: string }).agent_id;
    const refused = await api('PATCH', `/agents/${id}`, { settings: { voicemail: { action: 'sing' } } });
    expect(refused.status).toBe(400);
    expect(errorOf(refused).message).toMatch(/settings\.voicemail\.action/);
    expect((await api('PATCH', '/agents/agt_nope', { name: 'y' })).status).toBe(404);
    expect((await api('POST', '/agents/agt_nope/deactivate')).status).toBe(404);
  });

  it('refuses, when the agent is saved, a tool on a private address, as a call would (issue 35)', async () => {
    const tool = (url: string) => ({
      name: 'lookup',
      description: 'Looks an order up.',
      parameters: { type: 'object', properties: {} },
      url,
    });
    const refused = await api('POST', '/agents', {
      name: 'Tools',
      prompt: 'p',
      brain: 'llm',
      settings: { tools: [tool('http://127.0.0.1:8080/lookup')] },
    });
    expect(refused.status).toBe(400);
    expect(errorOf(refused)).toMatchObject({ code: 'validation_error' });
    expect(errorOf(refused).message).toMatch(/settings\.tools\[0\]\.url: points to a loopback address/);
    const created = await api('POST', '/agents', {
      name: 'Tools',
      prompt: 'p',
      brain: 'llm',
      settings: { tools: [tool('https://shop.example.com/lookup')] },
    });
    expect(created.status).toBe(200);
    const id = (created.body as { agent_id: string }).agent_id;
    const changed = await api('PATCH', `/agents/${id}`, {
      settings: { tools: [tool('http://10.1.2.3/lookup')] },
    });
    expect(changed.status).toBe(400);
    expect(errorOf(changed).message).toMatch(/settings\.tools\[0\]\.url: points to a private address/);
  });
});

describe('caller IDs and the webhook over the API', () => {
  it('numbers: added once, listed, removed; a bad number is invalid_phone, an unknown route a 400', async () => {
    expect((await api('POST', '/numbers', { number: '+15550009902' })).status).toBe(200);
    expect((await api('POST', '/numbers', { number: '+15550009902' })).status).toBe(409);
    expect(errorOf(await api('POST', '/numbers', { number: '5550009902' }))).toMatchObject({
      code: 'invalid_phone',
    });
    expect(
      errorOf(await api('POST', '/numbers', { number: '+15550009903', route: 'nowhere' })).message,
    ).toMatch(/unknown route/);
    const listed = (await api('GET', '/numbers')).body as { data: { number: string }[] };
    expect(listed.data.map((entry) => entry.number)).toContain('+15550009902');
    expect(((await api('GET', '/numbers', undefined, otherKey)).body as { data: unknown[] }).data).toEqual(
      [],
    );
    expect((await api('DELETE', '/numbers/+15550009902')).body).toEqual({
      number: '+15550009902',
      deleted: true,
    });
    expect((await api('DELETE', '/numbers/+15550009902')).status).toBe(404);
  });

  it('webhook: a private address is refused; set, read and rotate; none yet is 404', async () => {
    expect((await api('GET', '/webhook')).status).toBe(404);
    const refused = await api('PUT', '/webhook', { url: 'http://127.0.0.1:9/hook' });
    expect(refused.status).toBe(400);
    const set = await api('PUT', '/webhook', { url: 'https://hooks.example.com/callwright' });
    expect(set.body).toMatchObject({
      url: 'https://hooks.example.com/callwright',
      enabled: true,
      secret: expect.stringMatching(/^whsec_/),
      previous_secret_expires_at: null,
    });
    const secret = (set.body as { secret: string }).secret;
    expect((await api('GET', '/webhook')).body).toMatchObject({ secret });
    const rotated = await api('POST', '/webhook/rotate-secret');
    expect((rotated.body as { secret: string }).secret).not.toBe(secret);
    expect(
      (rotated.body as { previous_secret_expires_at: string | null }).previous_secret_expires_at,
    ).not.toBeNull();
    expect((await api('GET', '/webhook', undefined, otherKey)).status).toBe(404);
  });

  it('webhook events: call.completed always, the others once chosen; bad lists are 400, no endpoint 404', async () => {
    expect((await api('PUT', '/webhook/events', { events: ['call.ringing'] }, otherKey)).status).toBe(404);
    expect((await api('GET', '/webhook')).body).toMatchObject({ events: ['call.completed'] });
    const chosen = await api('PUT', '/webhook/events', { events: ['campaign.completed', 'call.answered'] });
    expect(chosen.status).toBe(200);
    expect(chosen.body).toMatchObject({ events: ['call.completed', 'call.answered', 'campaign.completed'] });
    const secret = (chosen.body as { secret: string }).secret;
    for (const bad of [
      { events: ['call.started'] },
      { events: 'call.ringing' },
      { events: [7] },
      {},
      { events: [], url: 'https://elsewhere.example.com' },
    ]) {
      const refused = await api('PUT', '/webhook/events', bad);
      expect(refused.status, JSON.stringify(bad)).toBe(400);
      expect((refused.body as { error: { code: string } }).error.code).toBe('validation_error');
    }
    // The refusals changed nothing; an empty list leaves call.completed only, and the secret as it was.
    expect((await api('GET', '/webhook')).body).toMatchObject({
      events: ['call.completed', 'call.answered', 'campaign.completed'],
    });
    const cleared = await api('PUT', '/webhook/events', { events: [] });
    expect(cleared.body).toMatchObject({ events: ['call.completed'], secret });
  });
});
