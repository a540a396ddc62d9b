import { InbandDtmfDetector, type RtpSession } from '../rtp/index.js';
import { type PersonaTiming, personMaxReplies, type SandboxPersonaName } from './personas.js';
import { beepTone, type SandboxVoice, silence } from './sandboxAudio.js';
import type { SandboxCall } from './sandboxCall.js';
import { SpeechPauseDetector } from './speechPauseDetector.js';

/** What a persona needs besides its call. */
export interface PersonaContext {
  readonly timing: PersonaTiming;
  readonly voice: SandboxVoice;
}

type PersonaScript = (call: SandboxCall, context: PersonaContext) => Promise<void>;

/**
 * Rings once (answerDelayMs), answers, and hands the started media to `conversation`.
 * `telephoneEvent: false`: the answer leaves RFC 4733 out (keys only as tones in the audio).
 */
function answeringPersona(
  conversation: (call: SandboxCall, rtp: RtpSession, context: PersonaContext) => void,
  media: { telephoneEvent?: boolean } = {},
) {
  return async (call: SandboxCall, context: PersonaContext): Promise<void> => {
    if (!(await call.prepareMedia(media))) return;
    call.ring();
    call.after(context.timing.answerDelayMs, async () => {
      const rtp = await call.answer();
      if (rtp !== null && !call.isFinished) conversation(call, rtp, context);
    });
  };
}

interface ConverseHabits {
  /** Says "uh huh" once per agent turn, this far into it. */
  backchannelAfterMs?: number;
  /** Gives its first reply over the agent's first turn, this far into it. */
  interruptAfterMs?: number;
  /** Hangs up when this share of its first reply has been played. */
  hangUpDuringFirstReply?: number;
}

/**
 * The person: replies whenever the agent has spoken and then paused, hangs up after its sixth
 * reply has been heard, or at once on DTMF # (the stand-in for "goodbye"). Replies are played in
 * order even when producing one takes a while (a TTS voice). Habits make the other talkers: a
 * backchanneller, an interrupter, one who hangs up mid-sentence.
 */
function converse(
  call: SandboxCall,
  rtp: RtpSession,
  { timing, voice }: PersonaContext,
  habits: ConverseHabits = {},
): void {
  let detector = new SpeechPauseDetector({ pauseMs: timing.replyAfterSilenceMs });
  let backchannelled = false;
  let repliesStarted = 0;
  let replies: Promise<void> = Promise.resolve();
  const replyOnce = async (turn: number): Promise<void> => {
    if (call.isFinished) return;
    const audio = await voice.reply(turn, call.variables);
    if (call.isFinished) return;
    call.logger.debug({ turn }, 'sandbox person replies');
    if (turn === 0 && habits.hangUpDuringFirstReply !== undefined) {
      const cutAtMs = (audio.length / 8) * habits.hangUpDuringFirstReply;
      call.after(cutAtMs, () => call.hangUp('hangs up mid-sentence'));
    }
    const played = await rtp.play(audio);
    if (turn + 1 === personMaxReplies && !played.interrupted) {
      call.after(timing.goodbyeMs, () => call.hangUp(`${personMaxReplies} replies given`));
    }
  };
  const startReply = (): void => {
    const turn = repliesStarted++;
    replies = replies.then(() => replyOnce(turn));
    replies.catch((error: unknown) =>
      call.logger.error(
        { err: error instanceof Error ? error.message : String(error) },
        'sandbox reply failed',
      ),
    );
  };
  // While it talks over the agent it does not listen: the agent's cut-off turn is no turn to answer.
  let listening = true;
  rtp.on('audio', (samples) => {
    if (!listening) return;
    const paused = detector.push(samples);
    if (
      habits.interruptAfterMs !== undefined &&
      repliesStarted === 0 &&
      detector.spokenMs >= habits.interruptAfterMs
    ) {
      listening = false;
      startReply();
      void replies.finally(() => {
        detector = new SpeechPauseDetector({ pauseMs: timing.replyAfterSilenceMs });
        listening = true;
      });
      return;
    }
    if (
      habits.backchannelAfterMs !== undefined &&
      !backchannelled &&
      detector.spokenMs >= habits.backchannelAfterMs
    ) {
      backchannelled = true;
      void voice
        .backchannel()
        .then((audio) => (call.isFinished ? undefined : rtp.play(audio)))
        .catch(() => undefined);
    }
    if (!paused || repliesStarted >= personMaxReplies) return;
    backchannelled = false;
    startReply();
  });
  rtp.on('dtmf', ({ digit }) => {
    if (digit === '#') void call.hangUp('the agent said goodbye (DTMF #)');
  });
}

/** Answers, then presses DTMF 1 after `dtmfAfterMs` and stays on the line. */
const pressesOne = answeringPersona((call, rtp, { timing }) => pressOneAfter(call, rtp, timing));

function pressOneAfter(call: SandboxCall, rtp: RtpSession, timing: PersonaTiming): void {
  call.after(timing.dtmfAfterMs, async () => {
    try {
      await rtp.sendDtmf('1');
    } catch (error) {
      call.logger.info(
        { err: error instanceof Error ? error.message : String(error) },
        'sandbox cannot send DTMF',
      );
    }
  });
}

