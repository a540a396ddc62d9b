import { createServer, type Server } from 'node:http';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addCredential } from '../../src/admin/credentials.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import type { CallRecord } from '../../src/domain/records.js';
import { createLogger } from '../../src/logger.js';
import { GuardedConnections } from '../../src/net/guardedConnections.js';
import {
  CartesiaTextToSpeech,
  DeepgramSpeechToText,
  DeepgramTextToSpeech,
  ElevenLabsTextToSpeech,
  OpenAiChatClient,
  OpenAiRealtimeSpeechToSpeech,
  OpenAiSpeechToText,
  OpenAiTextToSpeech,
} from '../../src/voice/providers/index.js';
import {
  type FakeOpenAiServer,
  startFakeOpenAiServer,
} from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { type FakeElevenLabs, startFakeElevenLabs } from '../fakes/elevenLabsStreamInputServer.js';
import { listenOnlyScript } from '../helpers/agentScripts.js';
import { startDnsServer } from '../helpers/dnsServer.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';

/**
 * Issue 33 item 6: an account's vendor base URL is guarded when it is USED, at every connection,
 * not only when it was saved. The names below exist only in a DNS server on loopback that this test
 * runs (no /etc/hosts): the service resolves them through it (its `vendorHostLookup`), over real
 * DNS, and every vendor fake listens on 127.0.0.1.
 *
 * - a base URL whose name resolves to loopback is accepted when saved (only literals can be judged
 *   then) and refused when a call connects — the LLM over HTTP, ElevenLabs over its WebSocket —
 *   with nothing reaching the vendor's server;
 * - a loopback base URL saved while CALLWRIGHT_PROVIDER_ALLOW_PRIVATE was on is not used once it is
 *   off: the call is not dialled;
 * - a redirect is never followed (to loopback or anywhere): it is the vendor's answer, a failure;
 * - with the setting on, the same name is resolved by the same guarded lookup and used (the control
 *   that shows the lookup above is the one connections go through).
 */

let dns: Awaited<ReturnType<typeof startDnsServer>>;
let chat: FakeOpenAiServer;
let elevenLabs: FakeElevenLabs;
let redirector: Server;
let redirectorPort: number;
let strict: Awaited<ReturnType<typeof startFullService>>;
let lenient: Awaited<ReturnType<typeof startFullService>>;

const openAiKey = 'sk-guard-0001-abcdef';
const elevenLabsKey = 'xi-guard-0002-abcdef';
const voiceId = '21m00Tcm4TlvDq8ikWAM';

const saying = (words: string) => [
  { delta: { role: 'assistant', content: words } },
  {
    delta: {
      tool_calls: [
        { index: 0, id: 'call_1', type: 'function', function: { name: 'end_call', arguments: '{}' } },
      ],
    },
    finishReason: 'tool_calls',
  },
];

beforeAll(async () => {
  dns = await startDnsServer({
    a: { 'llm.vendor.test': ['127.0.0.1'], 'tts.vendor.test': ['127.0.0.1'] },
  });
  chat = await startFakeOpenAiServer({
    apiKey: openAiKey,
    chatStreamDeltas: saying('Hello from the model.'),
  });
  elevenLabs = await startFakeElevenLabs({ apiKey: elevenLabsKey, voiceIds: [voiceId], chunkIntervalMs: 5 });
  // An "internal" server that sends every request on to the chat fake on loopback.
  redirector = createServer((request, response) => {
    response.writeHead(307, { location: `${chat.baseUrl}${(request.url ?? '/').replace(/^\/v1/, '')}` });
    response.end();
  });
  await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
  redirectorPort = (redirector.address() as AddressInfo).port;
  const env = { CALLWRIGHT_SERVICE_VENDOR_KEYS: 'false' };
  [strict, lenient] = await Promise.all([
    startFullService(env, { vendorHostLookup: dns.lookup }),
    startFullService({ ...env, CALLWRIGHT_PROVIDER_ALLOW_PRIVATE: 'true' }, { vendorHostLookup: dns.lookup }),
  ]);
});

afterAll(async () => {
  await Promise.all([strict?.dispose(), lenient?.dispose()]);
  await Promise.all([chat?.close(), elevenLabs?.close(), dns?.close()]);
  await new Promise<void>((resolve) => (redirector ? redirector.close(() => resolve()) : resolve()));
});

let accountSeq = 0;

/** A fresh account on `service` with one credential (saved as the API saves it) and a caller ID. */
async function accountWith(
  service: typeof strict,
  credential: { provider: string; apiKey: string; baseUrl: string },
  savedWithPrivateAllowed = false,
) {
  accountSeq++;
  const account = await service.store.accounts.create({ name: `guard ${accountSeq}` });
  await addCredential(
    service.store,
    service.secretBox,
    account.id,
    { name: 'own', ...credential },
    { allowPrivate: savedWithPrivateAllowed },
  );
  const { key } = await createApiKey(service.store, account.id, 'k');
  await addPhoneNumber(service.store, account.id, '+15550009999');
  return { accountId: account.id, key };
}

