// The callees of bench:voice, in a process of their own (a phone is not on the service's CPU): one
// JSON line in per conversation ({id, agentPort, turns, limitMs}) opens a callee RTP session toward
// the agent's port and answers {id, calleePort}; when the callee has answered every reply it says
// {id, done: true, heardMs}. The callee's speech is the default sandbox person's: flite's "yes", a
// pause of CALLEE_PAUSE_MS (300), "that works". heardMs: for each of its turns, voice-to-voice AS
// HEARD at the callee — from the moment its last audible sample left (the RTP frame holding it was
// sent, plus the sample's place in it) to the moment the agent's first audible sample after it
// arrived (the frame that held it, plus its place) — on this process's clock, so no figure of the
// service's is taken on trust.
import { createInterface } from 'node:readline';
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
import { concatSamples } from '../dist/voice/providers/audio/samples.js';
import { FliteTextToSpeech } from '../dist/voice/providers/index.js';
import { answerEachReply, synthesizeWhole } from './callee.mjs';

const logger = pino({ level: 'silent' });
const clock = new MediaClock({ logger });
const ports = new PortAllocator({ minPort: 46000, maxPort: 47998 });
const flite = await FliteTextToSpeech.start({ defaultVoice: 'kal', logger });
const audible = (samples) => samples.subarray(firstAudibleIndex(samples), lastAudibleIndex(samples) + 1);
const pauseMs = Number(process.env.CALLEE_PAUSE_MS ?? 300);
const speech = Int16Array.from(
  concatSamples([
    audible(await synthesizeWhole(flite, 'yes')),
    new Int16Array(pauseMs * 8),
    audible(await synthesizeWhole(flite, 'that works')),
  ]),
);
await flite.close();
const say = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

createInterface({ input: process.stdin }).on('line', async (line) => {
  const { id, agentPort, turns, limitMs } = JSON.parse(line);
  const rtp = await RtpSession.open({ logger, clock, ports, bindAddress: '127.0.0.1' });
  rtp.start(parseAnswer(createOffer({ address: '127.0.0.1', port: agentPort })));
  say({ id, calleePort: rtp.localPort });
  const heardMs = [];
  let lastSentAudibleAt = null;
  rtp.on('outgoingAudio', (samples) => {
    const index = lastAudibleIndex(samples);
    if (index >= 0) lastSentAudibleAt = performance.now() + (index + 1) / 8;
  });
  rtp.on('audio', (samples) => {
    if (lastSentAudibleAt === null) return;
    const now = performance.now();
    // Not while the callee's own speech is still going out (the pause inside the answer).
    if (now < lastSentAudibleAt + 20) return;
    const index = firstAudibleIndex(samples);
    if (index < 0) return;
    heardMs.push(Math.round(now + index / 8 - lastSentAudibleAt));
    lastSentAudibleAt = null;
  });
  // The agent's reply may pause between its sentences: the callee answers after 600 ms of quiet.
  await answerEachReply(rtp, speech, { turns, limitMs, quietFrames: 30 });
  rtp.close();
  say({ id, done: true, heardMs });
});
process.stdin.on('end', () => {
  clock.stop();
  process.exit(0);
});
say({ ready: true });
