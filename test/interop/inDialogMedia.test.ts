import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callThroughTrunk, startFullService } from '../helpers/fullService.js';
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

    const call = await callThroughTrunk(service, { uri: `sip:127.0.0.1:${sipPort}` }, { timeoutMs: 22_000 });
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
