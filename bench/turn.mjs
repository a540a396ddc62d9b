// npm run bench:turn — turn-taking as the callee hears it, on the audio: agent and callee are two
// RTP sessions on loopback driven by the shared media clock; the agent runs the real pipeline
// (fvad, adaptive end of turn, the script brain, the voice, paced RTP).
//  1. voice-to-voice after a complete answer: from the callee's last audible sample sent to the
//     first audible agent sample the callee receives, to the sample (both jitter buffers included;
//     the answers start at every phase of the 20 ms frame), with instant
//     providers (the pipeline's own floor) and with the offline stack (pocketsphinx + flite);
//  2. the greeting: from the answer (the conversation's start) to the first audible agent sample,
//     synthesised while the phone rang;
//  3. barge-in: from the decision to interrupt to the end of the agent's last audible frame sent;
//  4. how many concurrent conversations the offline stack holds before voice-to-voice p95 passes 1 s.
// BENCH_ANSWER: what the callee says (default "yes that works"); BENCH_SECOND_PASS=1: the recogniser
// loads the language model and decodes again what its grammar does not hear (issue 36).
import pino from 'pino';
import {
  createOffer,
  firstAudibleIndex,
  lastAudibleIndex,
  MediaClock,
  PortAllocator,
  parseAnswer,
  RtpSession,
} from '../dist/telephony/rtp/index.js';
import { SpeechPrefetch } from '../dist/voice/agentSpeaker.js';
import { ScriptBrain } from '../dist/voice/brains/scriptBrain.js';
import { Conversation } from '../dist/voice/conversation.js';
import {
  FliteTextToSpeech,
  FvadDetectorFactory,
  PocketsphinxSpeechToText,
  ProviderFailureLog,
} from '../dist/voice/providers/index.js';
import { synthesizeWhole } from './callee.mjs';

const logger = pino({ level: 'silent' });
const clock = new MediaClock({ logger });
const ports = new PortAllocator({ minPort: 42000, maxPort: 43998 });
const vadFactory = await FvadDetectorFactory.load();

