import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completedEventBuilder } from '../../src/calls/completedEvents.js';
import { newId } from '../../src/domain/ids.js';
import { openSqliteStore } from '../../src/openStore.js';
import { type CliResult, runCli, runCliJson } from '../helpers/cli.js';
import { createAccountFixture } from '../helpers/service.js';

/** `callwright webhook …` and `callwright events …`, run as users run them: the built dist/main.js. */

let dataDir: string;

function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(dataDir, args, env);
}

function json(args: string[], env: Record<string, string> = {}): Promise<Record<string, unknown>> {
  return runCliJson(dataDir, args, env);
}

const allowPrivate = { CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true' };

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'callwright-cli-webhooks-'));
});

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe('callwright webhook', () => {
  it('set refuses a private address unless CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE=true, with one clear line', async () => {
    const refused = await cli(['webhook', 'set', 'http://127.0.0.1:4000/hook']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(
      /^callwright: .*loopback address \(127\.0\.0\.1\).*CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE=true/,
    );
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect((await cli(['webhook', 'set', 'ftp://example.com/x'], allowPrivate)).code).toBe(1);
    expect((await cli(['webhook', 'set'])).code).toBe(2);
    const shown = await cli(['webhook', 'show']);
    expect(shown.code).toBe(1);
    expect(shown.stderr).toMatch(/no webhook endpoint is configured/);
  });

  it('set prints the URL and a new whsec_ secret; show, rotate-secret, disable and enable', async () => {
    const set = await json(['webhook', 'set', 'http://127.0.0.1:4000/hook'], allowPrivate);
    expect(Object.keys(set).sort()).toEqual(['secret', 'url']);
    expect(set.url).toBe('http://127.0.0.1:4000/hook');
    expect(set.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    expect(await json(['webhook', 'show'])).toMatchObject({
      url: set.url,
      secret: set.secret,
      enabled: true,
      previous_secret_expires_at: null,
    });
    const rotated = await json(['webhook', 'rotate-secret']);
    expect(rotated.secret).not.toBe(set.secret);
    const expiresInMs = Date.parse(rotated.previous_secret_expires_at as string) - Date.now();
    expect(expiresInMs).toBeGreaterThan(23.9 * 3600 * 1000);
    expect(expiresInMs).toBeLessThanOrEqual(24 * 3600 * 1000);

    expect(await json(['webhook', 'disable', '--reason', 'maintenance'])).toMatchObject({
      enabled: false,
      disabled_reason: 'maintenance',
    });
    expect(await json(['webhook', 'enable'])).toMatchObject({ enabled: true, disabled_reason: null });
    const human = await cli(['webhook', 'show']);
    expect(human.stdout).toMatch(/^url\s+http:\/\/127\.0\.0\.1:4000\/hook$/m);
  });

  it('set-events chooses the events sent besides call.completed; an unknown one is refused', async () => {
    expect(await json(['webhook', 'set-events', 'call.ringing,campaign.completed'])).toEqual({
      url: 'http://127.0.0.1:4000/hook',
      events: ['call.completed', 'call.ringing', 'campaign.completed'],
    });
    expect((await json(['webhook', 'show'])).events).toEqual([
      'call.completed',
      'call.ringing',
      'campaign.completed',
    ]);
    const refused = await cli(['webhook', 'set-events', 'call.ringing,call.hungup']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/unknown event type "call\.hungup"/);
    expect((await cli(['webhook', 'set-events'])).code).toBe(2);
    expect((await json(['webhook', 'set-events', 'call.completed'])).events).toEqual(['call.completed']);
  });
});

describe('callwright events', () => {
  it('list, show and resend the events of the account', async () => {
    const store = openSqliteStore(join(dataDir, 'callwright.db'));
    let callIds: string[] = [];
    let accountId: string;
    try {
      const account = await store.accounts.getOrCreateDefault();
      accountId = account.id;
      const fixture = await createAccountFixture(store, { name: 'events' });
      const keyId = (await store.apiKeys.list(fixture.accountId))[0]?.id as string;
      // Events belong to the default account: agents and keys of another account are fine for the rows.
      callIds = [];
      for (let i = 0; i < 3; i++) {
        const id = newId('call');
        await store.calls.createQueued({
          id,
          accountId,
          agentId: fixture.agentId,
          apiKeyId: keyId,
          fromNumber: '+15550009999',
          toNumber: '+15550100002',
          firstMessage: null,
          context: null,
          variables: null,
          createdAt: new Date().toISOString(),
        });
        await store.calls.finish(
          id,
          { status: 'busy', endReason: 'rejected', atIso: new Date().toISOString() },
          completedEventBuilder(() => null),
        );
        callIds.push(id);
      }
    } finally {
      await store.close();
    }
    const page = (await json(['events', 'list', '--limit', '2'])) as {
      data: { event_id: string; call_id: string; status: string }[];
      has_more: boolean;
      next_cursor: string;
    };
    expect(page.data.map((event) => event.call_id)).toEqual([callIds[2], callIds[1]]);
    expect(page.has_more).toBe(true);
    const rest = (await json(['events', 'list', '--cursor', page.next_cursor])) as {
      data: { call_id: string }[];
    };
    expect(rest.data.map((event) => event.call_id)).toEqual([callIds[0]]);

    const eventId = page.data[0]?.event_id as string;
    const shown = await json(['events', 'show', eventId]);
    expect(shown).toMatchObject({ event_id: eventId, status: 'pending', attempt_log: [] });
    expect((shown.payload as { data: { status: string } }).data.status).toBe('busy');
    expect(await json(['events', 'resend', eventId])).toMatchObject({ event_id: eventId, status: 'pending' });

    const missing = await cli(['events', 'show', 'evt_01JF3Z8V0Q4T7N5W2X9Y6B1C3D']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^callwright: event .* not found/);
    expect((await cli(['events', 'list', '--limit', '0'])).code).toBe(2);
    const human = await cli(['events', 'list']);
    const [header, ...rows] = human.stdout.trim().split('\n');
    expect(header).toMatch(/^EVENT_ID +/);
    expect(rows).toHaveLength(3);
  });
});
