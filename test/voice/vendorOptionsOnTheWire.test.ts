import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type VendorOptionCatalog,
  type VendorOptions,
  type VendorOptionType,
  vendorOptionCatalogs,
  vendorOptionProblem,
} from '../../src/domain/vendorOptions.js';
import { createLogger } from '../../src/logger.js';
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
import { startFakeCartesia } from '../fakes/cartesiaServer.js';
import { startFakeDeepgram } from '../fakes/deepgramLiveServer.js';
import { startFakeDeepgramSpeak } from '../fakes/deepgramSpeakServer.js';
import { startFakeElevenLabs } from '../fakes/elevenLabsStreamInputServer.js';
import { attachFakeRealtime, type FakeRealtime } from '../fakes/openAiRealtimeServer.js';

/**
 * Issue 33 item 5: every option an agent may set (src/domain/vendorOptions.ts) reaches the vendor.
 * Each adapter is given a valid value for EVERY option of its provider's catalog and talks to the
 * vendor's fake, which records what arrived; each option is then looked up where the vendor's
 * protocol puts it. An option added to a catalog without being sent fails here (it has no place).
 */

const logger = createLogger('silent');

/** A value that fits the option, not its default, so that it cannot arrive by accident. */
const samples: Record<string, unknown> = {
  endpointing: 300,
  extra: 'team:sales',
  replace: 'colour:color',
  chunk_length_schedule: '120,160,250,290',
  emotion: 'positivity:high',
  pronunciation_dict_id: 'dict_01',
  turn_detection: 'server_vad',
  transcription_model: 'gpt-4o-transcribe',
};

function sampleOf(name: string, option: VendorOptionType): string | number | boolean {
  const given = samples[name];
  if (given !== undefined) return given as string | number | boolean;
  switch (option.type) {
    case 'boolean':
      return true;
    case 'integer':
      return Math.min(option.max, option.min + 7);
    case 'number':
      return Math.round(((option.min + option.max) / 2) * 100) / 100 + 0.01;
    case 'choice':
      return option.values.at(-1) as string;
    case 'text':
      return `${name}-value`;
  }
}

function everyOption(catalog: VendorOptionCatalog): VendorOptions {
  const options: VendorOptions = {};
  for (const [name, option] of Object.entries(catalog)) {
    const value = sampleOf(name, option);
    expect(vendorOptionProblem(option, value), `sample of ${name}`).toBeNull();
    options[name] = value;
  }
  return options;
}

/** Each option of `options` found, by `locate`, with the value it was given. */
function expectEachOnTheWire(options: VendorOptions, locate: (name: string) => unknown): void {
  for (const [name, value] of Object.entries(options))
    expect({ name, onTheWire: locate(name) }).toEqual({ name, onTheWire: value });
}

async function drain(audio: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of audio) {
    // consumed
  }
}

let http: FakeOpenAiServer;
let realtime: FakeRealtime;
const openAiKey = 'sk-options-0001';

beforeAll(async () => {
  http = await startFakeOpenAiServer({
    apiKey: openAiKey,
    speechSamples: new Int16Array(2400).fill(1000),
    transcriptionText: 'yes',
    chatStreamDeltas: [{ delta: { role: 'assistant', content: 'Hello.' }, finishReason: 'stop' }],
  });
  realtime = attachFakeRealtime(http.httpServer, { apiKey: openAiKey, replies: [], chunkIntervalMs: 5 });
});

afterAll(async () => {
  realtime?.close();
  await http?.close();
});

