/** The speech providers: ports, offline engines, OpenAI-compatible adapters and audio helpers. */
export { createResampler, resample, type StreamingResampler } from './audio/resampler.js';
export { decodeWav, encodeWav, type PcmAudio } from './audio/wav.js';
export {
  FallbackSpeechToText,
  FallbackTextToSpeech,
  type ProviderFailure,
  ProviderFailureLog,
  StageExhaustedError,
  type VoiceStage,
} from './fallbackProviders.js';
export type { OpenAiCompatibleEndpoint } from './http/openAiHttp.js';
export { OpenAiSpeechToText, type OpenAiSpeechToTextOptions } from './http/openAiSpeechToText.js';
export { OpenAiTextToSpeech, type OpenAiTextToSpeechOptions } from './http/openAiTextToSpeech.js';
export {
  type ChatMessage,
  type ChatStreamEvent,
  OpenAiChatClient,
  type OpenAiChatClientOptions,
  type ToolCall,
  type ToolDefinition,
} from './llm/openAiChatClient.js';
export { ProviderError } from './providerError.js';
export {
  type OpenAiRealtimeOptions,
  OpenAiRealtimeSpeechToSpeech,
} from './realtime/openAiRealtimeSpeechToSpeech.js';
export type * from './realtime/types.js';
export { DeepgramSpeechToText, type DeepgramSpeechToTextOptions } from './stt/deepgramSpeechToText.js';
export {
  PocketsphinxSpeechToText,
  type PocketsphinxSpeechToTextOptions,
} from './stt/pocketsphinxSpeechToText.js';
export { CartesiaTextToSpeech, type CartesiaTextToSpeechOptions } from './tts/cartesiaTextToSpeech.js';
export { DeepgramTextToSpeech, type DeepgramTextToSpeechOptions } from './tts/deepgramTextToSpeech.js';
export { ElevenLabsTextToSpeech, type ElevenLabsTextToSpeechOptions } from './tts/elevenLabsTextToSpeech.js';
export {
  FliteTextToSpeech,
  type FliteTextToSpeechOptions,
  type FliteVoice,
  fliteVoices,
} from './tts/fliteTextToSpeech.js';
export * from './types.js';
export {
  AudioTurnDetector,
  EndOfTurnDetector,
  type EndOfTurnOptions,
  type TurnEvent,
} from './vad/endOfTurnDetector.js';
export { FvadDetectorFactory, type FvadDetectorOptions } from './vad/fvadVoiceActivityDetector.js';
