import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageMeter } from '../../src/domain/usage.js';
import {
  createOffer,
  MediaClock,
  PortAllocator,
  parseAnswer,
  RtpSession,
} from '../../src/telephony/rtp/index.js';
import { LlmBrain } from '../../src/voice/brains/llmBrain.js';
import {
  FliteTextToSpeech,
  OpenAiChatClient,
  OpenAiRealtimeSpeechToSpeech,
  ProviderFailureLog,
} from '../../src/voice/providers/index.js';
import {
  type FakeOpenAiServer,
  startFakeOpenAiServer,
} from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { RealtimeConversation } from '../../src/voice/realtimeConversation.js';
import { endCallTool } from '../../src/voice/realtimeTools.js';
import { attachFakeRealtime, type FakeRealtime } from '../fakes/openAiRealtimeServer.js';
import { freeEvenUdpPort } from '../sipp/harness.js';

/**
 * Barge-in on a speech-to-speech call, over real RTP on loopback: the agent's long greeting plays,
 * the callee talks over it, the vendor's turn detection says so, and the agent's audio stops at once,
 * the session's item is truncated to what was played (so the model remembers only what the callee
 * heard), the transcript keeps the words that were heard, and the conversation goes on to its end.
 */

const logger = pino({ level: 'silent' });
const apiKey = 'sk-barge-in-0001';
const greeting =
  'Hello, this is the clinic calling about your appointment next Tuesday at ten in the morning with Doctor Lee, and I also wanted to go over the forms you need to bring with you.';
let openAi: FakeOpenAiServer;
let realtime: FakeRealtime;
let clock: MediaClock;
let flite: FliteTextToSpeech;

beforeAll(async () => {
  openAi = await startFakeOpenAiServer({ apiKey });
  realtime = attachFakeRealtime(openAi.httpServer, {
    apiKey,
    replies: [
      { text: greeting },
      { text: 'Of course, goodbye.', toolCall: { name: 'end_call', arguments: '{}' } },
    ],
    calleeTranscripts: ['Sorry, I have to stop you there.'],
    chunkIntervalMs: 5,
  });
  clock = new MediaClock({ logger });
  flite = await FliteTextToSpeech.start({ defaultVoice: 'kal', logger });
});

afterAll(async () => {
  clock?.stop();
  await flite?.close();
  realtime?.close();
  await openAi?.close();
});

describe('a callee who talks over a speech-to-speech agent', () => {
  it('stops the agent, truncates its item to what was played, and keeps the heard words', async () => {
    const base = await freeEvenUdpPort();
    const ports = new PortAllocator({ minPort: base, maxPort: base + 64 });
    const agentRtp = await RtpSession.open({ logger, clock, ports, bindAddress: '127.0.0.1' });
    const calleeRtp = await RtpSession.open({ logger, clock, ports, bindAddress: '127.0.0.1' });
    agentRtp.start(parseAnswer(createOffer({ address: '127.0.0.1', port: calleeRtp.localPort })));
    calleeRtp.start(parseAnswer(createOffer({ address: '127.0.0.1', port: agentRtp.localPort })));
    const endings: string[] = [];
    let ended: () => void = () => undefined;
    const hungUp = new Promise<void>((resolve) => {
      ended = resolve;
    });
    const conversation = new RealtimeConversation({
      rtp: agentRtp,
      speechToSpeech: new OpenAiRealtimeSpeechToSpeech({ apiKey, baseUrl: openAi.baseUrl, logger }),
      session: { instructions: 'Confirm the appointment.', tools: [endCallTool] },
      provider: 'openai-realtime',
      model: 'gpt-realtime',
      usage: new UsageMeter(),
      firstMessage: null,
      firstAudioTimeoutMs: 3000,
      tools: null,
      brain: new LlmBrain(
        new OpenAiChatClient({ endpoint: { baseUrl: openAi.baseUrl, apiKey }, model: 'm', logger }),
        { systemPrompt: 's', firstMessage: null, extraction: [], logger },
      ),
      logger,
      silenceTimeoutMs: 30_000,
      maxDurationMs: 60_000,
      voicemail: {
        action: 'hang_up',
        message: null,
        waitForDecision: false,
        detection: 'early',
        machineSpeechMs: 2_400,
      },
      apologyTts: flite,
      providerFailures: new ProviderFailureLog(),
      hangUp: (ending) => {
        endings.push(ending);
        ended();
      },
    });
    conversation.start();

    // The greeting (about 10 s of audio) has been playing for a while: the callee talks over it.
    let agentFrames = 0;
    agentRtp.on('outgoingAudio', () => agentFrames++);
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (agentFrames >= 60) {
          clearInterval(check);
          resolve();
        }
      }, 10);
    });
    const speech = new Int16Array(8 * 700).map((_, i) =>
      Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 8000)),
    );
    void calleeRtp.play(speech);
    await Promise.race([hungUp, new Promise((resolve) => setTimeout(resolve, 20_000))]);
    const result = await conversation.finish();
    agentRtp.close();
    calleeRtp.close();

    expect(endings).toEqual(['agent_hangup']);
    const connection = realtime.connections.at(-1)!;
    // The vendor had sent the whole greeting long before it was played (faster than real time), so
    // nothing was left to cancel there: only the truncation keeps its memory to what was heard.
    expect(connection.responses[0]?.status).toBe('completed');
    // Truncated to what had been played: more than the 1.2 s before the callee spoke, far less than all.
    expect(connection.truncates).toHaveLength(1);
    const playedMs = connection.truncates[0]?.audio_end_ms ?? 0;
    expect(playedMs).toBeGreaterThan(1_000);
    expect(playedMs).toBeLessThan(greeting.length * 60 - 3_000);
    expect(result.metrics.barge_ins).toBe(1);
    const [cut, callee, goodbye] = result.transcript;
    expect(greeting.startsWith(cut?.text ?? '-')).toBe(true);
    expect(cut?.text.length).toBeLessThan(greeting.length);
    expect(callee).toMatchObject({ role: 'callee', text: 'Sorry, I have to stop you there.' });
    expect(goodbye).toMatchObject({ role: 'agent', text: 'Of course, goodbye.' });
  }, 40_000);
});
