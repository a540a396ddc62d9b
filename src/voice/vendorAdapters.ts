import type { VendorCredential, VoiceConfig } from '../config.js';
import type { RealtimeChoice, SttChoice, TtsChoice } from '../domain/agentVoiceSettings.js';
import type { Logger } from '../logger.js';
import {
  CartesiaTextToSpeech,
  DeepgramSpeechToText,
  DeepgramTextToSpeech,
  ElevenLabsTextToSpeech,
  type OpenAiCompatibleEndpoint,
  OpenAiRealtimeSpeechToSpeech,
  OpenAiSpeechToText,
  OpenAiTextToSpeech,
  ProviderError,
  type SpeechToSpeech,
  type SpeechToText,
  type TextToSpeech,
} from './providers/index.js';

/**
 * The vendor keys of the account whose call is being placed (bring your own key): by provider (its
 * first credential) and by `provider/name`.
 */
export type AccountVendorKeys = ReadonlyMap<string, VendorCredential>;

const settingOf: Record<string, string> = {
  openai: 'CALLWRIGHT_OPENAI_BASE_URL',
  deepgram: 'CALLWRIGHT_DEEPGRAM_API_KEY',
  elevenlabs: 'CALLWRIGHT_ELEVENLABS_API_KEY',
  cartesia: 'CALLWRIGHT_CARTESIA_API_KEY',
};

/**
 * The key a call uses for a vendor: the account's own first, then the service-wide one (unless the
 * operator switched those off). Null when there is none; the offline engines need none.
 */
export function credentialFor(
  provider: string,
  config: VoiceConfig,
  accountKeys: AccountVendorKeys,
  /** The account credential the agent's stage names; only that one then. */
  name?: string,
): VendorCredential | null {
  if (name !== undefined) return accountKeys.get(`${provider}/${name}`) ?? null;
  const own = accountKeys.get(provider);
  if (own) return own;
  if (!config.serviceVendorKeys) return null;
  switch (provider) {
    case 'openai':
      return config.openAiBaseUrl
        ? { apiKey: config.openAiApiKey ?? '', baseUrl: config.openAiBaseUrl }
        : null;
    case 'deepgram':
      return config.deepgram;
    case 'elevenlabs':
      return config.elevenLabs;
    case 'cartesia':
      return config.cartesia;
    default:
      return null;
  }
}

/** Why a vendor cannot be used for this call, or null when it can. */
export function missingCredential(
  provider: string,
  config: VoiceConfig,
  accountKeys: AccountVendorKeys,
  name?: string,
): string | null {
  if (provider === 'flite' || provider === 'pocketsphinx') return null;
  if (credentialFor(provider, config, accountKeys, name)) return null;
  if (name !== undefined) return `the account has no ${provider} credential named ${name}`;
  return config.serviceVendorKeys
    ? `no account credential and ${settingOf[provider] ?? 'no service key'} is not set`
    : 'no account credential (service-wide keys are switched off)';
}

export function openAiEndpoint(credential: VendorCredential): OpenAiCompatibleEndpoint {
  return {
    baseUrl: credential.baseUrl ?? 'https://api.openai.com/v1',
    ...(credential.apiKey ? { apiKey: credential.apiKey } : {}),
  };
}

/** A vendor's text-to-speech adapter for one call (they hold nothing between replies: cheap to make). */
export function vendorTextToSpeech(
  choice: TtsChoice,
  credential: VendorCredential,
  logger: Logger,
): TextToSpeech {
  const language = choice.language ? { language: choice.language.slice(0, 2) } : {};
  switch (choice.provider) {
    case 'openai':
      return new OpenAiTextToSpeech({ endpoint: openAiEndpoint(credential), model: choice.model ?? 'tts-1' });
    case 'elevenlabs':
      return new ElevenLabsTextToSpeech({
        apiKey: credential.apiKey,
        baseUrl: credential.baseUrl,
        ...(choice.model ? { modelId: choice.model } : {}),
        ...language,
        logger,
      });
    case 'cartesia':
      return new CartesiaTextToSpeech({
        apiKey: credential.apiKey,
        baseUrl: credential.baseUrl,
        ...(choice.model ? { modelId: choice.model } : {}),
        ...language,
        logger,
      });
    case 'deepgram':
      return new DeepgramTextToSpeech({
        apiKey: credential.apiKey,
        baseUrl: credential.baseUrl,
        ...(choice.model ? { model: choice.model } : {}),
        logger,
      });
    default:
      throw new ProviderError(choice.provider, 'not a text-to-speech vendor');
  }
}

/** A vendor's speech-to-text adapter for one call. */
export function vendorSpeechToText(
  choice: SttChoice,
  credential: VendorCredential,
  logger: Logger,
): SpeechToText {
  switch (choice.provider) {
    case 'openai':
      return new OpenAiSpeechToText({
        endpoint: openAiEndpoint(credential),
        model: choice.model ?? 'whisper-1',
        ...(choice.language ? { language: choice.language.slice(0, 2) } : {}),
      });
    case 'deepgram':
      return new DeepgramSpeechToText({
        apiKey: credential.apiKey,
        baseUrl: credential.baseUrl,
        ...(choice.model ? { model: choice.model } : {}),
        ...(choice.language ? { language: choice.language } : {}),
        logger,
      });
    default:
      throw new ProviderError(choice.provider, 'not a speech-to-text vendor');
  }
}

/** A vendor's speech-to-speech adapter for one call. */
export function vendorSpeechToSpeech(
  choice: RealtimeChoice,
  credential: VendorCredential,
  logger: Logger,
  /** A session that answers no ping for this long has failed (the call's liveness rule). */
  pongTimeoutMs?: number,
): SpeechToSpeech {
  return new OpenAiRealtimeSpeechToSpeech({
    ...(pongTimeoutMs ? { pongTimeoutMs } : {}),
    apiKey: credential.apiKey,
    baseUrl: openAiEndpoint(credential).baseUrl,
    turnDetection: choice.turnDetection,
    ...(choice.model ? { model: choice.model } : {}),
    logger,
  });
}
