import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addTrunk, describeTrunk, removeTrunk } from '../../src/admin/trunks.js';
import { loadSecretBox } from '../../src/secrets/secretBox.js';
import { startFullService } from '../helpers/fullService.js';
import { type RunningKamailio, startKamailio } from '../helpers/kamailio.js';
import { freeUdpPort } from '../sipp/harness.js';

/**
 * Trunks that register: the service keeps a registration at kamailio's registrar (digest, over
 * TCP here), reports its state on the trunk, reports a refused password, and removes the
 * registration (Expires: 0) when the trunk goes.
 */

const username = 'acme';
const password = 'registrar-secret-1';
let service: Awaited<ReturnType<typeof startFullService>>;
let kamailio: RunningKamailio;

beforeAll(async () => {
  [service, kamailio] = await Promise.all([
    startFullService({ CALLWRIGHT_TRUNK_ALLOW_PRIVATE: 'true' }, { registrationSyncMs: 200 }),
    startKamailio({ calleePort: await freeUdpPort(), username, password, lifetimeMs: 90_000 }),
  ]);
}, 60_000);

afterAll(async () => {
  await kamailio?.stop();
  await service?.dispose();
});

async function registrationOf(accountId: string, name: string, wanted: string) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const trunk = await service.store.trunks.get(accountId, name);
    const shown = trunk ? describeTrunk(trunk) : null;
    if (shown?.registration?.state === wanted || Date.now() > deadline) return shown?.registration ?? null;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('trunk registration at kamailio', () => {
  it('registers with digest over TCP, shows the state, reports a wrong password, and unregisters on removal', async () => {
    const account = await service.store.accounts.create({ name: 'registering' });
    const secretBox = loadSecretBox({ configuredKeyBase64: null, dataDir: service.dataDir });
    const uri = `sip:127.0.0.1:${kamailio.port};transport=tcp`;
    await addTrunk(
      service.store,
      secretBox,
      account.id,
      { name: 'pbx', uri, username, password, register: true },
      {
        allowPrivate: true,
      },
    );
    await addTrunk(
      service.store,
      secretBox,
      account.id,
      { name: 'wrong', uri, username, password: 'not-the-password', register: true },
      { allowPrivate: true },
    );
    expect(await registrationOf(account.id, 'pbx', 'registered')).toMatchObject({
      state: 'registered',
      expiresS: 600,
    });
    expect(kamailio.registrations()).toContainEqual({
      aor: `sip:${username}@127.0.0.1`,
      transport: 'tcp',
      expires: 3600,
    });
    expect(await registrationOf(account.id, 'wrong', 'failed')).toMatchObject({
      state: 'failed',
      status: 401,
    });

    await removeTrunk(service.store, account.id, 'pbx');
    const deadline = Date.now() + 5_000;
    while (!kamailio.registrations().some((entry) => entry.expires === 0) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(kamailio.registrations().filter((entry) => entry.expires === 0)).toHaveLength(1);
  }, 40_000);
});