describe('vendor options reach the vendor', () => {
  it('Deepgram live: every option is a query parameter of the stream', async () => {
    const apiKey = 'dg-options-0123456789';
    const fake = await startFakeDeepgram({ apiKey, transcripts: ['yes'] });
    try {
      const options = everyOption(vendorOptionCatalogs.stt.deepgram);
      const stt = new DeepgramSpeechToText({ apiKey, baseUrl: fake.baseUrl, vendorOptions: options });
      const session = await stt.startSession();
      session.close();
      const query = fake.connections[0]?.query;
      expectEachOnTheWire(options, (name) => {
        const text = query?.get(name);
        return text === 'true'
          ? true
          : text === 'false'
            ? false
            : /^-?\d+(\.\d+)?$/.test(text ?? '')
              ? Number(text)
              : text;
      });
      // What the adapter needs is not displaced.
      expect(query?.get('encoding')).toBe('mulaw');
      expect(query?.get('interim_results')).toBe('true');
    } finally {
      await fake.close();
    }
  });

  it('Deepgram Aura: every option is a query parameter of the socket', async () => {
    const apiKey = 'dg-aura-options-0123456789';
    const fake = await startFakeDeepgramSpeak({ apiKey, chunkIntervalMs: 5 });
    try {
      const options = everyOption(vendorOptionCatalogs.tts.deepgram);
      await drain(
        new DeepgramTextToSpeech({ apiKey, baseUrl: fake.baseUrl, vendorOptions: options }).synthesize('Hi.'),
      );
      const query = fake.connections[0]?.query;
      expectEachOnTheWire(options, (name) => {
        const text = query?.get(name);
        return text === 'true' ? true : Number(text);
      });
      expect(query?.get('encoding')).toBe('mulaw');
    } finally {
      await fake.close();
    }
  });

  it('ElevenLabs: query parameters, voice_settings and generation_config of the first message', async () => {
    const apiKey = 'xi-options-0123456789';
    const voiceId = '21m00Tcm4TlvDq8ikWAM';
    const fake = await startFakeElevenLabs({ apiKey, voiceIds: [voiceId], chunkIntervalMs: 5 });
    try {
      const options = everyOption(vendorOptionCatalogs.tts.elevenlabs);
      await drain(
        new ElevenLabsTextToSpeech({ apiKey, baseUrl: fake.baseUrl, vendorOptions: options }).synthesize(
          'Hi.',
          {
            voice: voiceId,
          },
        ),
      );
      const [connection] = fake.connections;
      const first = connection?.messages[0] as {
        text?: string;
        voice_settings?: Record<string, unknown>;
        generation_config?: { chunk_length_schedule?: number[] };
      };
      expect(first.text).toBe(' ');
      const voiceSettings = ['stability', 'similarity_boost', 'style', 'use_speaker_boost', 'speed'];
      expectEachOnTheWire(options, (name) => {
        if (voiceSettings.includes(name)) return first.voice_settings?.[name];
        if (name === 'chunk_length_schedule')
          return first.generation_config?.chunk_length_schedule?.join(',');
        const text = connection?.query.get(name);
        return text === 'true' ? true : /^\d+$/.test(text ?? '') ? Number(text) : text;
      });
      expect(connection?.query.get('output_format')).toBe('ulaw_8000');
    } finally {
      await fake.close();
    }
  });

  it('Cartesia: generation_config and fields of the generation request', async () => {
    const apiKey = 'sk_car_options_0123456789';
    const voiceId = '6ccbfb76-1fc6-48f7-b71d-91ac6298247b';
    const fake = await startFakeCartesia({ apiKey, voiceIds: [voiceId] });
    try {
      const options = everyOption(vendorOptionCatalogs.tts.cartesia);
      await drain(
        new CartesiaTextToSpeech({ apiKey, baseUrl: fake.baseUrl, vendorOptions: options }).synthesize(
          'Hi.',
          {
            voice: voiceId,
          },
        ),
      );
      const request = fake.connections[0]?.requests[0] as Record<string, unknown> & {
        generation_config?: Record<string, unknown>;
        output_format?: { encoding?: string };
      };
      expectEachOnTheWire(options, (name) =>
        ['speed', 'volume', 'emotion'].includes(name) ? request.generation_config?.[name] : request[name],
      );
      expect(request.output_format?.encoding).toBe('pcm_mulaw');
    } finally {
      await fake.close();
    }
  });

  it('OpenAI-compatible speech, transcription and chat: fields of each request body', async () => {
    const endpoint = { baseUrl: http.baseUrl, apiKey: openAiKey };
    const speechOptions = everyOption(vendorOptionCatalogs.tts.openai);
    await drain(
      new OpenAiTextToSpeech({ endpoint, model: 'tts-1', vendorOptions: speechOptions }).synthesize('Hi.'),
    );
    const speech = http.requests.find((request) => request.path === '/v1/audio/speech')?.json as Record<
      string,
      unknown
    >;
    expectEachOnTheWire(speechOptions, (name) => speech[name]);
    expect(speech.response_format).toBe('pcm');

    const transcriptionOptions = everyOption(vendorOptionCatalogs.stt.openai);
    const session = await new OpenAiSpeechToText({
      endpoint,
      model: 'whisper-1',
      vendorOptions: transcriptionOptions,
    }).startSession({ phrases: ['yes'] });
    session.pushAudio(new Int16Array(1600).fill(800));
    await session.finish();
    const form = http.requests.find((request) => request.path === '/v1/audio/transcriptions')?.formFields;
    expect(form?.prompt).toBe(`${transcriptionOptions.prompt} Expected answers: yes.`);
    expectEachOnTheWire(transcriptionOptions, (name) =>
      name === 'prompt' ? transcriptionOptions.prompt : Number(form?.[name]),
    );

    const chatOptions = everyOption(vendorOptionCatalogs.llm.openai);
    const chat = new OpenAiChatClient({ endpoint, model: 'gpt-4o-mini', vendorOptions: chatOptions });
    await drain(chat.streamChat({ messages: [{ role: 'user', content: 'Hi' }] }));
    const body = http.requests.find((request) => request.path === '/v1/chat/completions')?.json as Record<
      string,
      unknown
    >;
    expectEachOnTheWire(chatOptions, (name) => body[name]);
    expect(body).toMatchObject({ model: 'gpt-4o-mini', stream: true });
  });

  it('OpenAI Realtime: each option in its place of session.update', async () => {
    const checkOf = async (options: VendorOptions, turnDetection: 'server_vad' | 'semantic_vad') => {
      const before = realtime.connections.length;
      const session = await new OpenAiRealtimeSpeechToSpeech({
        apiKey: openAiKey,
        baseUrl: http.baseUrl,
        turnDetection,
        vendorOptions: options,
        logger,
      }).open({ instructions: 'Be brief.', tools: [] }, () => undefined);
      session.close();
      const update = realtime.connections[before]?.received.find((event) => event.type === 'session.update');
      return (update as { session: Record<string, unknown> } | undefined)?.session as {
        max_output_tokens?: number;
        audio: {
          input: {
            transcription?: { model?: string };
            turn_detection?: Record<string, unknown>;
            noise_reduction?: { type?: string };
          };
          output: { speed?: number; format?: { type?: string } };
        };
      };
    };
    const all = everyOption(vendorOptionCatalogs.realtime.openai);
    const { turn_detection: _kind, eagerness, ...serverVad } = all;
    const sent = await checkOf(serverVad, 'server_vad');
    expectEachOnTheWire(serverVad, (name) => {
      switch (name) {
        case 'speed':
          return sent.audio.output.speed;
        case 'max_output_tokens':
          return sent.max_output_tokens;
        case 'noise_reduction':
          return sent.audio.input.noise_reduction?.type;
        case 'transcription_model':
          return sent.audio.input.transcription?.model;
        default:
          return sent.audio.input.turn_detection?.[name];
      }
    });
    expect(sent.audio.input.turn_detection?.type).toBe('server_vad');
    expect(sent.audio.output.format?.type).toBe('audio/pcmu');
    const semantic = await checkOf({ eagerness: eagerness as string }, 'semantic_vad');
    expect(semantic.audio.input.turn_detection).toMatchObject({ type: 'semantic_vad', eagerness });
  });
});
