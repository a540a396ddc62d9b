import type { VoiceConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { PersonaMind } from '../telephony/sandbox/index.js';
import { OpenAiSpeechToText } from '../voice/providers/http/openAiSpeechToText.js';
import { OpenAiChatClient } from '../voice/providers/index.js';
import { credentialFor, openAiEndpoint } from '../voice/vendorAdapters.js';

/**
 * A scenario callee played by a language model (`callee.persona`, docs/testing.md): it hears the
 * agent through the service's OpenAI-compatible transcription endpoint, decides what to say with
 * its chat model given the persona's goal, and the sandbox's voice says it. Only with the
 * service-wide OpenAI-compatible server configured (CALLWRIGHT_OPENAI_BASE_URL); a run asking for
 * a persona without one is refused.
 */

/** The marker a persona's model ends its line with when it is done with the call. */
const hangUpMarker = '[hang up]';
const replyMaxChars = 400;

/** Whether a vendor has a service-wide key here (flite needs none): personas need `openai`. */
export function serviceVendorConfigured(config: VoiceConfig, provider: string): boolean {
  return provider === 'flite' || credentialFor(provider, config, new Map()) !== null;
}

export function llmPersonaMind(config: VoiceConfig, logger: Logger): PersonaMind | null {
  const credential = credentialFor('openai', config, new Map());
  if (!credential) return null;
  const endpoint = openAiEndpoint(credential);
  const ears = new OpenAiSpeechToText({ endpoint, model: 'whisper-1', logger });
  const chat = new OpenAiChatClient({ endpoint, model: config.llmModel, logger });
  return {
    async hear(samples) {
      const session = await ears.startSession();
      session.pushAudio(samples);
      return (await session.finish()).text.trim();
    },
    async reply(goal, conversation) {
      const messages = [
        {
          role: 'system' as const,
          content:
            'You are a person who has just answered a phone call, in a test of the caller (an automated agent). ' +
            `Your goal and situation: ${goal}\n` +
            'Answer as that person would on the phone: one or two short spoken sentences, plain words, no lists, ' +
            `no stage directions. When you are done with the call, end your line with ${hangUpMarker}.`,
        },
        ...conversation.map((line) => ({
          role: line.role === 'agent' ? ('user' as const) : ('assistant' as const),
          content: line.text,
        })),
      ];
      let text = '';
      for await (const event of chat.streamChat({ messages, temperature: 0.7, maxTokens: 120 })) {
        if (event.type === 'text') text += event.delta;
      }
      const hangUp = text.toLowerCase().includes(hangUpMarker);
      const said = text
        .replace(/\[hang up\]/gi, '')
        .replace(/\s+/g, ' ')
        .trim()
        .slice(0, replyMaxChars);
      return { text: said, hangUp };
    },
  };
}