/** An answering machine: its greeting, a 1 kHz beep (or none), then silence while it records. */
function voicemailPersona({ beep }: { beep: boolean }) {
  return answeringPersona((call, rtp, { timing, voice }) => {
    void (async () => {
      const greeting = await voice.voicemailGreeting(call.variables);
      if (call.isFinished) return;
      const greeted = rtp.play(greeting);
      if (beep) {
        void rtp.play(silence(timing.beepGapMs));
        await rtp.play(beepTone(timing.beepMs));
      } else await greeted;
      call.logger.debug('sandbox voicemail is recording (silence)');
    })().catch((error: unknown) =>
      call.logger.error(
        { err: error instanceof Error ? error.message : String(error) },
        'sandbox greeting failed',
      ),
    );
  });
}

/** A person who answers with a greeting, then talks like the person once the agent has spoken. */
function greetThenConverse(
  call: SandboxCall,
  rtp: RtpSession,
  context: PersonaContext,
  length: 'brief' | 'long',
): void {
  void context.voice
    .personGreeting(length, call.variables)
    .then(async (greeting) => {
      if (call.isFinished) return;
      await rtp.play(greeting);
      if (!call.isFinished) converse(call, rtp, context);
    })
    .catch((error: unknown) =>
      call.logger.error(
        { err: error instanceof Error ? error.message : String(error) },
        'sandbox greeting failed',
      ),
    );
}

/** How often the phone menu plays before it gives up and hangs up. */
const ivrMaxPrompts = 8;
/** How long the menu waits for a key after its prompt. */
const ivrKeyWaitMs = 3_000;

/**
 * A phone menu: its prompt, again and again, until the caller presses 2 (support). It hears keys
 * as RFC 4733 events and as tones in the audio.
 */
function phoneMenu(call: SandboxCall, rtp: RtpSession, { voice }: PersonaContext): void {
  let prompts = 0;
  let chosen = false;
  let promptNumber = 0;
  const prompt = async (): Promise<void> => {
    if (call.isFinished || chosen) return;
    if (prompts >= ivrMaxPrompts) {
      await call.hangUp('the phone menu gave up');
      return;
    }
    prompts++;
    const mine = ++promptNumber;
    await rtp.play(await voice.ivrMenu());
    // Repeats unless a key (which starts its own prompt or the goodbye) came meanwhile.
    call.after(ivrKeyWaitMs, () => (mine === promptNumber ? prompt() : undefined));
  };
  const onKey = (digit: string): void => {
    if (chosen || call.isFinished) return;
    call.logger.debug({ digit }, 'sandbox phone menu heard a key');
    promptNumber++;
    if (digit !== '2') {
      call.after(300, prompt);
      return;
    }
    chosen = true;
    call.logger.info('sandbox phone menu: the caller chose support');
    void voice
      .ivrChosen()
      .then((audio) => rtp.play(audio))
      .then(() => call.hangUp('the phone menu connected the caller'))
      .catch(() => undefined);
  };
  rtp.on('dtmf', ({ digit }) => onKey(digit));
  const tones = new InbandDtmfDetector();
  rtp.on('audio', (samples) => {
    const digit = tones.push(samples);
    if (digit) onKey(digit);
  });
  call.after(300, prompt);
}

const scripts: Record<SandboxPersonaName, PersonaScript> = {
  person: answeringPersona(converse),
  busy: async (call) => call.reject(486),
  unreachable: async (call) => call.reject(404),
  // Rings until the caller gives up; its CANCEL gets 487 from the SIP stack.
  no_answer: async (call) => call.ring(),
  voicemail: voicemailPersona({ beep: true }),
  voicemail_no_beep: voicemailPersona({ beep: false }),
  greets_briefly: answeringPersona((call, rtp, context) => greetThenConverse(call, rtp, context, 'brief')),
  greets_at_length: answeringPersona((call, rtp, context) => greetThenConverse(call, rtp, context, 'long')),
  answers_then_hangs_up: answeringPersona((call, _rtp, { timing }) => {
    call.after(timing.hangUpAfterMs, () => call.hangUp('hangs up after answering'));
  }),
  silent: answeringPersona(() => {}),
  backchannels: answeringPersona((call, rtp, context) =>
    converse(call, rtp, context, { backchannelAfterMs: 1_500 }),
  ),
  interrupts: answeringPersona((call, rtp, context) =>
    converse(call, rtp, context, { interruptAfterMs: 1_500 }),
  ),
  hangs_up_mid_sentence: answeringPersona((call, rtp, context) =>
    converse(call, rtp, context, { hangUpDuringFirstReply: 0.5 }),
  ),
  presses_dtmf_1: pressesOne,
  // Its REFER refusal is the sandbox carrier's (sandboxTransfers.ts); it presses 1 like
  // presses_dtmf_1, then talks like the person (to whoever it is bridged to).
  refuses_transfer: answeringPersona((call, rtp, context) => {
    pressOneAfter(call, rtp, context.timing);
    converse(call, rtp, context);
  }),
  ivr: answeringPersona(phoneMenu),
  ivr_without_rfc4733: answeringPersona(phoneMenu, { telephoneEvent: false }),
};

/** Plays one persona on a call that has been received (and recorded) but not yet answered. */
export function runPersona(
  name: SandboxPersonaName,
  call: SandboxCall,
  context: PersonaContext,
): Promise<void> {
  return scripts[name](call, context);
}
