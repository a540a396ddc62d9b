// npm run bench:voice — the voice pipeline with streaming vendors, as fakes with stated latencies
// in their own process: Deepgram answers the end-of-turn Finalize after 150 ms, the language model's
// first token comes 250 ms after the request and the next ones at 50 tokens/s, ElevenLabs sends its
// first audio 120 ms after the text. N concurrent conversations over loopback RTP, the callees in a
// process of their own, each speaking after every agent reply; the calls start spread over 2 s
// (BENCH_START_SPREAD_MS; 0 starts them together, so that every turn ends at the same instant). Per level: the agent's reply delay
// (end of the 600 ms end-of-turn silence -> first agent RTP packet) p50/p95, the platform overhead
// (that delay minus the vendors' own share), CPU ms of this process per call-second and RSS per call.
import { execFileSync, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import pino from 'pino';
import {
  createOffer,
  MediaClock,
  PortAllocator,
  parseAnswer,
  RtpSession,
} from '../dist/telephony/rtp/index.js';
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
  ProviderFailureLog,
} from '../dist/voice/providers/index.js';

// STT final 150 ms + first token 250 ms + 3 more tokens to the end of the first sentence at 50/s
// (60 ms) + TTS first audio 120 ms: what the vendors alone take before the first reply audio.
const vendorLatencyMs = 150 + 250 + 60 + 120;
const startSpreadMs = Number(process.env.BENCH_START_SPREAD_MS ?? 2000);
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

async function conversationPair(turns) {
  const id = conversationsStarted++;
  const agentRtp = await RtpSession.open({ logger, clock, ports, bindAddress: '127.0.0.1' });
  const portSaid = calleeSays(`${id}:port`);
  const doneSaid = calleeSays(`${id}:done`);
  callees.stdin.write(
    `${JSON.stringify({ id, agentPort: agentRtp.localPort, turns, limitMs: turns * 8_000 })}\n`,
  );
  const { calleePort } = await portSaid;
  agentRtp.start(parseAnswer(createOffer({ address: '127.0.0.1', port: calleePort })));
  const failures = new ProviderFailureLog();
  const conversation = new Conversation({
    rtp: agentRtp,
    brain: new LlmBrain(
      new OpenAiChatClient({
        endpoint: { baseUrl: urls.llm, apiKey: 'bench-llm' },
        model: 'bench-model',
        logger,
      }),
      {
        systemPrompt: 'You confirm appointments. Be brief.',
        firstMessage: 'Hello, this is the clinic calling about your appointment.',
        extraction: [],
        logger,
      },
    ),
    tts: new FallbackTextToSpeech([{ provider: 'elevenlabs', tts, firstAudioTimeoutMs: 3000 }], failures),
    stt: new FallbackSpeechToText([{ provider: 'deepgram', stt, finalTimeoutMs: 3000 }], failures),
    apologyTts: flite,
    providerFailures: failures,
    vad: vadFactory.create({ frameDurationMs: 20, aggressiveness: 2 }),
    logger,
    silenceTimeoutMs: 600_000,
    maxDurationMs: 600_000,
    voicemail: { action: 'hang_up', message: null },
    hangUp() {},
  });
  conversation.start();
  await doneSaid;
  const result = await conversation.finish();
  agentRtp.close();
  // The reply delay after the end-of-turn decision (the call's figure now starts at the end of speech).
  const latencies = result.metrics.turns
    .filter((turn) => turn.first_rtp_ms !== null)
    .map((turn) => turn.first_rtp_ms - turn.end_of_turn_ms);
  return { latencies, failures: failures.failures.length };
}

console.log(
  `bench:voice — Node ${process.version}; vendor fakes in their own process: Deepgram final 150 ms after Finalize, LLM first token 250 ms then 50 tokens/s, ElevenLabs first audio 120 ms; callees in their own process`,
);
console.log(
  `reply delay = end of the 600 ms end-of-turn silence -> first agent RTP packet; overhead = reply delay - ${vendorLatencyMs} ms (STT 150 + first token 250 + 3 tokens 60 + TTS 120)`,
);
// A warm-up, not counted: the first calls of a process compile the hot paths and fill the pools of
// the HTTP and socket clients once, which is no call's cost.
await Promise.all(Array.from({ length: 5 }, () => conversationPair(1)));
console.log('warm-up: 5 conversations of 1 turn (not counted)');
for (const conversations of (process.env.BENCH_LEVELS ?? '10,50,100').split(',').map(Number)) {
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
      return conversationPair(4);
    }),
  );
  const wallS = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  clearInterval(sampler);
  const all = results.flatMap((result) => result.latencies).sort((a, b) => a - b);
  const at = (q) => all[Math.min(all.length - 1, Math.floor(q * all.length))] ?? NaN;
  const cpuMsPerCallSecond = (cpu.user + cpu.system) / 1000 / (conversations * wallS);
  console.log(
    `${String(conversations).padStart(4)} conversations ${String(all.length).padStart(4)} turns  reply p50 ${at(0.5)} ms p95 ${at(0.95)} ms  overhead p50 ${at(0.5) - vendorLatencyMs} ms p95 ${at(0.95) - vendorLatencyMs} ms  CPU ${cpuMsPerCallSecond.toFixed(1)} ms/call-s  RSS +${((rssPeak - rssBefore) / conversations / 1e6).toFixed(2)} MB/call  vendor failures ${results.reduce((n, r) => n + r.failures, 0)}  (${wallS.toFixed(1)} s)`,
  );
}
vendors.kill('SIGTERM');
callees.stdin.end();
await flite.close();
clock.stop();
process.exit(0);
