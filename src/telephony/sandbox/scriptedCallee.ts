import type { RtpSession } from '../rtp/index.js';
import { type CalleePersona, type PersonaMind, personaConversation } from './personaCallee.js';
import type { PersonaContext } from './personaScripts.js';
import { beepTone, silence } from './sandboxAudio.js';
import type { SandboxCall } from './sandboxCall.js';
import { SpeechPauseDetector } from './speechPauseDetector.js';

/**
 * A test scenario's callee (docs/testing.md), played by the sandbox instead of a number's persona:
 * a person who says given lines turn by turn — after the agent pauses, or over it — with pauses,
 * halting words, backchannels, keys and hang-ups; or an answering machine with a given greeting.
 * Lines are text (the sandbox's voice says them) or recorded audio (a replay of a real call).
 */

/** Words to say, or samples to play (8 kHz mono). */
export type CalleeSpeech = { text: string; wordGapMs: number | null } | { samples: Int16Array };

export interface CalleeScriptTurn {
  speech: CalleeSpeech | null;
  dtmf: string | null;
  /** Extra silence after the agent's pause before speaking. */
  pauseMs: number;
  /** Speak over the agent once it has talked this long in its turn; null: wait for its pause. */
  interruptAfterMs: number | null;
  backchannel: string | null;
  backchannelAfterMs: number;
  hangUp: 'during' | 'after' | null;
}

export interface CalleeScript {
  answers: 'human' | 'voicemail';
  answerAfterMs: number;
  greeting: CalleeSpeech | null;
  /** voicemail: a 1 kHz beep after the greeting. */
  beep: boolean;
  turns: CalleeScriptTurn[];
  /** After the last turn: hang up once the agent has answered it, or stay on the line. */
  afterLastTurn: 'hang_up' | 'stay';
  /** A person with a goal instead of `turns`, played by the carrier's persona mind. */
  persona: CalleePersona | null;
  /** Says the callee's text lines in another voice than the carrier's (a vendor's); null: the carrier's. */
  say: ((text: string) => Promise<Int16Array>) | null;
}

async function audioOf(speech: CalleeSpeech, { voice }: PersonaContext): Promise<Int16Array> {
  if ('samples' in speech) return speech.samples;
  if (speech.wordGapMs === null) return voice.say(speech.text);
  const words = speech.text.split(/\s+/).filter((word) => word !== '');
  const parts: Int16Array[] = [];
  for (const [index, word] of words.entries()) {
    if (index > 0) parts.push(silence(speech.wordGapMs));
    parts.push(await voice.say(word));
  }
  const joined = new Int16Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return joined;
}

/** Plays `script` on a received call: rings, answers after `answerAfterMs`, then runs it. */
export async function runScriptedCallee(
  call: SandboxCall,
  script: CalleeScript,
  carrierContext: PersonaContext,
  mind: PersonaMind | null,
): Promise<void> {
  const context = script.say
    ? { ...carrierContext, voice: { ...carrierContext.voice, say: script.say } }
    : carrierContext;
  if (script.persona !== null && mind === null) {
    call.logger.warn('a persona callee without a persona mind (no language model): 503');
    call.reject(503);
    return;
  }
  if (!(await call.prepareMedia())) return;
  call.ring();
  call.after(script.answerAfterMs, async () => {
    const rtp = await call.answer();
    if (rtp === null || call.isFinished) return;
    if (script.answers === 'voicemail') answeringMachine(call, rtp, script, context);
    else if (script.persona !== null && mind !== null) {
      const persona = script.persona;
      void greet(call, rtp, script, context).then(() =>
        personaConversation(call, rtp, persona, mind, context),
      );
    } else scriptedPerson(call, rtp, script, context);
  });
}

