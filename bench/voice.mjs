// npm run bench:voice — the voice pipeline with streaming vendors, as fakes with stated latencies
// in their own process: Deepgram answers the end-of-turn Finalize after 150 ms, ElevenLabs sends its
// first audio 120 ms after the text. N concurrent conversations over loopback RTP, each callee
// speaking after every agent reply. Per level: the agent's reply delay (end of the 600 ms
// end-of-turn silence -> first agent RTP packet) p50/p95, the platform overhead (that delay minus
// the vendors' 270 ms), CPU ms of this process per call-second and RSS per call.
// No language model here: the script brain answers at once (bench:turn covers the LLM-free path,
// an LLM fake with a paced token stream is still to come).
import { execFileSync, spawn } from 'node:child_process';
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
  DeepgramSpeechToText,
  ElevenLabsTextToSpeech,
  FallbackSpeechToText,
  FallbackTextToSpeech,
  FliteTextToSpeech,
  FvadDetectorFactory,
  ProviderFailureLog,
} from '../dist/voice/providers/index.js';

const vendorLatencyMs = 150 + 120;
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
const loopScript = {
  start: 'ask',
  nodes: {
    ask: {
      say: 'Okay, thank you.',
      listen: [{ phrases: ['yes that works'], next: 'ask' }],
      otherwise: 'ask',
    },
  },
};
let calleeSpeech;
{
  const parts = [];
  for await (const chunk of flite.synthesize('yes that works')) parts.push(chunk.samples);
  calleeSpeech = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    calleeSpeech.set(part, offset);
    offset += part.length;
  }
}

const stt = new DeepgramSpeechToText({ apiKey: 'bench-deepgram', baseUrl: urls.deepgram });
const tts = new ElevenLabsTextToSpeech({
  apiKey: 'bench-elevenlabs',
  baseUrl: urls.elevenLabs,
  defaultVoiceId: 'bench-voice',
});

async function conversationPair(turns) {
  const agentRtp = await RtpSession.open({ logger, clock, ports, bindAddress: '127.0.0.1' });
  const calleeRtp = await RtpSession.open({ logger, clock, ports, bindAddress: '127.0.0.1' });
  agentRtp.start(parseAnswer(createOffer({ address: '127.0.0.1', port: calleeRtp.localPort })));
  calleeRtp.start(parseAnswer(createOffer({ address: '127.0.0.1', port: agentRtp.localPort })));
  const failures = new ProviderFailureLog();
  const conversation = new Conversation({
    rtp: agentRtp,
    brain: new ScriptBrain(loopScript, {}, null),
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
  let heard = 0;
  let quietFrames = 0;
  let spoken = 0;
  const done = new Promise((resolve) => {
    setTimeout(resolve, turns * 8_000).unref();
    calleeRtp.on('audio', (samples) => {
      let energy = 0;
      for (const s of samples) energy += s * s;
      if (energy / samples.length > 100_000) {
        heard++;
        quietFrames = 0;
      } else if (heard > 0 && ++quietFrames === 10) {
        heard = 0;
        if (spoken++ >= turns) resolve();
        else void calleeRtp.play(calleeSpeech);
      }
    });
  });
  conversation.start();
  await done;
  const result = await conversation.finish();
  agentRtp.close();
  calleeRtp.close();
  return { latencies: result.metrics.response_latencies_ms, failures: failures.failures.length };
}

console.log(
  `bench:voice — Node ${process.version}; vendor fakes in their own process: Deepgram final ${vendorLatencyMs - 120} ms after Finalize, ElevenLabs first audio 120 ms`,
);
console.log(
  'reply delay = end of the 600 ms end-of-turn silence -> first agent RTP packet; overhead = reply delay - 270 ms',
);
for (const conversations of (process.env.BENCH_LEVELS ?? '10,50,100').split(',').map(Number)) {
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  }, 200);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const results = await Promise.all(Array.from({ length: conversations }, () => conversationPair(4)));
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
await flite.close();
clock.stop();
process.exit(0);
