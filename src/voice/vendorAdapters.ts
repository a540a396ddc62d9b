import { providerAllowPrivateSettingName } from '../admin/credentials.js';
import type { VendorCredential, VoiceConfig } from '../config.js';
import type { RealtimeChoice, SttChoice, TtsChoice } from '../domain/agentVoiceSettings.js';
import type { Logger } from '../logger.js';
import { GuardedConnections } from '../net/guardedConnections.js';
import { checkHost, type HostnameLookup } from '../net/hostGuard.js';
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

/** How the base URLs of a call's credentials are guarded (CALLWRIGHT_PROVIDER_ALLOW_PRIVATE, as it is now). */
export interface VendorConnectionPolicy {
  allowPrivate: boolean;
  /** How names are resolved (tests inject their own resolver); default the system's. */
  lookup?: HostnameLookup | undefined;
}

function guardOptions(credential: VendorCredential, policy: VendorConnectionPolicy) {
  return {
    // The operator's own endpoints (CALLWRIGHT_<VENDOR>_BASE_URL) may be anywhere; still pinned.
    allowPrivate: credential.accountOwned !== true || policy.allowPrivate,
    subject: 'the credential base_url',
    allowPrivateSetting: providerAllowPrivateSettingName,
    ...(policy.lookup ? { lookup: policy.lookup } : {}),
  };
}

/**
 * The guard every connection made with this credential goes through: each connection resolves the
 * host, refuses a private or loopback address of an account's credential unless allowed, and
 * connects to the address it checked (src/net/guardedConnections.ts).
 */
export function connectionsFor(
  credential: VendorCredential,
  policy: VendorConnectionPolicy,
): GuardedConnections {
  return new GuardedConnections(guardOptions(credential, policy));
}

/**
 * Why an account's stored base URL cannot be used now (an IP literal or `localhost` in a refused
 * range while CALLWRIGHT_PROVIDER_ALLOW_PRIVATE is off), or null. Names are judged at connection.
 */
export function refusedBaseUrl(credential: VendorCredential, policy: VendorConnectionPolicy): string | null {
  if (!credential.baseUrl) return null;
  try {
    checkHost(new URL(credential.baseUrl).hostname, guardOptions(credential, policy));
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

export function openAiEndpoint(
  credential: VendorCredential,
  connections?: GuardedConnections,
): OpenAiCompatibleEndpoint {
  return {
    baseUrl: credential.baseUrl ?? 'https://api.openai.com/v1',
    ...(credential.apiKey ? { apiKey: credential.apiKey } : {}),
    ...(connections ? { connections } : {}),
  };
}

/** A vendor's text-to-speech adapter for one call (they hold nothing between replies: cheap to make). */
export function vendorTextToSpeech(
  choice: TtsChoice,
  credential: VendorCredential,
  logger: Logger,
  connections?: GuardedConnections,
): TextToSpeech {
  const language = choice.language ? { language: choice.language.slice(0, 2) } : {};
  const vendorOptions = choice.options ? { vendorOptions: choice.options } : {};
  const guard = connections ? { connections } : {};
  switch (choice.provider) {
    case 'openai':
      return new OpenAiTextToSpeech({
        endpoint: openAiEndpoint(credential, connections),
        model: choice.model ?? 'tts-1',
        ...vendorOptions,
      });
    case 'elevenlabs':
      return new ElevenLabsTextToSpeech({
        apiKey: credential.apiKey,
        baseUrl: credential.baseUrl,
        ...(choice.model ? { modelId: choice.model } : {}),
        ...language,
        ...vendorOptions,
        ...guard,
        logger,
      });
    case 'cartesia':
      return new CartesiaTextToSpeech({
        apiKey: credential.apiKey,
        baseUrl: credential.baseUrl,
        ...(choice.model ? { modelId: choice.model } : {}),
        ...language,
        ...vendorOptions,
        ...guard,
        logger,
      });
    case 'deepgram':
      return new DeepgramTextToSpeech({
        apiKey: credential.apiKey,
        baseUrl: credential.baseUrl,
        ...(choice.model ? { model: choice.model } : {}),
        ...vendorOptions,
        ...guard,
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
  connections?: GuardedConnections,
): SpeechToText {
  const vendorOptions = choice.options ? { vendorOptions: choice.options } : {};
  switch (choice.provider) {
    case 'openai':
      return new OpenAiSpeechToText({
        endpoint: openAiEndpoint(credential, connections),
        model: choice.model ?? 'whisper-1',
        ...(choice.language ? { language: choice.language.slice(0, 2) } : {}),
        ...vendorOptions,
      });
    case 'deepgram':
      return new DeepgramSpeechToText({
        apiKey: credential.apiKey,
        baseUrl: credential.baseUrl,
        ...(choice.model ? { model: choice.model } : {}),
        ...(choice.language ? { language: choice.language } : {}),
        ...vendorOptions,
        ...(connections ? { connections } : {}),
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
  connections?: GuardedConnections,
  /** A session that answers no ping for this long has failed (the call's liveness rule). */
  pongTimeoutMs?: number,
): SpeechToSpeech {
  return new OpenAiRealtimeSpeechToSpeech({
    ...(pongTimeoutMs ? { pongTimeoutMs } : {}),
    apiKey: credential.apiKey,
    baseUrl: openAiEndpoint(credential).baseUrl,
    turnDetection: choice.turnDetection,
    ...(choice.model ? { model: choice.model } : {}),
    ...(choice.options ? { vendorOptions: choice.options } : {}),
    ...(connections ? { connections } : {}),
    logger,
  });
}
