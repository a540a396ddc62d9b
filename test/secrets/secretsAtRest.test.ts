import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { rotateWebhookSecret, setWebhookEndpoint } from '../../src/admin/webhooks.js';
import { createRecordingLinks, recordingLinkKeyName } from '../../src/api/recordingLinks.js';
import { createLogger } from '../../src/logger.js';
import { type RunningService, startService } from '../../src/server.js';
import { generateWebhookSecret } from '../../src/webhooks/signing.js';
import { verifyWebhook } from '../../src/webhooks/verify.js';
import { callFixture, loopbackServiceConfig } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';
import { dropTestSchema, newTestSchema, testPostgresUrl } from '../helpers/postgres.js';
import { LogCapture } from '../helpers/service.js';
import { type StoreKind, sqlOn, storeKinds } from '../helpers/stores.js';
import { eventOfCall, type Receiver, startReceiver } from '../webhooks/harness.js';

/**
 * Secrets at rest (issue 12, defect 7): webhook secrets and the recording-link key are sealed
 * in the database like trunk passwords, on both stores; an old database holding them in plain
 * text is sealed at start-up; links and signatures made before a restart or an upgrade still verify.
 */

const cleanups: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** Services on one set of data (a data directory, and a PostgreSQL schema for that kind). */
function serviceData(
  kind: StoreKind,
  secretKeyBase64: string | null = Buffer.alloc(32, 3).toString('base64'),
) {
  const dataDir = mkdtempSync(join(tmpdir(), 'callwright-secrets-'));
  const schema = newTestSchema();
  cleanups.push(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    if (kind === 'postgres') await dropTestSchema(schema);
  });
  const start = (env: Record<string, string> = {}) => {
    const settings: Record<string, string> = { CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true' };
    if (kind === 'postgres') {
      settings.DATABASE_URL = testPostgresUrl();
      settings.CALLWRIGHT_DATABASE_SCHEMA = schema;
      if (secretKeyBase64) settings.CALLWRIGHT_SECRET_KEY = secretKeyBase64;
    }
    return startService(
      loopbackServiceConfig(dataDir, { ...settings, ...env }),
      createLogger('info', new LogCapture()),
      { webhookDelivery: { retryDelay: (attempts) => (attempts >= 20 ? null : 50) } },
    );
  };
  return { dataDir, schema, start };
}

async function receiver(): Promise<Receiver> {
  const started = await startReceiver(() => ({ status: 200 }));
  cleanups.push(() => started.close());
  return started;
}

/** Places a call to a persona and waits for its delivered event; returns the request received. */
async function callAndReceive(
  service: RunningService,
  fixture: Awaited<ReturnType<typeof callFixture>>,
  to: string,
  hook: Receiver,
) {
  const created = await postCall(service.url, fixture.key, {
    agent_id: fixture.agentId,
    from_number: fixture.from,
    to_number: to,
  });
  expect(created.status).toBe(200);
  const callId = (created.body as { call_id: string }).call_id;
  const event = await eventOfCall(service, fixture.accountId, callId, 'delivered', 30_000);
  const request = hook.requests.find((received) => received.headers['webhook-id'] === event.id);
  if (!request) throw new Error(`no request for ${event.id}`);
  return { callId, event, request };
}

/** The path and signed query of an event's recording link (the service's port changes on restart). */
function recordingLinkOf(eventBody: string): string {
  const link = new URL(JSON.parse(eventBody).data.recording_url as string);
  return `${link.pathname}${link.search}`;
}

async function rawEndpointRow(service: RunningService, accountId: string) {
  const [row] = (await sqlOn(
    service.store,
    'SELECT secret, previous_secret FROM webhook_endpoints WHERE account_id = ?',
    [accountId],
  )) as { secret: string; previous_secret: string | null }[];
  return row;
}

async function rawServiceSecret(service: RunningService, name: string): Promise<string | undefined> {
  const [row] = (await sqlOn(service.store, 'SELECT value FROM service_secrets WHERE name = ?', [name])) as {
    value: string;
  }[];
  return row?.value;
}

/** Every byte SQLite keeps on disk for this data directory (the file and its write-ahead log). */
function sqliteBytes(dataDir: string): Buffer {
  const files = ['callwright.db', 'callwright.db-wal'].map((name) => join(dataDir, name));
  return Buffer.concat(files.filter((path) => existsSync(path)).map((path) => readFileSync(path)));
}

