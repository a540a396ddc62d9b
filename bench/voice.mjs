// npm run bench:voice — the voice pipeline with streaming vendors, as fakes with stated latencies
// in their own process (bench/voiceVendors.mjs): Deepgram answers the end-of-turn Finalize after
// 150 ms, the language model's first token comes 250 ms after the request and the next ones at
// 50 tokens/s, ElevenLabs sends its first audio 120 ms after the text and then at real-time pace.
// N concurrent conversations over loopback RTP, the callees in a process of their own
// (bench/voiceCallees.mjs), each saying the default sandbox person's "yes … that works" (a 300 ms
// pause inside it) after every agent reply; the calls start spread over 2 s (BENCH_START_SPREAD_MS;
// 0 starts them together, so that every turn ends at the same instant).
//
// Per level: voice-to-voice AS HEARD at the callee (its last audible sample sent -> the agent's
// first audible sample received, on the callee process's clock) p50/p95; the calls' own figure
// (metrics.turns[].voice_to_voice_ms, on the recording) p50/p95; how many turns' replies were
// generated ahead and kept (preemptive_reply used / discarded); turns per callee answer (1.00: the
// pause never split an answer); the greeting's first audible sample after the answer
// (metrics.greeting_audible_ms; the greeting is synthesised from the "INVITE", BENCH_RING_MS before
// the answer, with the real-time-paced voice); CPU ms of this process per call-second and RSS per
// call. Then the same for OpenAI Realtime (BENCH_REALTIME_LEVELS), as heard and as the call reports.
import { execFileSync, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import pino from 'pino';
import { UsageMeter } from '../dist/domain/usage.js';
import {
  createOffer,
  MediaClock,
  PortAllocator,
  parseAnswer,
  RtpSession,
} from '../dist/telephony/rtp/index.js';
import { SpeechPrefetch } from '../dist/voice/agentSpeaker.js';
import { LlmBrain } from '../dist/voice/brains/llmBrain.js';
import { Conversation } from '../dist/voice/conversation.js';
import {
  DeepgramSpeechToText,
  ElevenLabsTextToSpeech,
  FallbackSpeechToText,
  FallbackTextToSpeech,
  FliteTextToSpeech,
  FvadDetectorFactory,
  OpenAiChatClient,
  OpenAiRealtimeSpeechToSpeech,
  ProviderFailureLog,
} from '../dist/voice/providers/index.js';
import { RealtimeConversation } from '../dist/voice/realtimeConversation.js';

const startSpreadMs = Number(process.env.BENCH_START_SPREAD_MS ?? 2000);
const ringMs = Number(process.env.BENCH_RING_MS ?? 0);
const turnsPerCall = Number(process.env.BENCH_TURNS ?? 4);
const greeting = 'Hello, this is the clinic calling about your appointment.';
// esbuild comes with vitest (its own binary): the fakes are TypeScript, the bench runs on Node.
execFileSync('node_modules/esbuild/bin/esbuild', [
  '--bundle',
  '--platform=node',
  '--format=esm',
  '--packages=external',
  '--log-level=warning',
  '--outfile=bench/.fakes.mjs',
  'bench/voiceFakes.ts',
]);
const vendors = spawn(process.execPath, ['bench/voiceVendors.mjs'], { stdio: ['ignore', 'pipe', 'inherit'] });
const urls = await new Promise((resolve) =>
  vendors.stdout.once('data', (chunk) => resolve(JSON.parse(String(chunk)))),
);

const logger = pino({ level: 'silent' });
const clock = new MediaClock({ logger });
const ports = new PortAllocator({ minPort: 44000, maxPort: 45998 });
const vadFactory = await FvadDetectorFactory.load();
const flite = await FliteTextToSpeech.start({ defaultVoice: 'kal', logger });

const stt = new DeepgramSpeechToText({ apiKey: 'bench-deepgram', baseUrl: urls.deepgram });
const tts = new ElevenLabsTextToSpeech({
  apiKey: 'bench-elevenlabs',
  baseUrl: urls.elevenLabs,
  defaultVoiceId: 'bench-voice',
});
const speechToSpeech = new OpenAiRealtimeSpeechToSpeech({ apiKey: 'bench-llm', baseUrl: urls.llm, logger });

// The callees run in a process of their own, as the far end of a call does.
const callees = spawn(process.execPath, ['bench/voiceCallees.mjs'], { stdio: ['pipe', 'pipe', 'inherit'] });
const calleeReplies = new Map();
createInterface({ input: callees.stdout }).on('line', (line) => {
  const message = JSON.parse(line);
  calleeReplies.get(message.ready ? 'ready' : `${message.id}:${message.done ? 'done' : 'port'}`)?.(message);
});
const calleeSays = (key) => new Promise((resolve) => calleeReplies.set(key, resolve));
await calleeSays('ready');
let conversationsStarted = 0;

const llmBrain = () =>
  new LlmBrain(
    new OpenAiChatClient({
      endpoint: { baseUrl: urls.llm, apiKey: 'bench-llm' },
      model: 'bench-model',
      logger,
    }),
    { systemPrompt: 'You confirm appointments. Be brief.', firstMessage: greeting, extraction: [], logger },
  );

async function conversationPair(turns, kind) {
  const id = conversationsStarted++;
  const failures = new ProviderFailureLog();
  const voice = new FallbackTextToSpeech(
    [{ provider: 'elevenlabs', tts, firstAudioTimeoutMs: 3000 }],
    failures,
  );
  // The greeting is synthesised from the moment the call is placed, as the service does.
  const prefetch = new SpeechPrefetch(voice, undefined, logger);
  if (kind === 'pipeline') prefetch.prefetch(greeting);
  const agentRtp = await RtpSession.open({ logger, clock, ports, bindAddress: '127.0.0.1' });
  const portSaid = calleeSays(`${id}:port`);
  const doneSaid = calleeSays(`${id}:done`);
  callees.stdin.write(
    `${JSON.stringify({ id, agentPort: agentRtp.localPort, turns, limitMs: turns * 8_000 + 4_000 })}\n`,
  );
  const { calleePort } = await portSaid;
  if (ringMs > 0) await new Promise((resolve) => setTimeout(resolve, ringMs));
  agentRtp.start(parseAnswer(createOffer({ address: '127.0.0.1', port: calleePort })));
  const common = {
    rtp: agentRtp,
    brain: llmBrain(),
    apologyTts: flite,
    providerFailures: failures,
    logger,
    silenceTimeoutMs: 600_000,
    maxDurationMs: 600_000,
    voicemail: { action: 'hang_up', message: null },
    hangUp() {},
  };
  const conversation =
    kind === 'pipeline'
      ? new Conversation({
          ...common,
          tts: voice,
          prefetch,
          stt: new FallbackSpeechToText([{ provider: 'deepgram', stt, finalTimeoutMs: 3000 }], failures),
          vad: vadFactory.create({ frameDurationMs: 20, aggressiveness: 2 }),
        })
      : new RealtimeConversation({
          ...common,
          speechToSpeech,
          session: { instructions: 'You confirm appointments. Be brief.', tools: [] },
          provider: 'openai-realtime',
          model: 'gpt-realtime',
          firstMessage: greeting,
          firstAudioTimeoutMs: 3000,
          tools: null,
          usage: new UsageMeter(),
        });
  conversation.start();
  const { heardMs } = await doneSaid;
  const result = await conversation.finish();
  agentRtp.close();
  const turnsOf = result.metrics.turns ?? [];
  if (process.env.BENCH_DEBUG) console.log(JSON.stringify({ heardMs, turns: turnsOf }));
  return {
    heardMs,
    ownMs: turnsOf.map((turn) => turn.voice_to_voice_ms).filter((value) => value !== null),
    turns: turnsOf.length,
    answers: turns,
    used: turnsOf.filter((turn) => turn.preemptive_reply === 'used').length,
    discarded: turnsOf.filter((turn) => turn.preemptive_reply === 'discarded').length,
    greetingMs: result.metrics.greeting_audible_ms,
    failures: failures.failures.length,
  };
}

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};

