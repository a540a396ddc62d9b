// The worker node of bench:node, in a process of its own so that its CPU (and its speech engines',
// which are its child processes) can be read apart from the callees', the vendor fakes' and the
// bench's. It holds the service's voice stack as a worker does (VoiceStack.start with the config
// read by loadConfig from BENCH_NODE_ENV: offline engines in child processes, fvad, the vendors'
// service-wide credentials) and builds each call's voice with VoiceStack.forCall from an agent
// record, the greeting synthesised ahead as the INVITE leaves (SpeechPrefetch), the RTP session on
// the shared media clock, then the Conversation a call session starts at the answer. What it does
// not run: SIP signalling and the database (bench:dispatch, bench:media and bench:api measure them).
//
// JSON lines on stdin: {level: {kind, conversations, turns, startSpreadMs}} runs a level;
// {calleeSaid: {...}} relays what the callee process said. On stdout: {ready: true};
// {toCallee: {...}} for the bench to relay; {levelDone: {...}} with each conversation's figures.
import { createInterface } from 'node:readline';
import pino from 'pino';
import { loadConfig } from '../dist/config.js';
import {
  createOffer,
  MediaClock,
  PortAllocator,
  parseAnswer,
  RtpSession,
} from '../dist/telephony/rtp/index.js';
import { SpeechPrefetch } from '../dist/voice/agentSpeaker.js';
import { Conversation } from '../dist/voice/conversation.js';
import { RealtimeConversation } from '../dist/voice/realtimeConversation.js';
import { VoiceStack } from '../dist/voice/voiceStack.js';

const config = loadConfig(JSON.parse(process.env.BENCH_NODE_ENV ?? '{}'));
const logger = pino({ level: 'silent' });
const clock = new MediaClock({ logger });
const ports = new PortAllocator({ minPort: 44000, maxPort: 45998 });
const voiceStack = await VoiceStack.start(config.voice, logger);
const say = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

const greeting = 'Hello, this is the clinic calling about your appointment.';
/** What each kind of agent is: the offline default stack, and streaming vendors with a model. */
const agents = {
  offline: {
    brain: 'script',
    // The script of bench:turn: one question, asked again after each answer.
    script: {
      start: 'ask',
      nodes: {
        ask: {
          say: 'Okay, and does Tuesday work for you?',
          listen: [{ phrases: ['yes', 'no', 'yes that works', 'wait i have a question'], next: 'ask' }],
          otherwise: 'ask',
        },
      },
    },
    settings: {},
  },
  streaming: {
    brain: 'llm',
    script: null,
    settings: {
      stt: { provider: 'deepgram' },
      tts: { provider: 'elevenlabs', voice: 'bench-voice' },
      llm: { provider: 'openai', model: 'bench-model' },
    },
  },
  // OpenAI Realtime's fake (server VAD, first audio 300 ms after the callee's speech stopped).
  realtime: {
    brain: 'llm',
    script: null,
    settings: { realtime: { provider: 'openai' }, llm: { provider: 'openai', model: 'bench-model' } },
  },
};
const agentRecord = (kind) => ({
  id: `agent-${kind}`,
  accountId: 'bench',
  name: kind,
  active: true,
  prompt: 'You confirm appointments. Be brief.',
  firstMessage: greeting,
  variables: [],
  extraction: [],
  maxDurationS: 600,
  silenceTimeoutS: 60,
  createdAt: '',
  updatedAt: '',
  ...agents[kind],
});

const calleeReplies = new Map();
const calleeSays = (key) => new Promise((resolve) => calleeReplies.set(key, resolve));
let conversationsStarted = 0;

async function conversation(kind, turns) {
  const id = conversationsStarted++;
  const startedAt = performance.now();
  const call = { id: `call-${id}`, firstMessage: null, variables: null, context: null };
  const voice = voiceStack.forCall(agentRecord(kind), call, logger);
  const prefetch = new SpeechPrefetch(voice.tts, voice.ttsVoice, logger);
  const greetingText = voice.realtime ? null : voice.brain.greeting();
  if (greetingText) prefetch.prefetch(greetingText);
  const rtp = await RtpSession.open({ logger, clock, ports, bindAddress: '127.0.0.1' });
  const portSaid = calleeSays(`${id}:port`);
  const doneSaid = calleeSays(`${id}:done`);
  say({
    toCallee: { kind, message: { id, agentPort: rtp.localPort, turns, limitMs: turns * 8_000 + 4_000 } },
  });
  const { calleePort } = await portSaid;
  rtp.start(parseAnswer(createOffer({ address: '127.0.0.1', port: calleePort })));
  const { realtime, ...stages } = voice;
  const shared = { ...stages, rtp, logger, silenceTimeoutMs: 60_000, maxDurationMs: 600_000, hangUp() {} };
  // As a call session does: a speech-to-speech session holds the whole conversation.
  const agent = realtime
    ? new RealtimeConversation({ ...shared, ...realtime })
    : new Conversation({ ...shared, prefetch });
  agent.start();
  const { heardMs } = await doneSaid;
  const result = await agent.finish();
  rtp.close();
  voice.release();
  const turnsOf = result.metrics.turns ?? [];
  if (process.env.BENCH_DEBUG)
    console.error(JSON.stringify({ kind, heardMs, turns: turnsOf, transcript: result.transcript }));
  return {
    callSeconds: (performance.now() - startedAt) / 1000,
    heardMs,
    ownMs: turnsOf.map((turn) => turn.voice_to_voice_ms).filter((value) => value !== null),
    turns: turnsOf.length,
    // Turns whose end was not a complete answer by the 250 ms decision (the recogniser's words did
    // not match, so the turn waited longer), and turns whose final came > 200 ms after the end of
    // the turn (the offline recogniser's second pass over what its grammar did not hear).
    slowEndTurns: turnsOf.filter((turn) => turn.end_of_turn !== 'complete').length,
    lateFinalTurns: turnsOf.filter(
      (turn) => turn.stt_final_ms !== null && turn.stt_final_ms - turn.end_of_turn_ms > 200,
    ).length,
    answers: turns,
    failures: voice.providerFailures.failures.length,
  };
}

async function runLevel({ kind, conversations, turns, startSpreadMs }) {
  // Calls start spread over the first seconds, as calls placed one after another do.
  const results = await Promise.all(
    Array.from({ length: conversations }, async (_, index) => {
      await new Promise((resolve) => setTimeout(resolve, (index * startSpreadMs) / conversations));
      return conversation(kind, turns);
    }),
  );
  say({ levelDone: results });
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line);
  if (message.level) void runLevel(message.level);
  else if (message.calleeSaid) {
    const said = message.calleeSaid;
    calleeReplies.get(`${said.id}:${said.done ? 'done' : 'port'}`)?.(said);
  }
});
process.stdin.on('end', async () => {
  await voiceStack.offlineStt.close();
  await voiceStack.offlineTts.close();
  clock.stop();
  process.exit(0);
});
say({ ready: true, pid: process.pid });