describe.each(storeKinds)('secrets at rest (%s)', { timeout: 90_000 }, (kind) => {
  it('webhook secrets and the recording-link key are sealed; links and signatures verify after a restart', async () => {
    const data = serviceData(kind);
    const hook = await receiver();
    let service = await data.start();
    const fixture = await callFixture(service);
    const first = (
      await setWebhookEndpoint(service.store, service.secretBox, fixture.accountId, hook.url, {
        allowPrivate: true,
      })
    ).secret;
    const current = (await rotateWebhookSecret(service.store, service.secretBox, fixture.accountId)).secret;

    // The database holds neither secret, nor the link key, in plain text.
    const row = await rawEndpointRow(service, fixture.accountId);
    expect(row?.secret).toMatch(/^v1\./);
    expect(row?.previous_secret).toMatch(/^v1\./);
    for (const value of [row?.secret, row?.previous_secret]) {
      expect(value).not.toContain(first.slice(6));
      expect(value).not.toContain(current.slice(6));
    }
    expect(await rawServiceSecret(service, recordingLinkKeyName)).toMatch(/^v1\./);
    if (kind === 'sqlite') {
      const bytes = sqliteBytes(data.dataDir);
      expect(bytes.includes(first)).toBe(false);
      expect(bytes.includes(current)).toBe(false);
    }

    const before = await callAndReceive(service, fixture, '+15550100006', hook);
    const headers = before.request.headers as Record<string, string>;
    expect(verifyWebhook(current, headers, before.request.body)).toMatchObject({ type: 'call.completed' });
    expect(verifyWebhook(first, headers, before.request.body)).toMatchObject({ type: 'call.completed' });
    const link = recordingLinkOf(before.event.body);

    await service.close();
    service = await data.start();
    try {
      const recording = await fetch(`${service.url}${link}`);
      expect(recording.status).toBe(200);
      expect(Buffer.from(await recording.arrayBuffer()).toString('ascii', 0, 4)).toBe('RIFF');
      const after = await callAndReceive(service, fixture, '+15550100005', hook);
      expect(
        verifyWebhook(current, after.request.headers as Record<string, string>, after.request.body),
      ).toMatchObject({ type: 'call.completed' });
    } finally {
      await service.close();
    }
  });

  it('an old database with plain-text secrets is sealed at start-up, and what it signed still verifies', async () => {
    const data = serviceData(kind);
    const hook = await receiver();
    let service = await data.start();
    const fixture = await callFixture(service);
    await setWebhookEndpoint(service.store, service.secretBox, fixture.accountId, hook.url, {
      allowPrivate: true,
    });
    // What an earlier version wrote: both secrets and the link key in plain text.
    const legacySecret = generateWebhookSecret();
    const legacyPrevious = generateWebhookSecret();
    const legacyLinkKey = randomBytes(32).toString('base64');
    await sqlOn(
      service.store,
      'UPDATE webhook_endpoints SET secret = ?, previous_secret = ?, previous_secret_expires_at = ? WHERE account_id = ?',
      [legacySecret, legacyPrevious, new Date(Date.now() + 3_600_000).toISOString(), fixture.accountId],
    );
    await sqlOn(service.store, 'UPDATE service_secrets SET value = ? WHERE name = ?', [
      legacyLinkKey,
      recordingLinkKeyName,
    ]);
    await service.close();

    service = await data.start();
    try {
      const row = await rawEndpointRow(service, fixture.accountId);
      expect(row?.secret).toMatch(/^v1\./);
      expect(row?.previous_secret).toMatch(/^v1\./);
      const linkKey = await rawServiceSecret(service, recordingLinkKeyName);
      expect(linkKey).toMatch(/^v1\./);
      expect(linkKey).not.toContain(legacyLinkKey);
      if (kind === 'sqlite') {
        const bytes = sqliteBytes(data.dataDir);
        for (const legacy of [legacySecret, legacyPrevious, legacyLinkKey]) {
          expect(bytes.includes(legacy)).toBe(false);
        }
      }
      // A link signed with the old key before the upgrade still opens the recording.
      const received = await callAndReceive(service, fixture, '+15550100006', hook);
      const headers = received.request.headers as Record<string, string>;
      expect(verifyWebhook(legacySecret, headers, received.request.body)).toBeTruthy();
      expect(verifyWebhook(legacyPrevious, headers, received.request.body)).toBeTruthy();
      const call = await service.store.calls.getById(received.callId);
      const oldLink = createRecordingLinks({ publicUrl: service.url, keyBase64: legacyLinkKey }).urlFor({
        id: received.callId,
        recordingPath: call?.recordingPath ?? null,
      });
      expect((await fetch(oldLink ?? '')).status).toBe(200);
    } finally {
      await service.close();
    }
    if (kind === 'sqlite') {
      // Nothing is left to seal: a plain SQLite open sees only sealed values.
      const db = new Database(join(data.dataDir, 'callwright.db'), { readonly: true });
      const values = db.prepare('SELECT secret, previous_secret FROM webhook_endpoints').all();
      db.close();
      expect(JSON.stringify(values)).not.toContain('whsec_');
    }
  });
});

describe('secrets at rest with PostgreSQL: every process shares one key', { timeout: 90_000 }, () => {
  it('start-up fails with a clear message without CALLWRIGHT_SECRET_KEY, or with another key', async () => {
    const data = serviceData('postgres');
    const service = await data.start();
    await service.close();
    const missing = serviceData('postgres', null);
    await expect(missing.start()).rejects.toThrow(/CALLWRIGHT_SECRET_KEY.*required/);
    await expect(
      data.start({ CALLWRIGHT_SECRET_KEY: Buffer.alloc(32, 4).toString('base64') }),
    ).rejects.toThrow(/CALLWRIGHT_SECRET_KEY/);
  });
});