async function level(conversations, kind) {
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  }, 200);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  // Calls start spread over the first 2 s, as calls placed one after another do, not in the same
  // millisecond (which would make every turn of every call end at once, in lockstep).
  const results = await Promise.all(
    Array.from({ length: conversations }, async (_, index) => {
      await new Promise((resolve) => setTimeout(resolve, (index * startSpreadMs) / conversations));
      return conversationPair(turnsPerCall, kind);
    }),
  );
  const wallS = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  clearInterval(sampler);
  const heard = results.flatMap((result) => result.heardMs);
  const own = results.flatMap((result) => result.ownMs);
  const greetings = results.map((result) => result.greetingMs).filter((value) => value !== null);
  const sum = (key) => results.reduce((total, result) => total + result[key], 0);
  const cpuMsPerCallSecond = (cpu.user + cpu.system) / 1000 / (conversations * wallS);
  console.log(
    `${kind.padEnd(8)} ${String(conversations).padStart(4)} calls ${String(heard.length).padStart(4)} replies heard  AS HEARD p50 ${quantile(heard, 0.5)} ms p95 ${quantile(heard, 0.95)} ms  call's own p50 ${quantile(own, 0.5)} p95 ${quantile(own, 0.95)}  turns/answer ${(sum('turns') / sum('answers')).toFixed(2)}  ahead used ${sum('used')} discarded ${sum('discarded')}  greeting audible p50 ${quantile(greetings, 0.5)} ms p95 ${quantile(greetings, 0.95)} ms  CPU ${cpuMsPerCallSecond.toFixed(1)} ms/call-s  RSS +${((rssPeak - rssBefore) / conversations / 1e6).toFixed(2)} MB/call  vendor failures ${sum('failures')}  (${wallS.toFixed(1)} s)`,
  );
}

console.log(
  `bench:voice — Node ${process.version}; vendor fakes in their own process: Deepgram final 150 ms after Finalize, LLM first token 250 ms then 50 tokens/s, ElevenLabs first audio 120 ms then real-time pace; OpenAI Realtime: server VAD 500 ms, first audio ${process.env.REALTIME_FIRST_AUDIO_MS ?? 300} ms; callees in their own process saying "yes … (${process.env.CALLEE_PAUSE_MS ?? 300} ms) that works"; ring ${ringMs} ms`,
);
// A warm-up, not counted: the first calls of a process compile the hot paths and fill the pools of
// the HTTP and socket clients once, which is no call's cost.
await Promise.all(Array.from({ length: 5 }, () => conversationPair(1, 'pipeline')));
await Promise.all(Array.from({ length: 2 }, () => conversationPair(1, 'realtime')));
console.log('warm-up: 5 pipeline and 2 realtime conversations of 1 turn (not counted)');
for (const conversations of (process.env.BENCH_LEVELS ?? '1,50').split(',').filter(Boolean).map(Number))
  await level(conversations, 'pipeline');
for (const conversations of (process.env.BENCH_REALTIME_LEVELS ?? '1,50')
  .split(',')
  .filter(Boolean)
  .map(Number))
  await level(conversations, 'realtime');
vendors.kill('SIGTERM');
callees.stdin.end();
await flite.close();
clock.stop();
process.exit(0);