function answeringMachine(
  call: SandboxCall,
  rtp: RtpSession,
  script: CalleeScript,
  context: PersonaContext,
): void {
  void (async () => {
    const greeting = script.greeting
      ? await audioOf(script.greeting, context)
      : await context.voice.voicemailGreeting({});
    if (call.isFinished) return;
    await rtp.play(greeting);
    if (script.beep && !call.isFinished) {
      await rtp.play(silence(context.timing.beepGapMs));
      await rtp.play(beepTone(context.timing.beepMs));
    }
  })().catch(call.failureLogger('sandbox scripted greeting failed'));
}

/**
 * The person of a scenario. It listens to the agent with the sandbox's energy ear; each turn is
 * given once the agent has spoken and then paused (`replyAfterSilenceMs`, plus the turn's own
 * `pauseMs`), or — for a turn that interrupts — once the agent has talked `interruptAfterMs` into
 * its turn. While it speaks it does not listen (its own line is not the agent's turn).
 */
function scriptedPerson(
  call: SandboxCall,
  rtp: RtpSession,
  script: CalleeScript,
  context: PersonaContext,
): void {
  const newDetector = () => new SpeechPauseDetector({ pauseMs: context.timing.replyAfterSilenceMs });
  let detector = newDetector();
  let next = 0;
  let listening = false;
  let backchannelled = false;
  let hangingUp = false;

  const give = async (turn: CalleeScriptTurn): Promise<void> => {
    listening = false;
    if (turn.pauseMs > 0) await new Promise<void>((resolve) => call.after(turn.pauseMs, resolve));
    if (call.isFinished) return;
    if (turn.speech) {
      const audio = await audioOf(turn.speech, context);
      if (call.isFinished) return;
      if (turn.hangUp === 'during') {
        call.after(audio.length / 16, () => call.hangUp('the scenario hangs up mid-sentence'));
      }
      call.logger.debug({ turn: next }, 'sandbox scripted callee speaks');
      await rtp.play(audio);
    }
    for (const digit of turn.dtmf ?? '') {
      if (call.isFinished) return;
      await rtp.sendDtmf(digit).catch(call.failureLogger('sandbox cannot send DTMF'));
    }
    if (turn.hangUp !== null) {
      await call.hangUp('the scenario hangs up');
      return;
    }
    detector = newDetector();
    backchannelled = false;
    listening = true;
  };

  const startTurn = (): void => {
    const turn = script.turns[next++];
    if (turn === undefined) return;
    give(turn).catch(call.failureLogger('sandbox scripted turn failed'));
  };

  rtp.on('audio', (samples) => {
    if (!listening || hangingUp) return;
    const paused = detector.push(samples);
    const turn = script.turns[next];
    if (turn === undefined) {
      // Every line given: the agent's answer to the last one, then goodbye (or stay).
      if (paused && script.afterLastTurn === 'hang_up') {
        hangingUp = true;
        call.after(context.timing.goodbyeMs, () => call.hangUp('the scenario is over'));
      }
      return;
    }
    if (turn.backchannel !== null && !backchannelled && detector.spokenMs >= turn.backchannelAfterMs) {
      backchannelled = true;
      void audioOf({ text: turn.backchannel, wordGapMs: null }, context)
        .then((audio) => (call.isFinished ? undefined : rtp.play(audio)))
        .catch(call.failureLogger('sandbox backchannel failed'));
    }
    if (turn.interruptAfterMs !== null ? detector.spokenMs >= turn.interruptAfterMs : paused) startTurn();
  });

  void greet(call, rtp, script, context).then(() => {
    listening = true;
  });
}

/** Says the script's greeting, if any; resolves once it has been played (or failed, logged). */
async function greet(call: SandboxCall, rtp: RtpSession, script: CalleeScript, context: PersonaContext) {
  try {
    if (!script.greeting) return;
    const greeting = await audioOf(script.greeting, context);
    if (!call.isFinished) await rtp.play(greeting);
  } catch (error) {
    call.failureLogger('sandbox scripted greeting failed')(error);
  }
}