async function place(
  service: typeof strict,
  owner: { accountId: string; key: string },
  agent: Parameters<typeof createAgent>[2],
): Promise<CallRecord> {
  const created = await createAgent(service.store, owner.accountId, agent);
  const placed = await postCall(service.url, owner.key, {
    agent_id: created.id,
    from_number: '+15550009999',
    to_number: '+15550100001',
  });
  expect(placed.status).toBe(200);
  return waitForTerminal(service, (placed.body as { call_id: string }).call_id, 40_000);
}

const llmAgent = {
  name: 'Model',
  prompt: 'Say hello.',
  brain: 'llm' as const,
  settings: { llm: { provider: 'openai' } },
  maxDurationS: 20,
};

const failuresOf = (call: CallRecord) =>
  (call.metrics as { provider_failures?: Record<string, unknown>[] } | null)?.provider_failures ?? [];

const chatRequests = () => chat.requests.filter((request) => request.path === '/v1/chat/completions').length;

describe('vendor base URLs guarded at use', () => {
  it('a name resolving to loopback: accepted when saved, refused when the LLM is called', async () => {
    const before = chatRequests();
    const owner = await accountWith(strict, {
      provider: 'openai',
      apiKey: openAiKey,
      baseUrl: `http://llm.vendor.test:${new URL(chat.baseUrl).port}/v1`,
    });
    const call = await place(strict, owner, llmAgent);
    expect(call).toMatchObject({ status: 'failed', endReason: 'provider_error' });
    expect(chatRequests()).toBe(before);
    expect(dns.queries).toContain('A llm.vendor.test');
    expect(failuresOf(call)).toContainEqual(
      expect.objectContaining({
        stage: 'llm',
        reason: expect.stringMatching(/llm\.vendor\.test resolves to a loopback address \(127\.0\.0\.1\)/),
      }),
    );
  });

  it('a name resolving to loopback: ElevenLabs’ socket is refused and the fallback voice speaks', async () => {
    const before = elevenLabs.connections.length;
    const owner = await accountWith(strict, {
      provider: 'elevenlabs',
      apiKey: elevenLabsKey,
      baseUrl: `ws://tts.vendor.test:${new URL(elevenLabs.baseUrl).port}`,
    });
    const call = await place(strict, owner, {
      name: 'Greeter',
      prompt: 'p',
      firstMessage: 'Hello, this is the fallback voice.',
      script: listenOnlyScript,
      settings: { tts: { provider: 'elevenlabs', voice: voiceId, fallback: [{ provider: 'flite' }] } },
      maxDurationS: 4,
    });
    expect(call.status).toBe('completed');
    expect(call.transcript[0]).toMatchObject({ role: 'agent', text: 'Hello, this is the fallback voice.' });
    expect(elevenLabs.connections.length).toBe(before);
    expect(dns.queries).toContain('A tts.vendor.test');
    expect(failuresOf(call)).toContainEqual(
      expect.objectContaining({
        stage: 'tts',
        provider: 'elevenlabs',
        reason: expect.stringMatching(/tts\.vendor\.test resolves to a loopback address/),
      }),
    );
  });

  it('a loopback base URL saved while allowed is not used once the setting is off: not dialled', async () => {
    const before = chatRequests();
    const owner = await accountWith(
      strict,
      { provider: 'openai', apiKey: openAiKey, baseUrl: chat.baseUrl },
      /* saved while CALLWRIGHT_PROVIDER_ALLOW_PRIVATE was on */ true,
    );
    const call = await place(strict, owner, llmAgent);
    expect(call).toMatchObject({ status: 'failed', endReason: 'provider_error', sipCallId: null });
    expect(chatRequests()).toBe(before);
    const logged = strict.logs.lines.find(
      (line) => line.includes('it is not dialled') && line.includes(call.id),
    );
    expect(logged).toMatch(
      /points to a loopback address \(127\.0\.0\.1\); set CALLWRIGHT_PROVIDER_ALLOW_PRIVATE=true/,
    );
  });

  it('a redirect is not followed: the vendor’s 307 to loopback is a failure, nothing reaches loopback', async () => {
    const before = chatRequests();
    const owner = await accountWith(
      lenient,
      { provider: 'openai', apiKey: openAiKey, baseUrl: `http://127.0.0.1:${redirectorPort}/v1` },
      true,
    );
    const call = await place(lenient, owner, llmAgent);
    expect(call).toMatchObject({ status: 'failed', endReason: 'provider_error' });
    expect(chatRequests()).toBe(before);
    expect(failuresOf(call)).toContainEqual(expect.objectContaining({ stage: 'llm', status: 307 }));
  });

  it('with the setting on, the same name goes through the same guarded lookup and is used', async () => {
    const before = chatRequests();
    const owner = await accountWith(lenient, {
      provider: 'openai',
      apiKey: openAiKey,
      baseUrl: `http://llm.vendor.test:${new URL(chat.baseUrl).port}/v1`,
    });
    // The agent's saved vendor options travel from its settings to the model's request (item 5).
    const call = await place(lenient, owner, {
      ...llmAgent,
      settings: { llm: { provider: 'openai', options: { temperature: 0.2, seed: 7 } } },
    });
    expect(call).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    expect(call.transcript[0]?.text).toBe('Hello from the model.');
    expect(chatRequests()).toBe(before + 1);
    const sent = chat.requests.filter((request) => request.path === '/v1/chat/completions').at(-1)?.json;
    expect(sent).toMatchObject({ temperature: 0.2, seed: 7, stream: true });
  });
});

