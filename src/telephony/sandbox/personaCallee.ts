import type { RtpSession } from '../rtp/index.js';
import type { PersonaContext } from './personaScripts.js';
import type { SandboxCall } from './sandboxCall.js';
import { SpeechPauseDetector } from './speechPauseDetector.js';

/**
 * A scenario callee with a goal instead of lines (`callee.persona`): each time the agent speaks and
 * pauses, what it said is heard (transcribed) by the persona's mind, which answers for the person;
 * the sandbox's voice says it. The mind is the owner's (a language model, src/agentTests/llmPersona.ts).
 */

export interface PersonaMind {
  /** What the agent said in these samples (8 kHz mono). */
  hear(samples: Int16Array): Promise<string>;
  /** The person's next line; `hangUp` when it is done with the call (after saying `text`). */
  reply(
    goal: string,
    conversation: readonly { role: 'agent' | 'callee'; text: string }[],
  ): Promise<{ text: string; hangUp: boolean }>;
}

export interface CalleePersona {
  goal: string;
  /** It hangs up after this many lines at the latest. */
  maxReplies: number;
}

/** The agent's speech is kept at most this long per turn: a minute of 20 ms frames. */
const turnFramesMax = 3_000;
/** Frames kept from before the agent's first loud one, so its first syllable is heard. */
const leadInFrames = 10;

export function personaConversation(
  call: SandboxCall,
  rtp: RtpSession,
  persona: CalleePersona,
  mind: PersonaMind,
  context: PersonaContext,
): void {
  const detector = new SpeechPauseDetector({ pauseMs: context.timing.replyAfterSilenceMs });
  const conversation: { role: 'agent' | 'callee'; text: string }[] = [];
  let heard: Int16Array[] = [];
  let busy = false;
  let replies = 0;

  const answer = async (agentAudio: Int16Array): Promise<void> => {
    const agentText = await mind.hear(agentAudio);
    if (call.isFinished) return;
    if (agentText) conversation.push({ role: 'agent', text: agentText });
    const line = await mind.reply(persona.goal, conversation);
    if (call.isFinished) return;
    replies++;
    if (line.text) {
      conversation.push({ role: 'callee', text: line.text });
      call.logger.debug({ reply: replies }, 'sandbox persona speaks');
      await rtp.play(await context.voice.say(line.text));
    }
    if (line.hangUp || replies >= persona.maxReplies) await call.hangUp('the persona is done');
  };

  rtp.on('audio', (samples) => {
    if (busy || call.isFinished) return;
    heard.push(samples);
    if (heard.length > turnFramesMax) heard.shift();
    const paused = detector.push(samples);
    if (!paused) {
      // Nothing said yet in this turn (or a blip, forgotten): keep only a short lead-in.
      if (detector.spokenMs === 0 && heard.length > leadInFrames) heard = heard.slice(-leadInFrames);
      return;
    }
    const audio = new Int16Array(heard.reduce((sum, part) => sum + part.length, 0));
    let offset = 0;
    for (const part of heard) {
      audio.set(part, offset);
      offset += part.length;
    }
    heard = [];
    busy = true;
    answer(audio)
      .catch(call.failureLogger('sandbox persona failed'))
      .finally(() => {
        busy = false;
      });
  });
}
