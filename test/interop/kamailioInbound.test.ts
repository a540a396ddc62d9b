import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { addTrunk } from '../../src/admin/trunks.js';
import type { CallRecord } from '../../src/domain/records.js';
import { loadSecretBox } from '../../src/secrets/secretBox.js';
import { resample } from '../../src/voice/providers/audio/resampler.js';
import { decodeWav } from '../../src/voice/providers/audio/wav.js';
import { type RunningBaresip, startBaresipCaller } from '../helpers/baresip.js';
import { startFullService } from '../helpers/fullService.js';
import { type RunningKamailio, startKamailio } from '../helpers/kamailio.js';
import { agentChannel, calleeChannel, loudFrames } from '../helpers/recordings.js';
import { freeUdpPort } from '../sipp/harness.js';

/**
 * Issue 40's interop: the service registers its number at kamailio (the carrier's registrar, digest),
 * baresip registers there too (its own digest user) and calls that number through kamailio, and
 * the number's inbound agent answers and talks with it; the recording holds both sides and the
 * call completes as an inbound call.
 */

const number = '+15550009999';
const password = 'registrar-secret-40';
const directory = mkdtempSync(join(tmpdir(), 'callwright-inbound-interop-'));
let service: Awaited<ReturnType<typeof startFullService>>;
let kamailio: RunningKamailio;
let baresip: RunningBaresip | null = null;

/** Silence, `text` in espeak-ng's voice, silence: baresip hangs up when its file ends. */
function callerAudio(text: string): Int16Array {
  const wide = join(directory, 'wide.wav');
  execFileSync('espeak-ng', ['-v', 'en-us', '-s', '165', '-w', wide, text]);
  const pcm = decodeWav(new Uint8Array(readFileSync(wide)));
  const speech = resample(pcm.samples, pcm.sampleRateHz, 8000);
  const out = new Int16Array(8000 * 3 + speech.length + 8000 * 4);
  out.set(speech, 8000 * 3);
  return out;
}

beforeAll(async () => {
  [service, kamailio] = await Promise.all([
    startFullService({ CALLWRIGHT_TRUNK_ALLOW_PRIVATE: 'true' }, { registrationSyncMs: 200 }),
    startKamailio({
      calleePort: await freeUdpPort(),
      username: number,
      password,
      lifetimeMs: 90_000,
      routeToRegistered: true,
      registeringUsers: { alice: 'alice-secret-40' },
    }),
  ]);
}, 60_000);

afterAll(async () => {
  await baresip?.stop();
  await kamailio?.stop();
  await service?.dispose();
  rmSync(directory, { recursive: true, force: true });
});

describe('an inbound call through kamailio', () => {
  it('baresip calls the registered number and holds a conversation with the inbound agent', async () => {
    const account = await service.store.accounts.create({ name: 'inbound interop' });
    const secretBox = loadSecretBox({ configuredKeyBase64: null, dataDir: service.dataDir });
    await addTrunk(
      service.store,
      secretBox,
      account.id,
      { name: 'carrier', uri: `sip:127.0.0.1:${kamailio.port}`, username: number, password, register: true },
      { allowPrivate: true },
    );
    await addPhoneNumber(service.store, account.id, number, 'carrier');
    const agent = await createAgent(service.store, account.id, {
      name: 'Front desk',
      prompt: 'You answer the phone.',
      firstMessage: 'Hello, thanks for calling the front desk.',
      maxDurationS: 30,
    });
    await service.store.inboundCalls.setNumberInbound(account.id, number, {
      inboundAgentId: agent.id,
      inboundFallback: 'refuse',
      maxLiveCalls: null,
    });
    const registeredBy = Date.now() + 15_000;
    while (!kamailio.registrations().some((entry) => entry.expires > 0) && Date.now() < registeredBy) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(kamailio.registrations().length).toBeGreaterThan(0);
    await service.calls?.inbound.syncRules();

    baresip = await startBaresipCaller({
      sipPort: await freeUdpPort(),
      user: 'alice',
      target: `sip:${number}@127.0.0.1:${kamailio.port}`,
      say: callerAudio('hello I am calling about my appointment'),
      lifetimeMs: 40_000,
      register: { registrar: `127.0.0.1:${kamailio.port}`, password: 'alice-secret-40' },
    });
    let call: CallRecord | undefined;
    const deadline = Date.now() + 40_000;
    while (!call || !['completed', 'failed', 'canceled'].includes(call.status)) {
      if (Date.now() > deadline)
        throw new Error(
          `no ended inbound call (${call?.status})\n${baresip.output()}\n${kamailio.log().slice(-3_000)}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 200));
      [call] = await service.store.inboundCalls.list(account.id, { direction: 'inbound', limit: 1 });
    }
    expect(call, baresip.output()).toMatchObject({
      direction: 'inbound',
      status: 'completed',
      agentId: agent.id,
      toNumber: number,
    });
    expect(call.transcript.some((line) => line.role === 'agent')).toBe(true);
    const wav = readFileSync(call.recordingPath as string);
    // Both sides are in the recording: baresip's speech on the caller's channel, the agent's on its own.
    expect(loudFrames(calleeChannel(wav))).toBeGreaterThan(25);
    expect(loudFrames(agentChannel(wav))).toBeGreaterThan(25);
    // And baresip heard the agent.
    expect(loudFrames(baresip.heard())).toBeGreaterThan(25);
    // baresip was a phone registered to kamailio (digest), as the issue asks, not only a SIP client.
    // (baresip puts its expiry in the Contact, not an Expires header: the log line is the proof.)
    expect(kamailio.log()).toMatch(/REGISTERED sip:alice@127\.0\.0\.1:\d+ udp/);
  }, 90_000);
});
