import { createSocket, type Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPhoneNumber, removePhoneNumber } from '../../src/admin/numbers.js';
import { addTrunk } from '../../src/admin/trunks.js';
import { loadSecretBox } from '../../src/secrets/secretBox.js';
import {
  appointmentTestAccount,
  exampleScenario,
  testFromNumber,
  testRunner,
} from '../helpers/agentTests.js';
import { startFullService } from '../helpers/fullService.js';
import { jsonApi } from '../helpers/http.js';

/**
 * Issue 34, finding 7: an agent-test call's route was read when it was dialled, so re-routing the
 * run's caller ID to a trunk while 100 test calls were queued sent 114 INVITEs out on the trunk.
 * A test call now goes to the sandbox carrier whatever its caller ID is routed to by then. The
 * "trunk" here is a UDP socket on loopback that counts what reaches it.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
let trunkSocket: Socket;
const reachedTrunk: Buffer[] = [];
let key = '';
let agentId = '';
let accountId = '';

beforeAll(async () => {
  service = await startFullService({ CALLWRIGHT_TRUNK_ALLOW_PRIVATE: 'true' });
  ({ key, agentId, accountId } = await appointmentTestAccount(service, { name: 'route', maxLiveCalls: 1 }));
  trunkSocket = createSocket('udp4');
  trunkSocket.on('message', (datagram) => reachedTrunk.push(datagram));
  await new Promise<void>((ready) => trunkSocket.bind(0, '127.0.0.1', ready));
  const secretBox = loadSecretBox({ configuredKeyBase64: null, dataDir: service.dataDir });
  await addTrunk(
    service.store,
    secretBox,
    accountId,
    { name: 'carrier', uri: `sip:127.0.0.1:${trunkSocket.address().port}` },
    { allowPrivate: true },
  );
}, 60_000);

afterAll(async () => {
  trunkSocket?.close();
  await service?.dispose();
});

describe('agent-test calls', () => {
  it('stay on the sandbox when the caller ID is re-routed to a trunk while they are queued', async () => {
    const api = jsonApi(
      () => service.url,
      () => key,
    );
    const busy = exampleScenario('busy.json');
    const runToEnd = testRunner(async (path, init) => {
      const answer = await api(path, init);
      // The moment the run is accepted, with its calls queued one at a time (live-call cap 1),
      // the run's caller ID is moved to the trunk.
      if (init?.method === 'POST' && answer.status === 201) {
        await removePhoneNumber(service.store, accountId, testFromNumber);
        await addPhoneNumber(service.store, accountId, testFromNumber, 'carrier');
      }
      return answer;
    });
    const report = await runToEnd(agentId, { scenarios: [busy], repeat: 6 }, 120_000);
    expect(reachedTrunk).toHaveLength(0);
    expect(report.status).toBe('completed');
    expect(report.summary).toMatchObject({ total: 6, passed: 6, failed: 0 });
    for (const result of report.results) expect(result.call_status).toBe('busy');
  }, 150_000);
});
