import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentFormText,
  createAgentFromForm,
  formWithoutTypedSecrets,
  updateAgentFromForm,
} from '../../src/admin/agentSettings.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { startFullService } from '../helpers/fullService.js';
import { request } from '../helpers/http.js';

/**
 * A tool's HTTP settings, response mapping and messages are checked when the agent is saved
 * (issue 35): each mistake is a 400 `validation_error` whose message names the field; secrets
 * never come back, through the API or the dashboard's form.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
let key: string;
let accountId: string;

beforeAll(async () => {
  service = await startFullService();
  const account = await service.store.accounts.create({ name: 'tools' });
  accountId = account.id;
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

const tool = (extra: Record<string, unknown>) => ({
  name: 'lookup',
  description: 'Looks an order up.',
  url: 'https://shop.example.com/lookup',
  ...extra,
});

const agentWith = (extra: Record<string, unknown>) => ({
  name: 'Tools',
  prompt: 'p',
  brain: 'llm',
  settings: { tools: [tool(extra)] },
});

describe("a tool's settings, checked when the agent is saved (issue 35)", () => {
  it.each([
    [{ method: 'FETCH' }, /settings\.tools\[0\]\.method must be one of GET, POST, PUT, PATCH, DELETE/],
    [{ query: { v: { nested: true } } }, /settings\.tools\[0\]\.query\.v must be a text/],
    [
      { query: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`q${i}`, 'x'])) },
      /query must map at most 20/,
    ],
    [{ headers: { Host: 'evil.example' } }, /settings\.tools\[0\]\.headers\.Host: Host is set by callwright/],
    [{ headers: { Connection: 'close' } }, /headers\.Connection: Connection is set by callwright/],
    [{ headers: { 'Transfer-Encoding': 'chunked' } }, /headers\.Transfer-Encoding/],
    [{ headers: { 'webhook-signature': 'v1,forged' } }, /headers\.webhook-signature: .*signature/],
    [{ headers: { 'Bad Name': 'x' } }, /headers\.Bad Name must be a header name/],
    [
      { headers: { 'X-Note': 'a\r\nX-Injected: 1' } },
      /headers\.X-Note must be a text of at most 1024 printable/,
    ],
    [{ headers: { 'X-Key': { secret: '' } } }, /headers\.X-Key must be a secret of 1 to 1024/],
    [{ headers: { 'X-Key': { secret: 'a\nb' } } }, /headers\.X-Key must be a secret/],
    [{ headers: { 'X-Key': { sealed: true } } }, /headers\.X-Key: there is no stored secret to keep/],
    [{ headers: { 'X-Key': { sealed: 'v1.forged' } } }, /headers\.X-Key must be a text, \{"secret"/],
    [
      { auth: { type: 'digest', token: 'x' } },
      /settings\.tools\[0\]\.auth\.type must be "bearer", "basic" or "header"/,
    ],
    [{ auth: { type: 'bearer' } }, /auth\.token must be a secret/],
    [{ auth: { type: 'bearer', token: 42 } }, /auth\.token must be a text or \{"sealed": true\}/],
    [{ auth: { type: 'bearer', token: { sealed: true } } }, /auth\.token: there is no stored secret to keep/],
    [
      { auth: { type: 'basic', username: 'a:b', password: 'p4ssword' } },
      /auth\.username must be .* without ":"/,
    ],
    [{ auth: { type: 'header', name: 'Host', value: 'x' } }, /auth\.name: Host is set by callwright/],
    [
      { auth: { type: 'bearer', token: 'tok' }, headers: { Authorization: 'Bearer other' } },
      /headers: authorization is set by settings\.tools\[0\]\.auth/,
    ],
    [
      { response_variables: { status: 'status' } },
      /response_variables\.status must be a path like "\$\.status"/,
    ],
    [
      { response_variables: { status: '$..status' } },
      /response_variables\.status: "\$\.\.status" is not a path/,
    ],
    [{ response_variables: { status: '$.items[*]' } }, /response_variables\.status: .* is not a path/],
    [
      { response_variables: { status: '$.a;process.exit()' } },
      /response_variables\.status: .* is not a path/,
    ],
    [{ response_variables: { status: '$' } }, /response_variables\.status must have 1 to 12 steps/],
    [
      { response_variables: { 'not-a-name': '$.a' } },
      /response_variables: "not-a-name" is not a variable name/,
    ],
    [{ messages: { start: '' } }, /settings\.tools\[0\]\.messages\.start must be a text of 1 to 300/],
    [
      { messages: { delayed_after_ms: 500 } },
      /messages\.delayed_after_ms needs settings\.tools\[0\]\.messages\.delayed/,
    ],
    [
      { timeout_ms: 1_000, messages: { delayed: 'Still looking.', delayed_after_ms: 1_000 } },
      /messages\.delayed_after_ms must be a whole number from 200 to 999/,
    ],
    [{ messages: { failed: 'Sorry.', after: 'x' } }, /messages\.after is not a setting/],
    [
      { messages: { start: 'One moment.' }, say_while_waiting: 'Hold on.' },
      /messages replaces say_while_waiting and filler/,
    ],
  ])('refuses %j with a 400 naming the field', async (extra, why) => {
    const refused = await api('POST', '/agents', agentWith(extra));
    expect(refused.status).toBe(400);
    const error = (refused.body as { error: { code: string; message: string } }).error;
    expect(error.code).toBe('validation_error');
    expect(error.message).toMatch(why);
    // A refused secret is not echoed back either.
    expect(refused.text).not.toContain('p4ssword');
  });

  it('accepts each method, a delayed message with the default delay, and a tool without messages', async () => {
    for (const method of ['GET', 'post', 'PUT', 'PATCH', 'DELETE']) {
      const saved = await api(
        'POST',
        '/agents',
        agentWith({ method, messages: { delayed: 'Still looking.' } }),
      );
      expect(saved.status).toBe(200);
    }
  });

  it('keeps a sealed secret out of the dashboard form, and keeps it when the form is saved unchanged', async () => {
    const created = await api(
      'POST',
      '/agents',
      agentWith({
        headers: { 'X-Key': { secret: 'form-SECRET-42' } },
        auth: { type: 'bearer', token: 'tok-SECRET-43' },
      }),
    );
    expect(created.status).toBe(200);
    const agentId = (created.body as { agent_id: string }).agent_id;
    const stored = await service.store.agents.get(accountId, agentId);
    const form = agentFormText(stored ?? (undefined as never));
    expect(form.settings).not.toContain('SECRET');
    expect(form.settings).not.toContain('v1.');
    expect(JSON.parse(form.settings).tools[0].headers).toEqual({ 'X-Key': { sealed: true } });
    await updateAgentFromForm(service.store, accountId, agentId, form, service.secretBox);
    const after = await service.store.agents.get(accountId, agentId);
    const tools = (
      (after?.settings ?? {}) as {
        tools: Array<{ headers: Record<string, { sealed: string }>; auth: { token: { sealed: string } } }>;
      }
    ).tools;
    expect(service.secretBox.open(tools[0]?.headers['X-Key']?.sealed ?? '')).toBe('form-SECRET-42');
    expect(service.secretBox.open(tools[0]?.auth.token.sealed ?? '')).toBe('tok-SECRET-43');
  });

  it('blanks the secrets typed into a form the dashboard refuses, before showing it again', async () => {
    const form = agentFormText({
      ...((await service.store.agents.list(accountId))[0] ?? (undefined as never)),
      settings: {},
    });
    const typed = {
      ...form,
      settings: JSON.stringify({
        tools: [
          tool({
            method: 'FETCH',
            headers: { 'X-Plain': 'p', 'X-Key': { secret: 'typed-SECRET-1' } },
            auth: { type: 'basic', username: 'u', password: 'typed-SECRET-2' },
          }),
        ],
      }),
    };
    await expect(createAgentFromForm(service.store, accountId, typed, service.secretBox)).rejects.toThrow(
      /settings\.tools\[0\]\.method/,
    );
    const shown = formWithoutTypedSecrets(typed);
    expect(shown.settings).not.toContain('SECRET');
    expect(JSON.parse(shown.settings).tools[0]).toMatchObject({
      method: 'FETCH',
      headers: { 'X-Plain': 'p', 'X-Key': { secret: '' } },
      auth: { type: 'basic', username: 'u', password: '' },
    });
    expect(formWithoutTypedSecrets({ ...typed, settings: '{"auth": {"token": "x"' }).settings).toBe('');
  });
});
