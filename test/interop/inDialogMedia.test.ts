import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { addTrunk } from '../../src/admin/trunks.js';
import { loadSecretBox } from '../../src/secrets/secretBox.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';
import { freeUdpPort, startSippCallee } from '../sipp/harness.js';

/**
 * A real far end (SIPp, over a trunk) renegotiating a live agent call: it holds the call, resumes
 * it on another media port, refreshes the session by UPDATE with a session timer, and sends a
 * Require we lack. SIPp's own checks fail the scenario unless each answer says what RFC 3264 and
 * RFC 4028 ask; the service's log says what the media did.
 */

let service: Awaited<ReturnType<typeof startFullService>>;

beforeAll(async () => {
  service = await startFullService({ CALLWRIGHT_TRUNK_ALLOW_PRIVATE: 'true' });
}, 60_000);

afterAll(async () => {
  await service?.dispose();
});

describe('a far end renegotiating a live call', () => {
  it('hold is answered recvonly, resume sendrecv on the moved port, UPDATE refresh echoed, unknown Require 420', async () => {
    const sipPort = await freeUdpPort();
    const scenario = new URL('uas_hold_move_refresh.xml', import.meta.url).pathname;
    const { mediaPort, exited } = await startSippCallee(scenario, sipPort);

    const account = await service.store.accounts.create({ name: 'renegotiation' });
    const secretBox = loadSecretBox({ configuredKeyBase64: null, dataDir: service.dataDir });
    await addTrunk(
      service.store,
      secretBox,
      account.id,
      { name: 'sipp', uri: `sip:127.0.0.1:${sipPort}` },
      {
        allowPrivate: true,
      },
    );
    await addPhoneNumber(service.store, account.id, '+15550007777', 'sipp');
    const { key } = await createApiKey(service.store, account.id, 'interop');
    const agent = await createAgent(service.store, account.id, {
      name: 'Renegotiation',
      prompt: 'You check a line.',
      firstMessage: 'Hello, this is a line check.',
      maxDurationS: 20,
    });
    const placed = await postCall(service.url, key, {
      agent_id: agent.id,
      from_number: '+15550007777',
      to_number: '+14155550123',
    });
    expect(placed.status).toBe(200);
    const call = await waitForTerminal(service, (placed.body as { call_id: string }).call_id, 22_000);
    const sipp = await exited;
    expect(sipp.code, sipp.output).toBe(0);
    expect(call).toMatchObject({ status: 'completed', endReason: 'callee_hangup' });
    const renegotiated = service.logs.lines
      .map((line) => JSON.parse(line) as { msg?: string; direction?: string; port?: number; callId?: string })
      .filter((entry) => entry.msg === 'media renegotiated by the far end');
    expect(renegotiated.map((entry) => [entry.direction, entry.port])).toEqual([
      ['sendonly', mediaPort],
      ['sendrecv', 40444],
    ]);
  }, 40_000);
});