const loopScript = {
  start: 'ask',
  nodes: {
    ask: {
      say: 'Okay, and does Tuesday work for you?',
      listen: [{ phrases: ['yes', 'no', 'yes that works', 'wait i have a question'], next: 'ask' }],
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
// A streaming recogniser that has the words as soon as there is audio (its partial says "yes").
const instantStt = {
  async startSession() {
    const listeners = [];
    let told = false;
    return {
      pushAudio() {
        if (told) return;
        told = true;
        for (const listener of listeners) listener({ text: 'yes' });
      },
      onPartial(listener) {
        listeners.push(listener);
      },
      async finish() {
        return { text: 'yes', matchedPhrase: 'yes' };
      },
      close() {},
    };
  },
  async close() {},
};

function withLeadingSilence(samples, silentSamples) {
  const out = new Int16Array(silentSamples + samples.length);
  out.set(samples, silentSamples);
  return out;
}

/** The speech without its leading and trailing silence (what the callee "says" is its words). */
function trimmed(samples) {
  const start = firstAudibleIndex(samples);
  return start < 0 ? samples.slice(0, 0) : samples.slice(start, lastAudibleIndex(samples) + 1);
}

/**
 * One conversation; the callee answers `speech` each time the agent has finished (400 ms of quiet
 * after audible audio), `turns` times, and measures voice-to-voice on what it sends and hears. With
 * `interruptAfterMs`, the callee instead talks over each reply that long after it starts.
 */
async function conversationPair({ tts, stt, speech, turns, interruptWith, prefetch }) {
  const agentRtp = await RtpSession.open({ logger, clock, ports, bindAddress: '127.0.0.1' });
  // The callee stands in for a phone with a fixed 60 ms jitter buffer (the agent's adapts).
  const calleeRtp = await RtpSession.open({
    logger,
    clock,
    ports,
    bindAddress: '127.0.0.1',
    jitterBuffer: { targetDepthFrames: 3, shrink: false },
  });
  agentRtp.start(parseAnswer(createOffer({ address: '127.0.0.1', port: calleeRtp.localPort })));
  calleeRtp.start(parseAnswer(createOffer({ address: '127.0.0.1', port: agentRtp.localPort })));
  const brain = new ScriptBrain(loopScript, {}, null);
  let prefetcher;
  // (the prefetch waits for the synthesis, as the phone's ringing would)
  if (prefetch) {
    prefetcher = new SpeechPrefetch(tts, undefined, logger);
    prefetcher.prefetch(brain.greeting());
    await new Promise((resolve) => setTimeout(resolve, 600));
  }
  const conversation = new Conversation({
    rtp: agentRtp,
    brain,
    tts,
    stt,
    vad: vadFactory.create({ frameDurationMs: 20, aggressiveness: 2 }),
    logger,
    silenceTimeoutMs: 600_000,
    maxDurationMs: 600_000,
    voicemail: { action: 'hang_up', message: null },
    apologyTts: tts,
    providerFailures: new ProviderFailureLog(),
    hangUp() {},
    ...(prefetcher ? { prefetch: prefetcher } : {}),
  });
  const voiceToVoiceMs = [];
  let greetingMs = null;
  let speechEndAt = null;
  let quietFrames = 0;
  let heardSomething = false;
  let replies = 0;
  let talking = false;
  const startedAt = performance.now();
  const done = new Promise((resolve) => {
    setTimeout(resolve, Math.max(1, turns) * 8_000).unref();
    calleeRtp.on('audio', (samples) => {
      const now = performance.now();
      const firstAudible = firstAudibleIndex(samples);
      if (firstAudible >= 0) {
        greetingMs ??= now - startedAt;
        if (speechEndAt !== null) {
          // A frame's time is its start: the first audible sample is that far into it.
          voiceToVoiceMs.push(now + firstAudible / 8 - speechEndAt);
          speechEndAt = null;
        }
        if (!heardSomething && interruptWith && !talking) {
          // A new reply began: talk over it a second in.
          talking = true;
          setTimeout(() => {
            replies++;
            void calleeRtp.play(interruptWith).then(() => {
              talking = false;
              // The agent's answer to the interruption is the next reply to talk over.
              heardSomething = false;
            });
          }, 1_000);
        }
        heardSomething = true;
        quietFrames = 0;
        return;
      }
      if (talking || ++quietFrames < 20 || !heardSomething) return;
      heardSomething = false;
      if (interruptWith ? replies >= turns : replies++ >= turns) {
        resolve();
        return;
      }
      if (interruptWith) return;
      talking = true;
      // Speech does not start on a frame boundary: each answer starts 0-19 ms into a frame (spread
      // over the turns), so its end falls at every phase of the 20 ms grid the agent decides on.
      const spoken = withLeadingSilence(speech, ((replies * 7) % 20) * 8);
      void calleeRtp.play(spoken).then(() => {
        // Settles as the last frame is sent (at that frame's start); its last sample ends later.
        speechEndAt = performance.now() + (((spoken.length - 1) % 160) + 1) / 8;
        talking = false;
      });
    });
  });
  conversation.start();
  await done;
  const result = await conversation.finish();
  agentRtp.close();
  calleeRtp.close();
  return { voiceToVoiceMs, greetingMs, metrics: result.metrics };
}

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0
    ? null
    : Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
};

async function measure(label, options, { conversations, turns }) {
  const started = performance.now();
  const results = await Promise.all(
    Array.from({ length: conversations }, () => conversationPair({ ...options, turns })),
  );
  const heard = results.flatMap((result) => result.voiceToVoiceMs);
  const measuredInside = results.flatMap((result) => result.metrics.response_latencies_ms);
  console.log(
    `${label.padEnd(46)} ${String(heard.length).padStart(4)} turns  heard p50 ${quantile(heard, 0.5)} ms  p95 ${quantile(heard, 0.95)} ms  | call's own figure p50 ${quantile(measuredInside, 0.5)} p95 ${quantile(measuredInside, 0.95)}  (${((performance.now() - started) / 1000).toFixed(1)} s)`,
  );
  return { p95: quantile(heard, 0.95), results };
}

const flite = await FliteTextToSpeech.start({ defaultVoice: 'kal', logger });
const secondPass = process.env.BENCH_SECOND_PASS === '1';
const sphinx = await PocketsphinxSpeechToText.start({ processCount: 1, freeForm: secondPass, logger });
const yes = trimmed(await synthesizeWhole(flite, process.env.BENCH_ANSWER ?? 'yes that works'));
const question = trimmed(await synthesizeWhole(flite, 'wait i have a question'));

console.log(
  `bench:turn — Node ${process.version}; voice-to-voice = the callee's last audible sample sent -> the first audible agent sample it receives`,
);
const onlyLevels = process.env.BENCH_LEVELS;
if (!onlyLevels) {
  await measure(
    'instant fake providers (pipeline floor)',
    { tts: instantTts, stt: instantStt, speech: yes },
    { conversations: 10, turns: 10 },
  );
  await measure(
    'offline stack (pocketsphinx + flite)',
    { tts: flite, stt: sphinx, speech: yes },
    { conversations: 2, turns: 15 },
  );
  const greetings = [];
  const greetingRtp = [];
  for (let run = 0; run < 20; run++) {
    const result = await conversationPair({ tts: flite, stt: sphinx, speech: yes, turns: 0, prefetch: true });
    greetings.push(result.greetingMs);
    greetingRtp.push(result.metrics.greeting_first_rtp_ms);
  }
  console.log(
    `greeting synthesised while ringing (flite), 20 calls: first audible sample heard p50 ${quantile(greetings, 0.5)} ms p95 ${quantile(greetings, 0.95)} ms after the answer; first RTP p95 ${quantile(greetingRtp, 0.95)} ms`,
  );
  const { results } = await measure(
    'barge-in: callee talks over each reply',
    { tts: flite, stt: sphinx, speech: yes, interruptWith: question },
    { conversations: 4, turns: 5 },
  );
  const stops = results.flatMap((result) => result.metrics.barge_in_stop_ms);
  const decisions = results.flatMap((result) => result.metrics.barge_in_decision_ms);
  console.log(
    `barge-in: ${stops.length} interruptions; stop after the decision p50 ${quantile(stops, 0.5)} ms p95 ${quantile(stops, 0.95)} ms; decision after speech start p50 ${quantile(decisions, 0.5)} ms p95 ${quantile(decisions, 0.95)} ms`,
  );
}
for (const conversations of (onlyLevels ?? '4,8,16,24,32').split(',').map(Number)) {
  const { p95 } = await measure(
    `offline stack, ${conversations} concurrent conversations`,
    { tts: flite, stt: sphinx, speech: yes },
    { conversations, turns: 6 },
  );
  if (p95 > 1000) {
    console.log(
      `capacity: voice-to-voice p95 passed 1 s at ${conversations} concurrent conversations (1 recogniser process)`,
    );
    break;
  }
}
await flite.close();
await sphinx.close();
clock.stop();
process.exit(0);
