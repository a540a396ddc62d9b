import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAiServer } from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { checkVendorKey } from '../../src/voice/vendorCheck.js';
import { startFakeCartesia } from '../fakes/cartesiaServer.js';
import { startFakeElevenLabs } from '../fakes/elevenLabsStreamInputServer.js';

/**
 * The credential "test" verb against each vendor's fake: the documented cheap read with the key
 * in the vendor's own header, success or the vendor's error (never the key), a vendor that hangs,
 * and a private address refused unless the operator allows it.
 */

const fakes: { close(): Promise<void> }[] = [];
const allowed = { allowPrivate: true, allowPrivateSetting: 'CALLWRIGHT_PROVIDER_ALLOW_PRIVATE' };
let urls: Record<string, string>;

beforeAll(async () => {
  const [elevenLabs, cartesia, openAi] = await Promise.all([
    startFakeElevenLabs({ apiKey: 'xi-good-key-01', voiceIds: ['v1'] }),
    startFakeCartesia({ apiKey: 'sk_car_good_01', voiceIds: ['v1'] }),
    startFakeOpenAiServer({ apiKey: 'sk-good-key-01' }),
  ]);
  fakes.push(elevenLabs, cartesia, openAi);
  urls = { elevenlabs: elevenLabs.baseUrl, cartesia: cartesia.baseUrl, openai: openAi.baseUrl };
});

afterAll(async () => {
  await Promise.all(fakes.map((fake) => fake.close()));
});

describe('checkVendorKey', () => {
  it.each([
    ['elevenlabs', 'xi-good-key-01', /Invalid API key/],
    ['cartesia', 'sk_car_good_01', /Invalid API key/],
    ['openai', 'sk-good-key-01', /Incorrect API key provided/],
  ])(
    '%s: accepts the right key and reports the vendor error for a wrong one',
    async (provider, key, error) => {
      const good = await checkVendorKey(
        provider,
        { apiKey: key, baseUrl: urls[provider] as string },
        allowed,
      );
      expect(good).toMatchObject({ ok: true, status: 200 });
      const wrongKey = `${key}-wrong`;
      const bad = await checkVendorKey(
        provider,
        { apiKey: wrongKey, baseUrl: urls[provider] as string },
        allowed,
      );
      expect(bad).toMatchObject({ ok: false, status: 401 });
      expect(bad.message).toMatch(error);
      expect(bad.message).not.toContain(wrongKey);
    },
  );

  it('gives up on a vendor that does not answer, and refuses a private address unless allowed', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`;
      const hung = await checkVendorKey(
        'openai',
        { apiKey: 'sk-anything-1', baseUrl },
        { ...allowed, timeoutMs: 300 },
      );
      expect(hung).toMatchObject({ ok: false, status: null, message: 'openai did not answer within 300 ms' });
      const refused = await checkVendorKey(
        'openai',
        { apiKey: 'sk-anything-1', baseUrl },
        { ...allowed, allowPrivate: false },
      );
      expect(refused.ok).toBe(false);
      expect(refused.message).toMatch(/CALLWRIGHT_PROVIDER_ALLOW_PRIVATE/);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});
