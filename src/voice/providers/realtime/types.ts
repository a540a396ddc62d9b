import type { ProviderError } from '../providerError.js';

/**
 * The speech-to-speech port: one session hears the callee, decides and speaks, replacing the
 * speech-to-text, language-model and text-to-speech stages for agents that choose it. Audio in and
 * out is 8 kHz mono PCM, like every provider interface here.
 */

/** A function the session's model may call; `parameters` is a JSON Schema object. */
export interface SpeechToSpeechTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface SpeechToSpeechOptions {
  /** The agent's rendered prompt (and the call's context). */
  instructions: string;
  voice?: string;
  /** The callee's language, a hint for the session's transcription. */
  language?: string;
  tools: SpeechToSpeechTool[];
}

/** What a session reports, in the order the vendor says it. */
export type SpeechToSpeechEvent =
  /** The vendor's turn detection heard the callee start speaking (the cue for barge-in). */
  | { type: 'speech_started' }
  /** …and stop; a reply follows unless the vendor thinks the callee has not finished. */
  | { type: 'speech_stopped' }
  | { type: 'callee_transcript'; text: string }
  /** Agent audio, as it streams; `itemId` names the reply it belongs to (for truncation). */
  | { type: 'agent_audio'; itemId: string; samples: Int16Array }
  /** The words of a whole reply item. */
  | { type: 'agent_transcript'; itemId: string; text: string }
  | { type: 'tool_call'; callId: string; name: string; arguments: string }
  | { type: 'response_done' }
  /** What a response used, in the vendor's billing units (tokens). */
  | {
      type: 'usage';
      inputTextTokens: number;
      inputAudioTokens: number;
      outputTextTokens: number;
      outputAudioTokens: number;
    }
  /** The session cannot go on (refused, closed, an error the vendor counts as fatal). */
  | { type: 'failed'; error: ProviderError };

export interface SpeechToSpeechSession {
  /** Appends callee audio (8 kHz PCM); cheap. */
  pushAudio(samples: Int16Array): void;
  /** Asks for a reply now (e.g. the greeting); `instructions` apply to this reply only. */
  respond(instructions?: string): void;
  /** The callee heard only `playedMs` of the item's audio: the vendor forgets the rest of it. */
  truncate(itemId: string, playedMs: number): void;
  /** Answers a tool call; a reply is asked for after it (`instructions` for that reply only). */
  sendToolResult(callId: string, output: string, instructions?: string): void;
  /** Ends the session; safe to call more than once. */
  close(): void;
}

export interface SpeechToSpeech {
  /** Opens a configured session; rejects with a ProviderError when the vendor refuses it. */
  open(
    options: SpeechToSpeechOptions,
    onEvent: (event: SpeechToSpeechEvent) => void,
  ): Promise<SpeechToSpeechSession>;
}
