// The callees of bench:voice, in a process of their own (a phone is not on the service's CPU): one
// JSON line in per conversation ({id, agentPort, turns, limitMs}) opens a callee RTP session toward
// the agent's port and answers {id, calleePort}; when the callee has answered every reply it says
// {id, done: true}. The callee's speech is flite's "yes that works".
import { createInterface } from 'node:readline';
import pino from 'pino';
import {
  createOffer,
  MediaClock,
  PortAllocator,
  parseAnswer,
  RtpSession,
} from '../dist/telephony/rtp/index.js';
import { FliteTextToSpeech } from '../dist/voice/providers/index.js';
import { answerEachReply, synthesizeWhole } from './callee.mjs';

const logger = pino({ level: 'silent' });
const clock = new MediaClock({ logger });
const ports = new PortAllocator({ minPort: 46000, maxPort: 47998 });
const flite = await FliteTextToSpeech.start({ defaultVoice: 'kal', logger });
const speech = await synthesizeWhole(flite, 'yes that works');
await flite.close();
const say = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

createInterface({ input: process.stdin }).on('line', async (line) => {
  const { id, agentPort, turns, limitMs } = JSON.parse(line);
  const rtp = await RtpSession.open({ logger, clock, ports, bindAddress: '127.0.0.1' });
  rtp.start(parseAnswer(createOffer({ address: '127.0.0.1', port: agentPort })));
  say({ id, calleePort: rtp.localPort });
  await answerEachReply(rtp, speech, { turns, limitMs });
  rtp.close();
  say({ id, done: true });
});
process.stdin.on('end', () => {
  clock.stop();
  process.exit(0);
});
say({ ready: true });
