import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../../src/admin/apiKeys.js';
import { loadConfig } from '../../src/config.js';
import { newId } from '../../src/domain/ids.js';
import { openSqliteStore } from '../../src/openStore.js';
import { setupProgress, startupBanner } from '../../src/startupBanner.js';
import type { Store } from '../../src/store/types.js';
import { createAccountFixture } from '../helpers/service.js';

/**
 * Issue 38, item 8: the start-up banner names only the first steps the store does not show done
 * (an API key, a dashboard user, an agent, a caller ID, a call), read from a real SQLite store.
 */

const dataDir = mkdtempSync(join(tmpdir(), 'callwright-banner-'));
let store: Store;

beforeAll(() => {
  store = openSqliteStore(join(dataDir, 'callwright.db'));
});

afterAll(async () => {
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function banner(): Promise<string> {
  return startupBanner({
    config: loadConfig({ CALLWRIGHT_DATA_DIR: dataDir }),
    role: 'all',
    sipAddress: '127.0.0.1:5060',
    progress: await setupProgress(store),
  });
}

const steps = {
  key: 'keys create --name first-key',
  user: 'users setup-token',
  agent: 'agents create',
  number: 'numbers add',
  call: 'then follow "Place a call"',
};

describe('the start-up banner (issue 38, item 8)', () => {
  it('names every first step on an empty store, and each no more once the store shows it done', async () => {
    const fresh = await banner();
    for (const step of Object.values(steps)) expect(fresh).toContain(step);
    expect(fresh).toContain('Ctrl-C here stops the service.');

    // A key, an agent and a caller ID (the fixture makes the three), but no user and no call yet.
    const fixture = await createAccountFixture(store, { name: 'banner' });
    const partly = await banner();
    for (const step of [steps.key, steps.agent, steps.number]) expect(partly).not.toContain(step);
    expect(partly).toContain(steps.user);
    expect(partly).toContain(steps.call);

    // A revoked key is no key: the step comes back.
    await revokeApiKey(store, fixture.accountId, fixture.keyId);
    expect(await banner()).toContain(steps.key);

    await store.users.create({ accountId: fixture.accountId, email: 'owner@example.com', passwordHash: 'h' });
    const { record } = await createApiKey(store, fixture.accountId, 'again');
    await store.calls.createQueued({
      id: newId('call'),
      accountId: fixture.accountId,
      agentId: fixture.agentId,
      apiKeyId: record.id,
      fromNumber: fixture.number,
      toNumber: '+15550100001',
      firstMessage: null,
      context: null,
      variables: null,
      createdAt: new Date().toISOString(),
    });
    const done = await banner();
    for (const step of Object.values(steps)) expect(done).not.toContain(step);
    expect(done).not.toContain('Next, in another terminal');
    expect(done).toMatch(/^Set up: .*calls list/m);
    expect(done).toContain('Ctrl-C here stops the service.');
    for (const line of done.split('\n')) expect(line.length).toBeLessThanOrEqual(120);
  });
});
