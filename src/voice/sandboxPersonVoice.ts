import type { SandboxVoice } from '../telephony/sandbox/index.js';
import { personReplyText } from '../telephony/sandbox/personaWording.js';
import { concatSamples } from './providers/audio/samples.js';
import type { TextToSpeech } from './providers/index.js';

/**
 * The sandbox person's voice once TTS exists: replies that fit the example appointment agent,
 * worded as people word them (telephony/sandbox/personaWording.ts). It agrees unless the call's
 * variables ask it to reschedule (`reschedule_to`, e.g. "Wednesday").
 */
export function createSpeakingSandboxVoice(tts: TextToSpeech): SandboxVoice {
  async function speak(text: string): Promise<Int16Array> {
    const chunks: Int16Array[] = [];
    for await (const chunk of tts.synthesize(text)) chunks.push(chunk.samples);
    return concatSamples(chunks);
  }
  return {
    reply(turn, variables) {
      return speak(personReplyText(turn, variables));
    },
    backchannel() {
      return speak('uh huh');
    },
    ivrMenu() {
      return speak('For sales, press one. For support, press two.');
    },
    ivrChosen() {
      return speak('Connecting you to support. Goodbye.');
    },
    voicemailGreeting(variables) {
      return speak(
        greetingOf(variables) ??
          'Hi, you have reached Sam. I cannot take your call right now. Please leave a message after the tone.',
      );
    },
    say(text) {
      return speak(text);
    },
    personGreeting(length, variables) {
      return speak(greetingOf(variables) ?? (length === 'brief' ? 'Hello?' : 'Hello, Sam speaking.'));
    },
  };
}

/** The greeting a call asks the sandbox to say instead of the persona's own (`sandbox_greeting`). */
function greetingOf(variables: Readonly<Record<string, unknown>> | undefined): string | null {
  const text = variables?.sandbox_greeting;
  return typeof text === 'string' && text.trim() !== '' ? text.slice(0, 500) : null;
}
