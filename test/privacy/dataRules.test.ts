import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { RetentionSweeper } from '../../src/privacy/dataRules.js';
import {
  FileRecordingStorage,
  PostgresRecordingStorage,
  type RecordingStorage,
} from '../../src/recordings/recordingStorage.js';
import { PostgresStore } from '../../src/store/postgres/postgresStore.js';
import { callFixture, startFullService, waitForTerminal } from '../helpers/fullService.js';
import { jsonApi } from '../helpers/http.js';
import { dropTestSchema, newTestSchema, storeEnv } from '../helpers/postgres.js';

/**
 * The data rules on each store, with real calls on the sandbox: erasing one number removes its
 * calls, recordings, events and campaign contacts (and nothing of other numbers) and leaves an
 * audit entry with the number masked; a retention rule clears transcripts and recordings of old
 * calls and keeps the call records.
 */

describe.each(['sqlite', 'postgres'] as const)('data rules on %s', (storeKind) => {
  let service: Awaited<ReturnType<typeof startFullService>>;
  let fixture: Awaited<ReturnType<typeof callFixture>>;
  let recordings: RecordingStorage;
  const schema = newTestSchema();

  beforeAll(async () => {
    service = await startFullService(storeEnv(storeKind, schema));
    fixture = await callFixture(service, { maxDurationS: 3 });
    recordings =
      service.store instanceof PostgresStore
        ? new PostgresRecordingStorage(service.store.pool)
        : new FileRecordingStorage(join(service.dataDir, 'recordings'));
  });

  afterAll(async () => {
    await service?.dispose();
    if (storeKind === 'postgres') await dropTestSchema(schema);
  });

  const api = jsonApi(
    () => service.url,
    () => fixture.key,
  );
  const place = async (to: string) => {
    const { body } = await api('/calls/outbound', {
      method: 'POST',
      body: { agent_id: fixture.agentId, from_number: fixture.from, to_number: to },
    });
    return (body as { call_id: string }).call_id;
  };

  it('erases one number everywhere, refuses while it is on a call, and audits it masked', async () => {
    const erased = '+155501000060007';
    const ids = [await place(erased), await place('+155501000020007')];
    const other = await place('+155501000060008');
    const calls = await Promise.all([...ids, other].map((id) => waitForTerminal(service, id)));
    const recorded = calls[0]?.recordingPath;
    expect(recorded).toBeTruthy();
    expect(await recordings.open(recorded as string)).not.toBeNull();
    // The second call went to another number; make it this one's by a contact in a campaign.
    const campaign = await api('/campaigns', {
      method: 'POST',
      body: {
        agent_id: fixture.agentId,
        from_number: fixture.from,
        calling_window: { start: '09:00', end: '17:00' },
        time_zone: 'UTC',
        starts_at: new Date(Date.now() + 86_400_000).toISOString(),
        contacts: [{ to_number: erased }, { to_number: '+155501000060008' }],
      },
    });
    const campaignId = (campaign.body as { campaign_id: string }).campaign_id;

    const ringing = await place('+155501000030007');
    expect((await api('/erasures', { method: 'POST', body: { number: '+155501000030007' } })).status).toBe(
      409,
    );
    await waitForTerminal(service, ringing);

    const result = await api('/erasures', { method: 'POST', body: { number: erased } });
    expect(result.body).toMatchObject({ calls_erased: 1, recordings_erased: 1, campaign_contacts_erased: 1 });
    expect((await api(`/calls/${ids[0]}`)).status).toBe(404);
    expect(await recordings.open(recorded as string)).toBeNull();
    if (!(service.store instanceof PostgresStore)) expect(existsSync(recorded as string)).toBe(false);
    expect(
      (await service.store.events.list(fixture.accountId, { limit: 100 })).map((event) => event.callId),
    ).not.toContain(ids[0]);
    // Other numbers keep everything.
    expect((await api(`/calls/${other}`)).status).toBe(200);
    expect((await api(`/calls/${ids[1]}`)).status).toBe(200);
    const contacts = (await api(`/campaigns/${campaignId}/contacts`)).body as {
      data: { to_number: string }[];
    };
    expect(contacts.data.map((contact) => contact.to_number)).toEqual(['+155501000060008']);

    const audit = (await api('/audit-log')).body as { data: Record<string, unknown>[] };
    expect(audit.data[0]).toMatchObject({
      action: 'erase_number',
      actor: expect.stringMatching(/^api_key:key_/),
      subject: '+1555*********07',
      detail: { calls: 1, recordings: 1, campaign_contacts: 1 },
    });
    expect(JSON.stringify(audit.data)).not.toContain(erased);
    expect((await api('/erasures', { method: 'POST', body: { number: '555-0100' } })).status).toBe(422);
  }, 60_000);

  it('clears transcripts and recordings after the retention period, keeping the call record', async () => {
    expect((await api('/retention')).body).toEqual({ retention_days: null });
    expect((await api('/retention', { method: 'PUT', body: { retention_days: 0 } })).status).toBe(400);
    expect((await api('/retention', { method: 'PUT', body: { retention_days: 30 } })).body).toEqual({
      retention_days: 30,
    });
    const callId = await place('+155501000060009');
    const call = await waitForTerminal(service, callId);
    expect(call.recordingPath).toBeTruthy();
    const sweeper = new RetentionSweeper({
      store: service.store,
      recordings,
      logger: createLogger('silent'),
    });
    expect(await sweeper.sweep(Date.now() + 29 * 86_400_000)).toBe(0);
    expect(await sweeper.sweep(Date.now() + 31 * 86_400_000)).toBeGreaterThanOrEqual(1);
    const after = await service.store.calls.getById(callId);
    expect(after).toMatchObject({ status: call.status, recordingPath: null, transcript: [] });
    expect(await recordings.open(call.recordingPath as string)).toBeNull();
    const events = await service.store.events.list(fixture.accountId, { limit: 100 });
    const event = events.find((entry) => entry.callId === callId);
    expect(JSON.parse(event?.body ?? '{}').data).toMatchObject({ transcript: [], recording_url: null });
    // A second pass finds nothing left to clear.
    expect(await sweeper.sweep(Date.now() + 31 * 86_400_000)).toBe(0);
    await api('/retention', { method: 'PUT', body: { retention_days: null } });
  }, 60_000);
});