describe('every vendor adapter connects through the guard', () => {
  it('refuses a name resolving to loopback and a loopback literal, HTTP and WebSocket, before any byte is sent', async () => {
    let connections = 0;
    const listener = createTcpServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as AddressInfo).port;
    const guard = new GuardedConnections({
      allowPrivate: false,
      subject: 'the credential base_url',
      allowPrivateSetting: 'CALLWRIGHT_PROVIDER_ALLOW_PRIVATE',
      lookup: dns.lookup,
    });
    const logger = createLogger('silent');
    const drain = async (audio: AsyncIterable<unknown>) => {
      for await (const _ of audio) {
        // consumed
      }
    };
    const attempts = (host: string) => {
      const ws = `ws://${host}:${port}`;
      const http = `http://${host}:${port}/v1`;
      const endpoint = { baseUrl: http, apiKey: 'sk-x-0000', connections: guard };
      return {
        'deepgram live': () =>
          new DeepgramSpeechToText({ apiKey: 'dg-0000', baseUrl: ws, connections: guard }).startSession(),
        'deepgram aura': () =>
          drain(
            new DeepgramTextToSpeech({ apiKey: 'dg-0000', baseUrl: ws, connections: guard }).synthesize(
              'Hi.',
            ),
          ),
        elevenlabs: () =>
          drain(
            new ElevenLabsTextToSpeech({ apiKey: 'xi-0000', baseUrl: ws, connections: guard }).synthesize(
              'Hi.',
            ),
          ),
        cartesia: () =>
          drain(
            new CartesiaTextToSpeech({ apiKey: 'sk-0000', baseUrl: ws, connections: guard }).synthesize(
              'Hi.',
            ),
          ),
        'openai realtime': () =>
          new OpenAiRealtimeSpeechToSpeech({
            apiKey: 'sk-0000',
            baseUrl: http,
            connections: guard,
            logger,
          }).open({ instructions: 'x', tools: [] }, () => undefined),
        'openai speech': () => drain(new OpenAiTextToSpeech({ endpoint, model: 'tts-1' }).synthesize('Hi.')),
        'openai transcription': async () => {
          const session = await new OpenAiSpeechToText({ endpoint, model: 'whisper-1' }).startSession();
          session.pushAudio(new Int16Array(160));
          return session.finish();
        },
        'openai chat': () =>
          drain(
            new OpenAiChatClient({ endpoint, model: 'm' }).streamChat({
              messages: [{ role: 'user', content: 'x' }],
            }),
          ),
      };
    };
    try {
      for (const [host, refusal] of [
        ['tts.vendor.test', /tts\.vendor\.test resolves to a loopback address \(127\.0\.0\.1\)/],
        ['127.0.0.1', /points to a loopback address \(127\.0\.0\.1\)/],
      ] as const) {
        for (const [vendor, attempt] of Object.entries(attempts(host))) {
          const error = await attempt().then(
            () => null,
            (caught: unknown) => caught,
          );
          expect({ vendor, host, message: (error as Error | null)?.message }).toEqual({
            vendor,
            host,
            message: expect.stringMatching(refusal),
          });
        }
      }
      expect(connections).toBe(0);
    } finally {
      guard.close();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    }
  });

  it('follows no redirect on a WebSocket either: a 307 on the upgrade is the vendor’s refusal', async () => {
    const allowed = new GuardedConnections({
      allowPrivate: true,
      subject: 'the credential base_url',
      allowPrivateSetting: 'CALLWRIGHT_PROVIDER_ALLOW_PRIVATE',
      lookup: dns.lookup,
    });
    const before = chat.requests.length;
    const ws = `ws://127.0.0.1:${redirectorPort}`;
    const logger = createLogger('silent');
    const refusals = await Promise.all(
      [
        new DeepgramSpeechToText({ apiKey: 'dg-0000', baseUrl: ws, connections: allowed }).startSession(),
        (async () => {
          for await (const _ of new ElevenLabsTextToSpeech({
            apiKey: 'xi-0000',
            baseUrl: ws,
            connections: allowed,
          }).synthesize('Hi.')) {
            // no audio expected
          }
        })(),
        new OpenAiRealtimeSpeechToSpeech({
          apiKey: 'sk-0000',
          baseUrl: `http://127.0.0.1:${redirectorPort}/v1`,
          connections: allowed,
          logger,
        }).open({ instructions: 'x', tools: [] }, () => undefined),
      ].map((attempt) =>
        Promise.resolve(attempt).then(
          () => null,
          (caught: unknown) => caught,
        ),
      ),
    );
    for (const refusal of refusals)
      expect((refusal as { providerStatus?: number } | null)?.providerStatus).toBe(307);
    expect(chat.requests.length).toBe(before);
    allowed.close();
  });
});
