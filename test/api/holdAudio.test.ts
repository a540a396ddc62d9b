import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeWav } from '../../src/voice/providers/audio/wav.js';
import { request } from '../helpers/http.js';
import {
  type AccountFixture,
  createAccountFixture,
  startTestService,
  type TestService,
} from '../helpers/service.js';
import { storeKinds } from '../helpers/stores.js';

/**
 * `PUT /v1/agents/{id}/hold_audio` (issue 35): the WAV is checked at the edge — format, channels,
 * rate, duration and size — converted to 8 kHz G.711 µ-law and stored in the database, per agent
 * of the caller's account; `DELETE` forgets it.
 */

/** A 16-bit PCM WAV of `ms` of a 1 kHz tone, with `channels` interleaved channels. */
function wav(ms: number, rateHz: number, channels = 1, bitsPerSample = 16): Buffer {
  const frames = Math.round((rateHz * ms) / 1000);
  const mono = new Int16Array(frames).map((_, index) =>
    Math.round(8000 * Math.sin((2 * Math.PI * 1000 * index) / rateHz)),
  );
  if (channels === 1 && bitsPerSample === 16) return Buffer.from(encodeWav(mono, rateHz));
  const interleaved = new Int16Array(frames * channels);
  for (let index = 0; index < frames; index++)
    for (let channel = 0; channel < channels; channel++)
      interleaved[index * channels + channel] = mono[index]!;
  const bytes = Buffer.from(encodeWav(interleaved, rateHz));
  bytes.writeUInt16LE(channels, 22);
  bytes.writeUInt32LE(rateHz * channels * 2, 28);
  bytes.writeUInt16LE(channels * 2, 32);
  bytes.writeUInt16LE(bitsPerSample, 34);
  return bytes;
}

describe.each(storeKinds)('hold audio uploads on the %s store', (kind) => {
  let service: TestService;
  let fixture: AccountFixture;
  let other: AccountFixture;

  beforeAll(async () => {
    service = await startTestService({ store: kind });
    fixture = await createAccountFixture(service.store);
    other = await createAccountFixture(service.store, { name: 'Other', number: '+15550008888' });
  }, 60_000);

  afterAll(async () => {
    await service?.close();
  });

  const put = (agentId: string, body: Buffer, key = fixture.key, contentType = 'audio/wav') =>
    request(`${service.url}/v1/agents/${agentId}/hold_audio`, {
      method: 'PUT',
      headers: { 'X-API-Key': key, 'Content-Type': contentType },
      body,
    });

  it('stores a stereo 16 kHz WAV as 8 kHz mu-law, replaces it, and forgets it', async () => {
    const first = await put(fixture.agentId, wav(2_000, 16_000, 2));
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({ agent_id: fixture.agentId, duration_ms: 2_000 });
    expect((await service.store.holdAudio.get(fixture.accountId, fixture.agentId))?.mulaw.length).toBe(
      16_000,
    );
    expect((await put(fixture.agentId, wav(1_000, 8_000))).body).toEqual({
      agent_id: fixture.agentId,
      duration_ms: 1_000,
    });
    expect((await service.store.holdAudio.get(fixture.accountId, fixture.agentId))?.mulaw.length).toBe(8_000);
    const deleted = await request(`${service.url}/v1/agents/${fixture.agentId}/hold_audio`, {
      method: 'DELETE',
      headers: { 'X-API-Key': fixture.key },
    });
    expect(deleted.status).toBe(200);
    expect(await service.store.holdAudio.get(fixture.accountId, fixture.agentId)).toBeNull();
    const again = await request(`${service.url}/v1/agents/${fixture.agentId}/hold_audio`, {
      method: 'DELETE',
      headers: { 'X-API-Key': fixture.key },
    });
    expect(again.status).toBe(404);
  });

  it.each([
    ['not a WAV', Buffer.from('ID3 not a wav at all'), /must be a 16-bit PCM WAV/],
    ['24-bit samples', wav(1_000, 8_000, 1, 24), /must be a 16-bit PCM WAV/],
    ['three channels', wav(1_000, 8_000, 3), /mono or stereo/],
    ['too short', wav(300, 8_000), /must last 0.5 to 30 s/],
    ['too long', wav(31_000, 8_000), /must last 0.5 to 30 s \(this one: 31.0 s\)/],
    ['a 4 kHz rate', wav(1_000, 4_000), /sampled at 8000–48000 Hz/],
    ['over 2 MiB', wav(25_000, 48_000), /request body must be at most 2 MiB/],
  ])('refuses %s with a 400 saying why', async (_name, body, message) => {
    const refused = await put(fixture.agentId, body);
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(message);
  });

  it('refuses another Content-Type, and another account’s agent', async () => {
    const json = await put(fixture.agentId, wav(1_000, 8_000), fixture.key, 'application/json');
    expect(json.status).toBe(400);
    expect(json.text).toMatch(/Content-Type must be audio\/wav/);
    expect((await put(fixture.agentId, wav(1_000, 8_000), other.key)).status).toBe(404);
    expect(await service.store.holdAudio.get(other.accountId, fixture.agentId)).toBeNull();
  });
});
