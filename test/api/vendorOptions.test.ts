import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { startFullService } from '../helpers/fullService.js';
import { request } from '../helpers/http.js';

/**
 * Issue 33 item 5 over the management API: a vendor option the provider does not have, or a value
 * that does not fit it, is refused when the agent is created or changed — 400 validation_error
 * naming the option — instead of being stored, echoed back and never sent. Known options are kept
 * and echoed.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
let key: string;

beforeAll(async () => {
  service = await startFullService();
  const account = await service.store.accounts.create({ name: 'options' });
  ({ key } = await createApiKey(service.store, account.id, 'k'));
});

afterAll(async () => {
  await service?.dispose();
});

const api = (method: string, path: string, body?: unknown) =>
  request(`${service.url}/v1${path}`, {
    method,
    headers: { 'X-API-Key': key, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });

const errorOf = (result: { body: unknown }) =>
  (result.body as { error: { code: string; message: string } }).error;

const agentWith = (settings: Record<string, unknown>) => ({
  name: 'Options',
  prompt: 'Be brief.',
  brain: 'llm',
  settings,
});

describe('vendor options when an agent is saved', () => {
  it('refuses an unknown option on create, naming it, and stores nothing', async () => {
    const before = ((await api('GET', '/agents')).body as { data: unknown[] }).data.length;
    const refused = await api(
      'POST',
      '/agents',
      agentWith({ stt: { provider: 'deepgram', options: { endpointing: 300, foo: 1 } } }),
    );
    expect(refused.status).toBe(400);
    expect(errorOf(refused).code).toBe('validation_error');
    expect(errorOf(refused).message).toMatch(/^settings\.stt\.options\.foo is not an option of deepgram/);
    expect(((await api('GET', '/agents')).body as { data: unknown[] }).data).toHaveLength(before);

    const badValue = await api(
      'POST',
      '/agents',
      agentWith({
        tts: { provider: 'elevenlabs', fallback: [{ provider: 'cartesia', options: { speed: 9 } }] },
      }),
    );
    expect(badValue.status).toBe(400);
    expect(errorOf(badValue).message).toMatch(
      /^settings\.tts\.fallback\[0\]\.options\.speed must be a number from 0\.6 to 1\.5/,
    );
  });

  it('keeps known options on create and refuses an unknown one on update, leaving the agent as it was', async () => {
    const created = await api(
      'POST',
      '/agents',
      agentWith({
        stt: { provider: 'deepgram', options: { endpointing: 300, smart_format: true } },
        llm: { provider: 'openai', options: { temperature: 0.3 } },
      }),
    );
    expect(created.status).toBe(200);
    const agent = created.body as { agent_id: string; settings: Record<string, unknown> };
    expect(agent.settings).toMatchObject({
      stt: { options: { endpointing: 300, smart_format: true } },
      llm: { options: { temperature: 0.3 } },
    });

    const refused = await api('PATCH', `/agents/${agent.agent_id}`, {
      settings: { llm: { provider: 'openai', options: { temperature: 0.3, tempreature: 1 } } },
    });
    expect(refused.status).toBe(400);
    expect(errorOf(refused)).toMatchObject({ code: 'validation_error' });
    expect(errorOf(refused).message).toMatch(
      /^settings\.llm\.options\.tempreature is not an option of openai/,
    );

    const realtime = await api('PATCH', `/agents/${agent.agent_id}`, {
      settings: {
        realtime: {
          provider: 'openai',
          options: { turn_detection: 'semantic_vad', silence_duration_ms: 400 },
        },
      },
    });
    expect(realtime.status).toBe(400);
    expect(errorOf(realtime).message).toMatch(
      /settings\.realtime\.options\.silence_duration_ms applies to server_vad turn detection only/,
    );

    const stored = (await api('GET', `/agents/${agent.agent_id}`)).body as {
      settings: Record<string, unknown>;
    };
    expect(stored.settings).toEqual(agent.settings);
  });
});
