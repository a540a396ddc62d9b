// npm run bench:turn — response latency of the voice pipeline: from the end of the callee's speech
// (the end of the VAD silence window) to the first RTP packet of the agent's reply.
//  1. with instant fake providers (the pipeline's own overhead), 2. with the offline stack
//  (pocketsphinx + flite), 3. how many concurrent conversations the offline stack holds before
//  the p95 passes 1 s.
import pino from 'pino';
import {
  createOffer,
  MediaClock,
  PortAllocator,
  parseAnswer,
  RtpSession,
} from '../dist/telephony/rtp/index.js';
import { ScriptBrain } from '../dist/voice/brains/scriptBrain.js';
import { Conversation } from '../dist/voice/conversation.js';
import {
  FliteTextToSpeech,
  FvadDetectorFactory,
  PocketsphinxSpeechToText,
} from '../dist/voice/providers/index.js';
import { answerEachReply, synthesizeWhole } from './callee.mjs';

const logger = pino({ level: 'silent' });
const clock = new MediaClock({ logger });
const ports = new PortAllocator({ minPort: 42000, maxPort: 43998 });
const vadFactory = await FvadDetectorFactory.load();

const loopScript = {
  start: 'ask',
  nodes: {
    ask: {
      say: 'Okay.',
      listen: [{ phrases: ['yes', 'no', 'yes that works'], next: 'ask' }],
      otherwise: 'ask',
    },
  },
};

const instantTts = {
  async *synthesize() {
    yield { samples: new Int16Array(3200).fill(3000), sampleRateHz: 8000 };
  },
  async close() {},
};
const instantStt = {
  async startSession() {
    return {
      pushAudio() {},
      onPartial() {},
      async finish() {
        return { text: 'yes', matchedPhrase: 'yes' };
      },
      close() {},
    };
  },
  async close() {},
};

/** One agent conversation and a callee that says `calleeSpeech` after each agent reply. */
async function conversationPair({ tts, stt, calleeSpeech, turns }) {
  const agentRtp = await RtpSession.open({ logger, clock, ports, bindAddress: '127.0.0.1' });
  const calleeRtp = await RtpSession.open({ logger, clock, ports, bindAddress: '127.0.0.1' });
  agentRtp.start(parseAnswer(createOffer({ address: '127.0.0.1', port: calleeRtp.localPort })));
  calleeRtp.start(parseAnswer(createOffer({ address: '127.0.0.1', port: agentRtp.localPort })));
  const conversation = new Conversation({
    rtp: agentRtp,
    brain: new ScriptBrain(loopScript, {}, null),
    tts,
    stt,
    vad: vadFactory.create({ frameDurationMs: 20, aggressiveness: 2 }),
    logger,
    silenceTimeoutMs: 600_000,
    maxDurationMs: 600_000,
    voicemail: { action: 'hang_up', message: null },
    hangUp() {},
  });
  // The callee speaks once the agent's reply has finished arriving.
  const done = answerEachReply(calleeRtp, calleeSpeech, { turns, limitMs: turns * 6_000 });
  conversation.start();
  await done;
  const result = await conversation.finish();
  agentRtp.close();
  calleeRtp.close();
  return result.metrics.response_latencies_ms;
}

async function measure(label, providers, { conversations, turns }) {
  const started = performance.now();
  const all = (
    await Promise.all(Array.from({ length: conversations }, () => conversationPair({ ...providers, turns })))
  ).flat();
  all.sort((a, b) => a - b);
  const at = (q) => all[Math.min(all.length - 1, Math.floor(q * all.length))];
  const line = `${label.padEnd(44)} ${String(all.length).padStart(4)} turns  p50 ${String(at(0.5)).padStart(5)} ms  p95 ${String(at(0.95)).padStart(5)} ms  (${((performance.now() - started) / 1000).toFixed(1)} s)`;
  console.log(line);
  return at(0.95);
}

const flite = await FliteTextToSpeech.start({ defaultVoice: 'kal', logger });
const sphinx = await PocketsphinxSpeechToText.start({ processCount: 1, freeForm: false, logger });
const yes = await synthesizeWhole(flite, 'yes that works');

console.log(
  `bench:turn — Node ${process.version}; latency = end of the VAD silence window (600 ms) -> first agent RTP packet`,
);
const onlyLevels = process.env.BENCH_LEVELS;
if (!onlyLevels)
  await measure(
    'instant fake providers (pipeline overhead)',
    { tts: instantTts, stt: instantStt, calleeSpeech: yes },
    { conversations: 10, turns: 10 },
  );
if (!onlyLevels)
  await measure(
    'offline stack (pocketsphinx + flite)',
    { tts: flite, stt: sphinx, calleeSpeech: yes },
    { conversations: 2, turns: 15 },
  );
for (const conversations of (onlyLevels ?? '2,4,8,16,24,32,48').split(',').map(Number)) {
  const p95 = await measure(
    `offline stack, ${conversations} concurrent conversations`,
    { tts: flite, stt: sphinx, calleeSpeech: yes },
    { conversations, turns: 6 },
  );
  if (p95 > 1000) {
    console.log(
      `capacity: p95 passed 1 s at ${conversations} concurrent conversations (1 recogniser process)`,
    );
    break;
  }
}
await flite.close();
await sphinx.close();
clock.stop();
process.exit(0);
