// npm run bench:greeting — the greeting of a voice that streams at the pace of speech (issue 33):
// a stand-in vendor whose first audio comes FIRST_AUDIO_MS (120) after the text and whose audio then
// arrives in real time (100 ms every 100 ms, a 4.9 s greeting), synthesised from the INVITE on
// (SpeechPrefetch) while the phone rings RING_MS, then played by the real pipeline over loopback
// RTP. Measured per call: the first RTP packet after the answer (the call's `greeting_first_rtp_ms`)
// and the first audible sample the callee receives (its jitter buffer included). Before issue 33 the
// greeting waited for the whole synthesis: ~4.9 s at this pace.
import pino from 'pino';
import {
  createOffer,
  firstAudibleIndex,
  MediaClock,
  PortAllocator,
  parseAnswer,
  RtpSession,
} from '../dist/telephony/rtp/index.js';
import { SpeechPrefetch } from '../dist/voice/agentSpeaker.js';
import { ScriptBrain } from '../dist/voice/brains/scriptBrain.js';
import { Conversation } from '../dist/voice/conversation.js';
import { FvadDetectorFactory, ProviderFailureLog } from '../dist/voice/providers/index.js';

const logger = pino({ level: 'silent' });
const clock = new MediaClock({ logger });
const ports = new PortAllocator({ minPort: 46000, maxPort: 46998 });
const vadFactory = await FvadDetectorFactory.load();
const firstAudioMs = Number(process.env.FIRST_AUDIO_MS ?? 120);
const calls = Number(process.env.CALLS ?? 20);
const greeting = 'Hello, this is the clinic calling to confirm your appointment on Tuesday morning.';
const script = { start: 'greet', nodes: { greet: { say: greeting, end: true } } };

/** 60 ms of a tone per character, in 100 ms chunks sent in real time after the first-audio delay. */
const pacedTts = {
  async *synthesize(text, options = {}) {
    const totalMs = text.length * 60;
    await new Promise((resolve) => setTimeout(resolve, firstAudioMs));
    for (let sentMs = 0; sentMs < totalMs; sentMs += 100) {
      if (options.signal?.aborted) throw options.signal.reason;
      const samples = new Int16Array(800);
      for (let i = 0; i < samples.length; i++)
        samples[i] = Math.round(4000 * Math.sin((2 * Math.PI * 220 * (sentMs * 8 + i)) / 8000));
      yield { samples, sampleRateHz: 8000 };
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  },
  async close() {},
};

async function oneCall(ringMs) {
  const agentRtp = await RtpSession.open({ logger, clock, ports, bindAddress: '127.0.0.1' });
  const calleeRtp = await RtpSession.open({
    logger,
    clock,
    ports,
    bindAddress: '127.0.0.1',
    jitterBuffer: { targetDepthFrames: 3, shrink: false },
  });
  agentRtp.start(parseAnswer(createOffer({ address: '127.0.0.1', port: calleeRtp.localPort })));
  calleeRtp.start(parseAnswer(createOffer({ address: '127.0.0.1', port: agentRtp.localPort })));
  const brain = new ScriptBrain(script, {}, null);
  // The INVITE leaves: the greeting is synthesised while the phone rings.
  const prefetch = new SpeechPrefetch(pacedTts, undefined, logger);
  prefetch.prefetch(brain.greeting());
  await new Promise((resolve) => setTimeout(resolve, ringMs));
  let ended = () => {};
  const hungUp = new Promise((resolve) => {
    ended = resolve;
  });
  const conversation = new Conversation({
    rtp: agentRtp,
    brain,
    tts: pacedTts,
    stt: {
      async startSession() {
        throw new Error('not listening');
      },
      async close() {},
    },
    vad: vadFactory.create({ frameDurationMs: 20, aggressiveness: 2 }),
    logger,
    silenceTimeoutMs: 600_000,
    maxDurationMs: 600_000,
    voicemail: { action: 'hang_up', message: null },
    apologyTts: pacedTts,
    providerFailures: new ProviderFailureLog(),
    hangUp: () => ended(),
    prefetch,
  });
  let heardMs = null;
  const answeredAt = performance.now();
  calleeRtp.on('audio', (samples) => {
    const audible = firstAudibleIndex(samples);
    if (audible >= 0) heardMs ??= performance.now() + audible / 8 - answeredAt;
  });
  conversation.start();
  await Promise.race([hungUp, new Promise((resolve) => setTimeout(resolve, 15_000))]);
  const result = await conversation.finish();
  prefetch.close();
  agentRtp.close();
  calleeRtp.close();
  return { firstRtpMs: result.metrics.greeting_first_rtp_ms, heardMs };
}

const quantile = (values, q) => {
  const sorted = values.filter((value) => value !== null).sort((a, b) => a - b);
  return sorted.length === 0
    ? null
    : Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
};

for (const ringMs of [0, 1000]) {
  const results = [];
  for (let call = 0; call < calls; call++) results.push(await oneCall(ringMs));
  const rtp = results.map((result) => result.firstRtpMs);
  const heard = results.map((result) => result.heardMs);
  console.log(
    `greeting, real-time-paced voice (first audio ${firstAudioMs} ms), ringing ${ringMs} ms, ${calls} calls: ` +
      `first RTP after the answer p50 ${quantile(rtp, 0.5)} ms p95 ${quantile(rtp, 0.95)} ms; ` +
      `first audible sample heard p50 ${quantile(heard, 0.5)} ms p95 ${quantile(heard, 0.95)} ms`,
  );
}
clock.stop?.();
process.exit(0);
