import pino from 'pino';
import type { TurnTakingSettings } from '../../src/domain/turnTakingSettings.js';
import { defaultTurnTaking } from '../../src/domain/turnTakingSettings.js';
import {
  createOffer,
  MediaClock,
  PortAllocator,
  parseAnswer,
  RtpSession,
} from '../../src/telephony/rtp/index.js';
import type { SpeechPrefetch } from '../../src/voice/agentSpeaker.js';
import type { AgentBrain } from '../../src/voice/brains/types.js';
import { type AgentEnding, Conversation, type ConversationOptions } from '../../src/voice/conversation.js';
import { concatSamples } from '../../src/voice/providers/audio/samples.js';
import {
  FvadDetectorFactory,
  ProviderFailureLog,
  type SpeechToText,
  type TextToSpeech,
} from '../../src/voice/providers/index.js';

/**
 * An agent's conversation and a simulated callee as two RTP sessions on loopback, driven by one
 * media clock: the agent runs the real pipeline (fvad, end of turn, the brain, the voice, paced
 * RTP); the test speaks as the callee and hears the agent as the callee hears it.
 */

const logger = pino({ level: 'silent' });
let shared: { clock: MediaClock; ports: PortAllocator; vad: FvadDetectorFactory } | null = null;

async function sharedMedia() {
  shared ??= {
    clock: new MediaClock({ logger }),
    ports: new PortAllocator({ minPort: 44000, maxPort: 44998 }),
    vad: await FvadDetectorFactory.load(),
  };
  return shared;
}

export interface HeardFrame {
  /** ms since the callee's side started. */
  atMs: number;
  loud: boolean;
}

export async function conversationPair(options: {
  brain: AgentBrain;
  tts: TextToSpeech;
  stt: SpeechToText;
  turnTaking?: Partial<TurnTakingSettings>;
  silenceTimeoutMs?: number;
  prefetch?: SpeechPrefetch;
  /** false: the callee's line negotiates no RFC 4733 telephone-event (keys only as tones). */
  telephoneEvent?: boolean;
  dtmf?: 'rfc4733' | 'inband';
  /** The call's transfer (CallActions.transfer); absent: the agent cannot transfer. */
  transfer?: ConversationOptions['transfer'];
}) {
  const { clock, ports, vad } = await sharedMedia();
  const agentRtp = await RtpSession.open({ logger, clock, ports, bindAddress: '127.0.0.1' });
  const calleeRtp = await RtpSession.open({ logger, clock, ports, bindAddress: '127.0.0.1' });
  const telephoneEvent = options.telephoneEvent ?? true;
  agentRtp.start(
    parseAnswer(createOffer({ address: '127.0.0.1', port: calleeRtp.localPort, telephoneEvent })),
  );
  calleeRtp.start(
    parseAnswer(createOffer({ address: '127.0.0.1', port: agentRtp.localPort, telephoneEvent })),
  );
  const hangUps: AgentEnding[] = [];
  const conversation = new Conversation({
    rtp: agentRtp,
    brain: options.brain,
    tts: options.tts,
    stt: options.stt,
    vad: vad.create({ frameDurationMs: 20, aggressiveness: 2 }),
    logger,
    silenceTimeoutMs: options.silenceTimeoutMs ?? 60_000,
    maxDurationMs: 120_000,
    turnTaking: { ...defaultTurnTaking, ...options.turnTaking },
    voicemail: {
      action: 'hang_up',
      message: null,
      waitForDecision: false,
      detection: 'early',
      machineSpeechMs: 2_400,
    },
    apologyTts: options.tts,
    providerFailures: new ProviderFailureLog(),
    hangUp: (ending) => hangUps.push(ending),
    ...(options.dtmf ? { dtmf: options.dtmf } : {}),
    ...(options.transfer ? { transfer: options.transfer } : {}),
    ...(options.prefetch ? { prefetch: options.prefetch } : {}),
  });
  const heard: HeardFrame[] = [];
  const startedAt = performance.now();
  calleeRtp.on('audio', (samples: Int16Array) => {
    let peak = 0;
    for (const sample of samples) peak = Math.max(peak, Math.abs(sample));
    heard.push({ atMs: performance.now() - startedAt, loud: peak >= 500 });
  });
  const nowMs = () => performance.now() - startedAt;
  return {
    conversation,
    calleeRtp,
    agentRtp,
    hangUps,
    heard,
    nowMs,
    /** Resolves once the agent has been heard and then quiet for `quietMs` (its reply is over). */
    async agentFinished(quietMs = 300, limitMs = 20_000): Promise<void> {
      const until = nowMs() + limitMs;
      while (nowMs() < until) {
        const lastLoud = heard.findLast((frame) => frame.loud);
        if (lastLoud && nowMs() - lastLoud.atMs >= quietMs) return;
        await sleep(20);
      }
      throw new Error('the agent never finished speaking');
    },
    /** Resolves once the agent is heard speaking. */
    async agentSpeaking(limitMs = 20_000, afterMs = 0): Promise<number> {
      const until = nowMs() + limitMs;
      while (nowMs() < until) {
        const loud = heard.find((frame) => frame.loud && frame.atMs >= afterMs);
        if (loud) return loud.atMs;
        await sleep(10);
      }
      throw new Error('the agent never spoke');
    },
    /** Resolves once the agent has hung up. */
    async hungUp(limitMs = 20_000): Promise<void> {
      const until = nowMs() + limitMs;
      while (hangUps.length === 0) {
        if (nowMs() > until) throw new Error('the agent never hung up');
        await sleep(20);
      }
    },
    async close(): Promise<void> {
      agentRtp.close();
      calleeRtp.close();
    },
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Concatenates a voice's chunks for `text` into one buffer. */
export async function synthesizeWhole(tts: TextToSpeech, text: string, voice?: string): Promise<Int16Array> {
  const parts: Int16Array[] = [];
  for await (const chunk of tts.synthesize(text, voice ? { voice } : {})) parts.push(chunk.samples);
  return concatSamples(parts);
}

/** `ms` of silence at 8 kHz. */
export function silence(ms: number): Int16Array {
  return new Int16Array(ms * 8);
}

export function concat(...parts: Int16Array[]): Int16Array {
  return concatSamples(parts);
}
